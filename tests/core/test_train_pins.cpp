// The five training loops pinned to the bit: a few steps of each (seq2seq, Transformer, decoder LM,
// induction, extrapolation) at the chapters' model sizes, hashed (every per-step loss, every
// validation figure and every final weight, as raw bits). The pins were computed with the loops as
// they were before they shared nn/train_loop.hpp, so the kit provably changed no bit of training.
// The bits depend on OpenBLAS's kernel (its sums run in another order on another ISA); a pin is
// kept for the kernels measured, and on another kernel only determinism (two runs, same bits) is
// checked, with a message saying so.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/data/corpus.hpp"
#include "attn/models/decoder_lm_train.hpp"
#include "attn/models/seq2seq_train.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/studies/extrapolation.hpp"
#include "attn/studies/induction.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/tensor/rng.hpp"

using namespace attn;

namespace {

// FNV-1a over raw bytes.
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  template <class T> void add(T x) { bytes(&x, sizeof x); }
  void add(const std::vector<float>& v) { bytes(v.data(), v.size() * sizeof(float)); }
  void add(const ParamRegistry& reg) {
    for (const ParamEntry& e : reg.entries()) bytes(e.value, e.size * sizeof(float));
  }
};

template <class Model>
void add_params(Hash& h, Model m) {  // a copy: registering needs non-const tensors
  Model g = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, g);
  h.add(reg);
}

ToyCorpus small_corpus() {
  CorpusConfig cc;
  cc.n_train = 400;
  cc.n_valid = 24;
  cc.n_test = 8;
  cc.max_len = 10;
  return make_toy_corpus(cc);
}

std::uint64_t seq2seq_run() {
  const ToyCorpus c = small_corpus();
  TrainConfig tc;
  tc.steps = 6;
  tc.batch = 16;
  tc.valid_every = 3;
  const TrainResult r = train_seq2seq(config_for("bahdanau", c.source_vocab.size(), c.target_vocab.size()), c, tc);
  Hash h;
  h.add(r.train_losses);
  for (const ValidPoint& v : r.valid) h.add(v.step), h.add(v.loss), h.add(v.bleu);
  h.add(r.best_step);
  add_params(h, r.best);
  return h.h;
}

std::uint64_t transformer_run() {
  const ToyCorpus c = small_corpus();
  TransformerModelConfig cfg;  // the chapter's sizes
  cfg.src_vocab = c.source_vocab.size();
  cfg.tgt_vocab = c.target_vocab.size();
  TransformerTrainConfig tc;
  tc.steps = 5;
  tc.batch = 16;
  tc.warmup = 3;
  tc.valid_every = 2;
  const TransformerTrainResult r = train_transformer(cfg, c, tc);
  Hash h;
  h.add(r.train_losses);
  h.add(r.grad_norms);
  for (const TransformerValidPoint& v : r.valid) h.add(v.step), h.add(v.bleu);
  h.add(r.best_step);
  add_params(h, r.best);
  return h.h;
}

std::uint64_t decoder_lm_run() {
  DecoderLMConfig cfg;  // the chapter's sizes, a shorter context
  cfg.context = 32;
  Rng rng(5);
  std::vector<int> train(4000), valid(800);
  for (int& t : train) t = int(rng.below(std::uint32_t(cfg.vocab)));
  for (int& t : valid) t = int(rng.below(std::uint32_t(cfg.vocab)));
  LmTrainConfig tc;
  tc.steps = 5;
  tc.batch = 2;
  tc.time = 32;
  tc.warmup = 2;
  tc.eval_every = 2;
  tc.eval_windows = 3;
  const LmTrainResult r = train_decoder_lm(cfg, train, valid, tc);
  Hash h;
  for (const LmCurvePoint& p : r.curve) h.add(p.step), h.add(p.train_loss), h.add(p.valid_loss);
  add_params(h, r.model);
  return h.h;
}

std::uint64_t induction_run() {
  InductionTrainConfig cfg;  // the chapter's sizes
  cfg.steps = 12;
  cfg.batch = 8;
  cfg.curve_every = 4;
  cfg.warmup = 5;
  const InductionTrainResult r = train_induction(cfg);
  Hash h;
  h.add(r.loss_curve);
  add_params(h, r.model);
  return h.h;
}

std::uint64_t extrapolation_run(PositionEncoding e) {
  ExtrapolationConfig cfg;  // the chapter's sizes
  cfg.steps = 120;  // past the 100-step window the final loss averages
  cfg.batch = 4;
  Rng init(cfg.seed + std::uint64_t(e));
  PositionModel m(e, cfg, init);
  const double final_loss = train_extrapolation(m, cfg);
  Hash h;
  h.add(final_loss);
  h.add(m.registry());
  return h.h;
}

// Pins by OpenBLAS kernel (computed with the loops before the kit).
const std::map<std::string, std::map<std::string, std::uint64_t>> kPins = {
    {"Cooperlake",
     {{"seq2seq", 0xd6e70317ab87d6a1ull}, {"transformer", 0xc66fb23ec345707bull},
      {"decoder_lm", 0x766e078baa5d8b92ull}, {"induction", 0xc999948ba1a0df55ull},
      {"extrapolation_rope", 0x77e229fc772c637dull}, {"extrapolation_alibi", 0x4047582b8db0e3abull}}},
    {"SkylakeX",
     {{"seq2seq", 0x26a23e55dda55606ull}, {"transformer", 0xc66fb23ec345707bull},
      {"decoder_lm", 0x9b2c8c22e3f02b0bull}, {"induction", 0x36dedbe7567a9142ull},
      {"extrapolation_rope", 0x77e229fc772c637dull}, {"extrapolation_alibi", 0x4047582b8db0e3abull}}},
    {"Haswell",
     {{"seq2seq", 0x077fd8b08521f986ull}, {"transformer", 0x9225fb1824973fc6ull},
      {"decoder_lm", 0x5a18c01d2bc67161ull}, {"induction", 0xba0d5d2a0595cf45ull},
      {"extrapolation_rope", 0xa9938e13c41c67a1ull}, {"extrapolation_alibi", 0x9e3d26c8fd56456bull}}},
};

void check_pin(const std::string& name, std::uint64_t (*run)()) {
  const ScopedBlasThreads one(1);  // the sums' order depends on the thread count too
  const std::uint64_t got = run();
  const std::string kernel = blas_info().kernel;
  MESSAGE(fmt::format("{} on {}: {:#018x}", name, kernel, got));
  const auto k = kPins.find(kernel);
  const bool pinned = k != kPins.end() && k->second.count(name) > 0;
  if (!pinned) {
    MESSAGE("no pin for " << name << " on OpenBLAS kernel " << kernel << ": only determinism checked");
    CHECK(run() == got);
    return;
  }
  CHECK_MESSAGE(got == k->second.at(name), name << ": the training bits changed");
}

}  // namespace

TEST_CASE("training pins: seq2seq (Bahdanau) 6 steps, validation every 3") { check_pin("seq2seq", seq2seq_run); }
TEST_CASE("training pins: Transformer 5 steps, validation every 2") { check_pin("transformer", transformer_run); }
TEST_CASE("training pins: decoder LM 5 steps, evaluation every 2") { check_pin("decoder_lm", decoder_lm_run); }
TEST_CASE("training pins: induction 12 steps, curve every 4") { check_pin("induction", induction_run); }
TEST_CASE("training pins: extrapolation 120 steps, RoPE and ALiBi") {
  check_pin("extrapolation_rope", [] { return extrapolation_run(PositionEncoding::Rope); });
  check_pin("extrapolation_alibi", [] { return extrapolation_run(PositionEncoding::Alibi); });
}
