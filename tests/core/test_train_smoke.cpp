// The "done when" smoke training: a fixed-seed small GRU encoder–decoder (no attention) on short
// sentences of the toy corpus, trained with Adam, teacher forcing and clipping; its validation loss
// must fall by at least half within a few hundred steps. Sizes are tiny so it runs in seconds.
// The model is written out here from the layers' forward/backward calls, the way chapter 00 will.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "attn/data/batching.hpp"
#include "attn/data/corpus.hpp"
#include "attn/nn/embedding.hpp"
#include "attn/nn/gru.hpp"
#include "attn/nn/linear.hpp"
#include "attn/nn/loss.hpp"
#include "attn/nn/optim.hpp"
#include "attn/tensor/params.hpp"

using namespace attn;

namespace {

// (B·T, C) rows <-> (B, T, C)
Tensor3 rows_to_3d(const Mat& m, std::size_t b, std::size_t t) {
  Tensor3 out({b, t, m.shape(1)});
  std::copy(m.begin(), m.end(), out.begin());
  return out;
}
Mat rows_of(const Tensor3& x) {
  Mat out({x.shape(0) * x.shape(1), x.shape(2)});
  std::copy(x.begin(), x.end(), out.begin());
  return out;
}

// Sizes: E embedding, H hidden; B batch, S source length, T target length, V vocabularies.
struct Seq2Seq {
  Mat src_emb, tgt_emb;  // (Vs, E), (Vt, E)
  Gru enc, dec;          // E -> H
  Linear out;            // H -> Vt

  Seq2Seq(std::size_t vs, std::size_t vt, std::size_t e, std::size_t h, Rng& rng)
      : src_emb(embedding_init(vs, e, rng, 0.1f)), tgt_emb(embedding_init(vt, e, rng, 0.1f)),
        enc(gru_init(e, h, rng)), dec(gru_init(e, h, rng)), out(linear_init(h, vt, rng)) {}

  void register_all(ParamRegistry& reg, Seq2Seq& g) {
    reg.add("src_emb", src_emb, g.src_emb);
    reg.add("tgt_emb", tgt_emb, g.tgt_emb);
    register_params(reg, "enc", enc, g.enc);
    register_params(reg, "dec", dec, g.dec);
    register_params(reg, "out", out, g.out);
  }

  // Everything the backward needs.
  struct Tape {
    Tensor3 xs, xt, hs_enc, hs_dec;
    Mat h0, probs;
    GruSeqCacheT<float> enc_cache, dec_cache;
  };

  // Mean cross-entropy over the batch's target tokens (teacher forcing).
  float forward(Tape& tp, const Batch& b) {
    const std::size_t h = gru_hidden_size(enc);
    Mat e;
    embedding_forward(e, b.src, src_emb);  // (B·S, E)
    tp.xs = rows_to_3d(e, b.size, b.src_len);
    gru_sequence_forward(tp.hs_enc, tp.enc_cache, tp.xs, Mat(xt::zeros<float>({b.size, h})), enc);
    tp.h0 = xt::view(tp.hs_enc, xt::all(), b.src_len - 1, xt::all());  // c = h_S, the one context vector
    embedding_forward(e, b.tgt_in, tgt_emb);
    tp.xt = rows_to_3d(e, b.size, b.tgt_len);
    gru_sequence_forward(tp.hs_dec, tp.dec_cache, tp.xt, tp.h0, dec);
    Mat logits;
    linear_forward(logits, rows_of(tp.hs_dec), out);  // (B·T, Vt)
    return cross_entropy_forward(tp.probs, logits, b.tgt_out, Vocab::pad);
  }

  void backward(Seq2Seq& g, const Tape& tp, const Batch& b) {
    Mat dlogits = xt::zeros<float>(tp.probs.shape());
    cross_entropy_backward(dlogits, tp.probs, b.tgt_out, Vocab::pad);
    Mat dhs = xt::zeros<float>({b.size * b.tgt_len, gru_hidden_size(dec)});
    linear_backward(dhs, g.out, dlogits, rows_of(tp.hs_dec), out);
    Tensor3 dxt = xt::zeros<float>(tp.xt.shape());
    Mat dh0 = xt::zeros<float>(tp.h0.shape());
    gru_sequence_backward(dxt, dh0, g.dec, rows_to_3d(dhs, b.size, b.tgt_len), tp.dec_cache, dec);
    embedding_backward(g.tgt_emb, rows_of(dxt), b.tgt_in);
    // forward: h0 = hs_enc[:, S−1]
    Tensor3 dhs_enc = xt::zeros<float>(tp.hs_enc.shape());
    xt::view(dhs_enc, xt::all(), b.src_len - 1, xt::all()) = dh0;
    Tensor3 dxs = xt::zeros<float>(tp.xs.shape());
    Mat no_dh0;
    gru_sequence_backward(dxs, no_dh0, g.enc, dhs_enc, tp.enc_cache, enc);
    embedding_backward(g.src_emb, rows_of(dxs), b.src);
  }
};

double mean_loss(Seq2Seq& m, const std::vector<Batch>& batches) {
  double total = 0.0;
  std::size_t tokens = 0;
  Seq2Seq::Tape tp;
  for (const auto& b : batches) {
    const std::size_t n = count_targets(b.tgt_out, Vocab::pad);
    total += double(m.forward(tp, b)) * double(n);
    tokens += n;
  }
  return total / double(tokens);
}

struct SmokeResult { double before, after; std::vector<float> train_losses; };

SmokeResult smoke_train(int steps) {
  CorpusConfig cfg;
  cfg.seed = 2024;
  cfg.n_train = 3000;
  cfg.n_valid = 200;
  cfg.n_test = 0;
  cfg.min_len = 4;
  cfg.max_len = 8;  // short sentences: one context vector is enough to learn them
  ToyCorpus c = make_toy_corpus(cfg);
  Rng rng(7);
  Seq2Seq m(c.source_vocab.size(), c.target_vocab.size(), 16, 48, rng);
  Seq2Seq g = m;  // gradient buffers of the same shapes
  ParamRegistry reg;
  m.register_all(reg, g);
  reg.zero_grad();
  Adam adam(reg, AdamConfig{1e-2f});
  const auto valid = make_batches(c.valid, c.source_vocab, c.target_vocab, 64);
  SmokeResult r;
  r.before = mean_loss(m, valid);
  Rng order(11);
  std::vector<Batch> train;
  std::size_t next = 0;
  Seq2Seq::Tape tp;
  for (int step = 0; step < steps; ++step) {
    if (next == train.size()) { train = make_batches(c.train, c.source_vocab, c.target_vocab, 32, &order); next = 0; }
    const Batch& b = train[next++];
    reg.zero_grad();
    r.train_losses.push_back(m.forward(tp, b));
    m.backward(g, tp, b);
    clip_grad_norm(reg, 1.0);
    adam.step();
  }
  r.after = mean_loss(m, valid);
  return r;
}

}  // namespace

TEST_CASE("smoke training: a small GRU seq2seq halves its validation loss within 300 steps") {
  const auto t0 = std::chrono::steady_clock::now();
  SmokeResult r = smoke_train(300);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("smoke training: validation loss " << r.before << " -> " << r.after << " ("
          << 100.0 * (1.0 - r.after / r.before) << "% lower) in 300 steps, " << secs << " s");
  CHECK(std::isfinite(r.after));
  CHECK(r.after <= 0.5 * r.before);
}

TEST_CASE("smoke training: the same seed gives the same losses, bit for bit") {
  SmokeResult a = smoke_train(5), b = smoke_train(5);
  CHECK(a.train_losses == b.train_losses);
  CHECK(a.after == b.after);
}
