// The "done when" smoke training, on the shipped code: chapter 00's model (the GRU encoder–decoder
// without attention, attn/models/seq2seq.hpp) trained by the chapters' own loop (train_seq2seq,
// attn/models/seq2seq_train.hpp, on the kit of attn/nn/train_loop.hpp) at small sizes, on short
// sentences of the toy corpus: Adam, teacher forcing and clipping must halve its teacher-forced
// validation loss within 300 steps. Sizes are tiny so it runs in seconds.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "attn/data/corpus.hpp"
#include "attn/models/seq2seq_train.hpp"

using namespace attn;

namespace {

struct SmokeResult {
  double before = 0.0, after = 0.0;
  std::vector<float> train_losses;
};

SmokeResult smoke_train(std::size_t steps) {
  CorpusConfig cc;
  cc.seed = 2024;
  cc.n_train = 3000;
  cc.n_valid = 200;
  cc.n_test = 0;
  cc.min_len = 4;
  cc.max_len = 8;  // short sentences: one context vector is enough to learn them
  const ToyCorpus c = make_toy_corpus(cc);
  Seq2SeqConfig cfg = config_for("no_attention", c.source_vocab.size(), c.target_vocab.size());
  cfg.emb = 16;
  cfg.dec_hidden = 48;
  TrainConfig tc;
  tc.steps = steps;
  tc.batch = 32;
  tc.lr = 1e-2f;
  tc.cosine = false;
  tc.valid_every = 0;  // validate at the last step only
  tc.seed = 7;
  SmokeResult r;
  Rng init(tc.seed);  // the initialisation train_seq2seq starts from
  r.before = mean_loss(seq2seq_init(cfg, init), c.valid, c.source_vocab, c.target_vocab);
  const TrainResult t = train_seq2seq(cfg, c, tc);
  REQUIRE(t.valid.size() == 1);
  r.after = t.valid.back().loss;
  r.train_losses = t.train_losses;
  return r;
}

}  // namespace

TEST_CASE("smoke training: chapter 00's GRU seq2seq halves its validation loss within 300 steps") {
  const auto t0 = std::chrono::steady_clock::now();
  const SmokeResult r = smoke_train(300);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("smoke training: validation loss " << r.before << " -> " << r.after << " ("
          << 100.0 * (1.0 - r.after / r.before) << "% lower) in 300 steps, " << secs << " s");
  CHECK(std::isfinite(r.after));
  CHECK(r.after <= 0.5 * r.before);
}

TEST_CASE("smoke training: the same seed gives the same losses, bit for bit") {
  const SmokeResult a = smoke_train(5), b = smoke_train(5);
  CHECK(a.train_losses.size() == 5);
  CHECK(a.train_losses == b.train_losses);
  CHECK(a.after == b.after);
}
