// Training, checkpoints and shipped-file lookup for the seq2seq models (see attn/models/seq2seq_train.hpp).
#include "attn/models/seq2seq_train.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "attn/data/batching.hpp"
#include "attn/data/data_files.hpp"
#include "attn/nn/loss.hpp"
#include "attn/nn/optim.hpp"
#include "attn/nn/schedule.hpp"
#include "attn/nn/train_loop.hpp"
#include "attn/models/seq2seq_eval.hpp"
#include "attn/tensor/memory.hpp"
#include "pair_training.hpp"

namespace attn {

CorpusConfig chapter_corpus_config() {
  CorpusConfig c;  // seed 1, 20000 / 500 / 1200 pairs, lengths 4–60
  return c;
}

double mean_loss(const Seq2Seq& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                 const Vocab& tgt_vocab) {
  double total = 0.0;
  std::size_t tokens = 0;
  Seq2SeqTape tape;
  for (const Batch& b : make_batches(pairs, src_vocab, tgt_vocab, 64)) {
    const std::size_t n = count_targets(b.tgt_out, Vocab::pad);
    total += double(seq2seq_forward(tape, m, b)) * double(n);
    tokens += n;
  }
  return tokens ? total / double(tokens) : 0.0;
}

namespace {
double valid_bleu(const Seq2Seq& m, const ToyCorpus& c) {
  const auto trans = translate_pairs(m, c.valid, c.source_vocab, c.target_vocab);
  std::vector<Tokens> hyps, refs;
  for (std::size_t i = 0; i < trans.size(); ++i) {
    hyps.push_back(c.target_vocab.decode(trans[i].ids));
    refs.push_back(c.valid[i].tgt);
  }
  return 100.0 * corpus_bleu(hyps, refs).bleu;
}
}  // namespace

TrainResult train_seq2seq(const Seq2SeqConfig& cfg, const ToyCorpus& corpus, const TrainConfig& tc) {
  const auto t0 = std::chrono::steady_clock::now();
  SingleThreadBlas one_thread;  // tiny matrices: threads cost more than they gain
  const RetainFreedMemory keep_pages;  // each step reuses the last one's memory (attn/tensor/memory.hpp)
  Rng init_rng(tc.seed);
  Seq2Seq m = seq2seq_init(cfg, init_rng), g = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, g);
  Adam adam(reg, AdamConfig{tc.lr});
  const Schedule schedule = tc.cosine ? Schedule::warmup_cosine(tc.lr, 0, std::int64_t(tc.steps), tc.lr / 10.0)
                                      : Schedule::constant(tc.lr);
  PairTraining<Seq2Seq, Seq2SeqTape> pairs(corpus, tc.batch, tc.seed, m);
  TrainResult res;
  TrainLoop loop(tc.steps, tc.clip, tc.valid_every);
  loop.lr = [&](std::size_t step) { return learning_rate(schedule, std::int64_t(step)); };
  loop.forward_backward = [&](std::size_t) {
    return pairs.step([&](Seq2SeqTape& tape, const Batch& b) { return seq2seq_forward(tape, m, b); },
                      [&](const Seq2SeqTape& tape, const Batch& b) { seq2seq_backward(g, tape, m, b); });
  };
  loop.after_step = [&](const TrainStep& s) {
    res.train_losses.push_back(float(s.loss));
    if (tc.on_step) tc.on_step(s.step, s.loss, pairs.tokens());
  };
  loop.validate = [&](std::size_t step) {
    res.valid.push_back({step, mean_loss(m, corpus.valid, corpus.source_vocab, corpus.target_vocab),
                         valid_bleu(m, corpus)});
    pairs.best.offer(res.valid.back().bleu, step, m);
  };
  run_train_loop(loop, reg, {&adam});
  res.best_bleu = pairs.best.score();
  res.best_step = pairs.best.step();
  res.best = pairs.best.take();
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

void save_seq2seq(const std::string& path, const Seq2Seq& m, const Metadata& metadata) {
  TensorMap tensors;
  visit_params(m, [&](const std::string& name, const auto& t) {
    if (t.size() > 0) tensors[name] = TensorF32{shape_of(t), std::vector<float>(t.begin(), t.end())};  // empty: unused
  });
  Metadata meta = metadata;
  meta["model"] = model_name(m.cfg);
  write_safetensors(path, tensors, meta);
}

Seq2Seq load_seq2seq(const std::string& path, const std::string& name, std::size_t src_vocab, std::size_t tgt_vocab,
                     Metadata* metadata) {
  require_checkpoint_file(path);
  Rng rng(0);
  Seq2Seq m = seq2seq_init(config_for(name, src_vocab, tgt_vocab), rng);
  std::vector<TensorSlot> slots;
  visit_params(m, [&](const std::string& tensor, auto& t) {
    if (t.size() > 0) slots.push_back({tensor, shape_of(t), t.data()});
  });
  Metadata meta;
  load_tensors(path, slots, /*allow_extra=*/false, &meta, {{"model", name}});
  if (metadata) *metadata = meta;
  return m;
}

std::string shipped_checkpoint(const std::string& chapter, const std::string& name) {
  // Found where data_files.hpp looks; if absent, the path --train would write it to.
  const std::string rel = "ch" + chapter + "/" + name + ".safetensors";
  if (const auto found = find_data_file(rel)) return *found;
  return data_dir() + "/" + rel;
}

std::string trained_checkpoint(const std::string& chapter, const std::string& name) {
  return data_dir() + "/ch" + chapter + "/" + name + ".safetensors";
}

}  // namespace attn
