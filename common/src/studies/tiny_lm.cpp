// Chapter 09's shipped language model: loading and training (see attn/studies/tiny_lm.hpp).
#include "attn/studies/tiny_lm.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attn/data/data_files.hpp"
#include "attn/data/text_corpus.hpp"
#include "attn/tensor/openblas.hpp"

namespace attn {

namespace {
std::string locate(const std::string& dir, const std::string& name) {
  if (!dir.empty()) return dir + "/" + name;
  auto p = find_data_file("ch09/" + name);
  if (!p) throw std::runtime_error("missing shipped file data/ch09/" + name + " (run 09_modern_decoder --train to make it)");
  return *p;
}
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f << text;
    if (!f) throw std::runtime_error("writing " + tmp + " failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot move " + tmp + " to " + path);
  }
}
}  // namespace

void write_training_curve(const std::string& path, const std::vector<LmCurvePoint>& curve) {
  std::ostringstream s;
  s << "step,train_loss,valid_loss\n";
  for (const auto& p : curve) s << p.step << "," << p.train_loss << "," << p.valid_loss << "\n";
  write_atomically(path, s.str());
}

std::vector<LmCurvePoint> read_training_curve(const std::string& path) {
  std::istringstream in(read_text_file(path));
  std::string line;
  std::getline(in, line);
  if (line != "step,train_loss,valid_loss") throw std::runtime_error(path + ": not a training curve (bad header)");
  std::vector<LmCurvePoint> out;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    LmCurvePoint p{};
    char c1 = 0, c2 = 0;
    std::istringstream ls(line);
    if (!(ls >> p.step >> c1 >> p.train_loss >> c2 >> p.valid_loss) || c1 != ',' || c2 != ',')
      throw std::runtime_error(path + ": bad line \"" + line + "\"");
    out.push_back(p);
  }
  if (out.empty()) throw std::runtime_error(path + ": no points");
  return out;
}

TinyLm load_tiny_lm(const std::string& dir) {
  TinyLm lm;
  lm.tokenizer = bpe_load(locate(dir, "tokenizer.json"));
  lm.model = load_decoder_lm(locate(dir, "decoder_lm.safetensors"), &lm.metadata);
  if (lm.model.cfg.vocab != lm.tokenizer.vocab_size())
    throw std::runtime_error("the model's vocabulary (" + std::to_string(lm.model.cfg.vocab) +
                             ") differs from the tokenizer's (" + std::to_string(lm.tokenizer.vocab_size()) + ")");
  lm.valid_text = read_text_file(locate(dir, "kjv_valid.txt"));
  lm.valid_tokens = bpe_encode(lm.tokenizer, lm.valid_text);
  lm.curve = read_training_curve(locate(dir, "training_curve.csv"));
  return lm;
}

TinyLmTrainReport train_tiny_lm(const TinyLmTrainSetup& s) {
  TinyLmTrainReport r;
  const KjvSplit split = kjv_split(read_text_file(s.bible_dump));
  r.chapters_train = split.chapters_train;
  r.chapters_valid = split.chapters_valid;
  r.train_bytes = split.train.size();
  r.valid_bytes = split.valid.size();
  auto t0 = std::chrono::steady_clock::now();
  r.lm.tokenizer = bpe_train(split.train, s.vocab);
  r.tokenizer_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<int> train_tokens = bpe_encode(r.lm.tokenizer, split.train);
  r.train_tokens = train_tokens.size();
  r.lm.valid_text = split.valid;
  r.lm.valid_tokens = bpe_encode(r.lm.tokenizer, split.valid);
  DecoderLMConfig cfg = s.model;
  cfg.vocab = r.lm.tokenizer.vocab_size();
  const ScopedBlasThreads threads(s.blas_threads);
  const int blas_threads = blas_info().threads;
  LmTrainResult tr = train_decoder_lm(cfg, train_tokens, r.lm.valid_tokens, s.train);
  r.train_seconds = tr.seconds;
  r.lm.model = std::move(tr.model);
  r.lm.curve = tr.curve;
  r.lm.metadata = {{"seed", std::to_string(s.train.seed)},
                   {"steps", std::to_string(s.train.steps)},
                   {"batch", std::to_string(s.train.batch)},
                   {"time", std::to_string(s.train.time)},
                   {"lr", std::to_string(s.train.lr)},
                   {"train_seconds", std::to_string(tr.seconds)},
                   {"train_tokens_seen", std::to_string(std::size_t(tr.tokens))},
                   {"blas_threads", std::to_string(blas_threads)},
                   {"corpus", "King James Bible (1611, public domain), Debian bible-kjv-text; every 20th chapter held out"}};
  bpe_save(s.out_dir + "/tokenizer.json", r.lm.tokenizer);
  write_atomically(s.out_dir + "/kjv_valid.txt", split.valid);
  write_training_curve(s.out_dir + "/training_curve.csv", tr.curve);
  save_decoder_lm(s.out_dir + "/decoder_lm.safetensors", r.lm.model, r.lm.metadata);
  return r;
}

}  // namespace attn
