// Chapter 09's shipped language model: loading and training (see attn/studies/tiny_lm.hpp).
#include "attn/studies/tiny_lm.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attn/data/data_files.hpp"
#include "attn/data/output_file.hpp"
#include "attn/data/text_corpus.hpp"
#include "attn/tensor/openblas.hpp"

namespace attn {

namespace {
constexpr const char* kFiles[] = {"tokenizer.json", "kjv_valid.txt", "training_curve.csv"};
constexpr const char* kAllFiles[] = {"tokenizer.json", "decoder_lm.safetensors", "kjv_valid.txt", "training_curve.csv"};
// The model's metadata key holding the fingerprint of one of the other three files of its set.
std::string set_key(const std::string& file) { return "set_fnv1a64_" + file; }

// The folder holding the set: dir, or a data folder's ch09/. The four files are read from that
// one folder, never gathered file by file from several.
std::string set_folder(const std::string& dir) {
  if (!dir.empty()) return dir;
  check_data_dir_variable();
  // The first data folder holding any of the four: all four are read from it, a missing one is
  // said as missing there, never taken from another folder.
  for (const DataPlace& place : data_places()) {
    const std::string folder = place.dir + "/ch09";
    std::error_code ec;
    for (const char* f : kAllFiles)
      if (std::filesystem::is_regular_file(folder + "/" + f, ec)) return folder;
  }
  throw std::runtime_error("missing shipped file data/ch09/decoder_lm.safetensors (run 09_modern_decoder --train to make it)");
}

std::string curve_text(const std::vector<LmCurvePoint>& curve) {
  std::ostringstream s;
  s << "step,train_loss,valid_loss\n";
  for (const auto& p : curve) s << p.step << "," << p.train_loss << "," << p.valid_loss << "\n";
  return s.str();
}

// The files of one training run belong together: the model (renamed into place first) records a
// fingerprint of each other file, so a set left mixed by a run killed between two renames, or
// assembled from two runs, is refused. A model without fingerprints is the legacy shipped set,
// made before they existed: accepted when none of the three is recorded.
void check_set(const std::string& folder, const Metadata& meta) {
  std::size_t recorded = 0;
  for (const char* f : kFiles) recorded += meta.count(set_key(f));
  if (recorded == 0) return;
  const std::string model = folder + "/decoder_lm.safetensors";
  for (const char* f : kFiles) {
    const std::string path = folder + "/" + f;
    if (!meta.count(set_key(f)))
      throw std::runtime_error(model + " records the fingerprints of some files of its set but not of " + f);
    const std::string have = fnv1a64_hex(read_text_file(path));
    if (have != meta.at(set_key(f)))
      throw std::runtime_error(path + " does not belong to " + model + " (fingerprint " + have + ", the model was "
                               "trained with " + meta.at(set_key(f)) + "): the files come from different --train "
                               "runs, or a run was stopped while replacing them. Run 09_modern_decoder --train "
                               "again, or restore the shipped data/ch09/ files");
  }
}
}  // namespace

void write_training_curve(const std::string& path, const std::vector<LmCurvePoint>& curve) {
  write_file_atomically(path, curve_text(curve));
}

std::vector<LmCurvePoint> read_training_curve(const std::string& path) {
  std::istringstream in(read_text_file(path));
  std::string line;
  std::getline(in, line);
  if (line != "step,train_loss,valid_loss")
    throw std::runtime_error("training curve " + shown_path(path) + ": line 1 should be \"step,train_loss,valid_loss\", "
                             "found \"" + shown_path(line.substr(0, 80)) + "\"");
  std::vector<LmCurvePoint> out;
  for (std::size_t line_no = 2; std::getline(in, line); ++line_no) {
    if (line.empty()) continue;
    LmCurvePoint p{};
    char c1 = 0, c2 = 0;
    std::istringstream ls(line);
    if (!(ls >> p.step >> c1 >> p.train_loss >> c2 >> p.valid_loss) || c1 != ',' || c2 != ',')
      throw std::runtime_error("training curve " + shown_path(path) + ": line " + std::to_string(line_no) +
                               " should be STEP,TRAIN_LOSS,VALID_LOSS (three numbers), found \"" +
                               shown_path(line.substr(0, 80)) + "\"");
    out.push_back(p);
  }
  if (out.empty())
    throw std::runtime_error("training curve " + shown_path(path) + ": expected one line per evaluation after the "
                             "header, found none");
  return out;
}

TinyLm load_tiny_lm(const std::string& dir) {
  TinyLm lm;
  const std::string folder = set_folder(dir);
  auto locate = [&](const std::string&, const std::string& name) { return folder + "/" + name; };
  for (const char* f : kAllFiles) {
    std::error_code ec;
    const std::string path = locate(dir, f);
    if (std::filesystem::is_regular_file(path, ec)) continue;
    // A folder or a device where the file should be is said as what it is, not as missing.
    std::string what = "missing " + path;
    if (std::filesystem::exists(path, ec))
      what = path + (std::filesystem::is_directory(path, ec) ? " is a folder" : " is not a regular file") +
             ", not chapter 09's " + f;
    throw std::runtime_error(what + " (chapter 09's four files are read from one folder, " + folder + ")");
  }
  lm.tokenizer = bpe_load(locate(dir, "tokenizer.json"));
  lm.model = load_decoder_lm(locate(dir, "decoder_lm.safetensors"), &lm.metadata);
  check_set(folder, lm.metadata);
  if (lm.model.cfg.vocab != lm.tokenizer.vocab_size())
    throw std::runtime_error("the model's vocabulary (" + std::to_string(lm.model.cfg.vocab) +
                             ") differs from the tokenizer's (" + std::to_string(lm.tokenizer.vocab_size()) + ")");
  lm.valid_text = read_text_file(locate(dir, "kjv_valid.txt"));
  lm.valid_tokens = bpe_encode(lm.tokenizer, lm.valid_text);
  if (lm.valid_tokens.size() < lm.model.cfg.context + 1)
    throw std::runtime_error(locate(dir, "kjv_valid.txt") + ": the held-out text gives " +
                             std::to_string(lm.valid_tokens.size()) + " tokens, fewer than one window of " +
                             std::to_string(lm.model.cfg.context + 1) + " to measure the validation loss on");
  lm.curve = read_training_curve(locate(dir, "training_curve.csv"));
  return lm;
}

TinyLmTrainReport train_tiny_lm(const TinyLmTrainSetup& s) {
  TinyLmTrainReport r;
  const std::string model_path = s.out_dir + "/decoder_lm.safetensors";
  for (const std::string& f : {std::string("decoder_lm.safetensors"), std::string("tokenizer.json"),
                               std::string("kjv_valid.txt"), std::string("training_curve.csv")})
    check_output_file(s.out_dir + "/" + f, "--train", /*new_folder=*/true);  // before the work, not after
  prepare_output_folder(model_path);  // data/ch09/ may be missing (one level, never more)
  KjvSplit split;
  try {
    split = kjv_split(read_text_file(s.bible_dump));
  } catch (const std::invalid_argument& e) {  // named by the file, not by the function that read it
    std::string why = e.what();
    if (why.rfind("kjv_split: ", 0) == 0) why = why.substr(11);
    throw std::runtime_error(s.bible_dump + ": " + why + " (the corpus is the Bible as `bible -f Gen1:1-Rev22:21` prints it: one verse a line, "
                             "after its reference, \"Ge1:1 In the …\")");
  }
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
  const std::size_t window = s.train.time + 1;
  if (train_tokens.size() < window || r.lm.valid_tokens.size() < window)
    throw std::runtime_error(s.bible_dump + ": too short to train on: its training part gives " +
                             std::to_string(train_tokens.size()) + " tokens and its held-out part (every 20th "
                             "chapter) " + std::to_string(r.lm.valid_tokens.size()) + ", and each needs at least one "
                             "window of " + std::to_string(window) + " tokens; give a longer --corpus");
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
  // One set: every file staged first, then renamed into place, the model first (check_set).
  const std::string bytes[] = {bpe_json(r.lm.tokenizer), split.valid, curve_text(tr.curve)};
  for (std::size_t k = 0; k < 3; ++k) r.lm.metadata[set_key(kFiles[k])] = fnv1a64_hex(bytes[k]);
  OutputSet set;
  set.add(model_path, decoder_lm_bytes(r.lm.model, r.lm.metadata, model_path));
  for (std::size_t k = 0; k < 3; ++k) set.add(s.out_dir + "/" + kFiles[k], bytes[k]);
  set.commit();
  return r;
}

}  // namespace attn
