// The modern decoder's pieces and the whole language model (attn/nn/swiglu.hpp,
// attn/models/decoder_lm.hpp): finite-difference checks in double of SwiGLU, one Pre-Norm block
// (RMSNorm, GQA with RoPE, SwiGLU, residuals) and the whole model on a tiny config; the float forward
// against the double one; cached decoding against recomputation; files.
// Map: swiglu · block grads · model grads · float = double · cache = recompute · RoPE offset · files ·
// the shipped model.
// Tolerance for gradients: relative error < 1e-6 (see test_layers_grad.cpp for the reasoning).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attn/models/decoder_lm.hpp"
#include "attn/models/decoder_lm_train.hpp"
#include "attn/nn/gradcheck.hpp"
#include "attn/nn/swiglu.hpp"
#include "attn/studies/tiny_lm.hpp"
#include "attn/tensor/mask.hpp"

using namespace attn;

namespace {

constexpr double kTol = 1e-6;
// The shipped model's validation loss (nats per token, 32 windows of 256 held-out tokens); re-pin
// after `09_modern_decoder --train` (tests/chapters/test_ch09.cpp pins the printed figure too).
constexpr double kShippedValidLoss = 2.2230;

MatD randn(Rng& rng, std::size_t r, std::size_t c, double scale = 1.0) {
  MatD m({r, c});
  for (auto& x : m) x = rng.normal() * scale;
  return m;
}
double weighted_sum(const MatD& out, const MatD& g) {
  double s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) s += out.data()[i] * g.data()[i];
  return s;
}

// A tiny config with awkward sizes: 3 layers, 4 query heads on 2 K/V heads, d_head 4, d_ff 10.
DecoderLMConfig tiny_config() {
  DecoderLMConfig c;
  c.vocab = 11;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 10;
  c.context = 9;
  return c;
}

// Larger random weights than the init's 0.02, so attention is far from uniform and every path
// carries gradient; norm gains away from 1.
DecoderLMD tiny_model(std::uint64_t seed) {
  DecoderLMD m = to_double(decoder_lm_init(tiny_config(), seed));
  Rng rng(seed + 1);
  visit_decoder_params([&](const std::string&, auto& t) {
    for (auto& x : t) x = rng.normal() * 0.5 + (t.dimension() == 1 ? 1.0 : 0.0);
  }, m);
  return m;
}

#define GRADCHECK(loss, x, gx)                                                  \
  do {                                                                          \
    auto r_ = check_gradient(loss, x, gx);                                      \
    INFO(#x ": rel " << r_.rel_error << ", worst |Δ| " << r_.max_abs_error      \
                     << " at " << r_.worst_index << " of " << r_.count);        \
    CHECK(r_.count > 0);                                                        \
    CHECK(r_.rel_error < kTol);                                                 \
  } while (0)

}  // namespace

TEST_CASE("swiglu: gradients of x, W_gate, W_up, W_down; forward is silu(x·Wg)⊙(x·Wu)·Wd") {
  Rng rng(3);
  SwiGLUD p{{randn(rng, 5, 7, 0.6), {}}, {randn(rng, 5, 7, 0.6), {}}, {randn(rng, 7, 5, 0.6), {}}};
  const MatD x = randn(rng, 3, 5), g = randn(rng, 3, 5);
  MatD y;
  SwiGLUCacheT<double> c;
  swiglu_forward(y, c, x, p);
  // One entry by hand.
  double want = 0;
  for (std::size_t j = 0; j < 7; ++j) {
    double a = 0, u = 0;
    for (std::size_t i = 0; i < 5; ++i) {
      a += x(1, i) * p.gate.w(i, j);
      u += x(1, i) * p.up.w(i, j);
    }
    want += a / (1 + std::exp(-a)) * u * p.down.w(j, 2);
  }
  CHECK(y(1, 2) == doctest::Approx(want).epsilon(1e-12));
  MatD dx = xt::zeros<double>(x.shape());
  SwiGLUD dp = zeros_like(p);
  swiglu_backward(dx, dp, g, x, c, p);
  MatD xv = x;
  auto loss = [&] { MatD yy; SwiGLUCacheT<double> cc; swiglu_forward(yy, cc, xv, p); return weighted_sum(yy, g); };
  GRADCHECK(loss, xv, dx);
  GRADCHECK(loss, p.gate.w, dp.gate.w);
  GRADCHECK(loss, p.up.w, dp.up.w);
  GRADCHECK(loss, p.down.w, dp.down.w);
  CHECK(swiglu_hidden(128) == 344);  // (2/3)·512 = 341.3 -> 344
  CHECK(swiglu_hidden(96, 1) == 256);
  MatD bad = randn(rng, 3, 4);
  CHECK_THROWS_AS(swiglu_forward(y, c, bad, p), ShapeError);
}

TEST_CASE("decoder block: gradients of x and every weight (RMSNorm, GQA + RoPE, SwiGLU, residuals)") {
  DecoderLMD m = tiny_model(5);
  const DecoderLMConfig& cfg = m.cfg;
  Rng rng(9);
  const std::size_t batch = 2, t = 5;  // 2 sequences of 5 positions
  MatD x = randn(rng, batch * t, cfg.d_model), g = randn(rng, batch * t, cfg.d_model);
  DecoderBlockT<double>& p = m.blocks[0];
  DecoderBlockCacheT<double> c;
  MatD y;
  decoder_block_forward(y, c, x, p, cfg, m.rope, batch);
  MatD dx = xt::zeros<double>(x.shape());
  DecoderLMD grad = zeros_like(m);
  decoder_block_backward(dx, grad.blocks[0], g, x, c, p, cfg, m.rope);
  auto loss = [&] {
    MatD yy;
    DecoderBlockCacheT<double> cc;
    decoder_block_forward(yy, cc, x, p, cfg, m.rope, batch);
    return weighted_sum(yy, g);
  };
  GRADCHECK(loss, x, dx);
  GRADCHECK(loss, p.attn_norm.gamma, grad.blocks[0].attn_norm.gamma);
  GRADCHECK(loss, p.w_q.w, grad.blocks[0].w_q.w);
  GRADCHECK(loss, p.w_k.w, grad.blocks[0].w_k.w);
  GRADCHECK(loss, p.w_v.w, grad.blocks[0].w_v.w);
  GRADCHECK(loss, p.w_o.w, grad.blocks[0].w_o.w);
  GRADCHECK(loss, p.ffn_norm.gamma, grad.blocks[0].ffn_norm.gamma);
  GRADCHECK(loss, p.ffn.gate.w, grad.blocks[0].ffn.gate.w);
  GRADCHECK(loss, p.ffn.up.w, grad.blocks[0].ffn.up.w);
  GRADCHECK(loss, p.ffn.down.w, grad.blocks[0].ffn.down.w);
  // Causality: changing the last position of sequence 0 leaves its earlier outputs alone.
  MatD x2 = x;
  x2(t - 1, 0) += 1.0;
  MatD y2;
  DecoderBlockCacheT<double> c2;
  decoder_block_forward(y2, c2, x2, p, cfg, m.rope, batch);
  for (std::size_t r = 0; r + 1 < t; ++r) CHECK(y2(r, 3) == y(r, 3));
  CHECK(y2(t - 1, 3) != y(t - 1, 3));
  for (std::size_t r = t; r < 2 * t; ++r) CHECK(y2(r, 3) == y(r, 3));  // the other sequence too
}

TEST_CASE("decoder LM: gradients of every parameter through the loss; float forward = double") {
  DecoderLMD m = tiny_model(7);
  const std::vector<int> in{1, 4, 2, 9, 0, 3, 3, 10, 5, 6, 7, 8}, tg{4, 2, 9, 0, 3, 1, 10, 5, 6, 7, 8, 2};
  DecoderLMCacheT<double> c;
  const double l0 = decoder_lm_forward(c, m, in, tg, 2);
  DecoderLMD grad = zeros_like(m);
  decoder_lm_backward(grad, c, m);
  auto loss = [&] { DecoderLMCacheT<double> cc; return decoder_lm_forward(cc, m, in, tg, 2); };
  visit_decoder_params([&](const std::string& name, auto& p, auto& gp) {
    auto r = check_gradient(loss, p, gp);
    INFO(name << ": rel " << r.rel_error << " worst |Δ| " << r.max_abs_error);
    CHECK(r.rel_error < kTol);
  }, m, grad);
  // The float model computes the same loss (to float rounding).
  DecoderLM mf;
  mf.cfg = m.cfg;
  mf.rope = m.rope;
  mf.blocks.resize(m.blocks.size());
  visit_decoder_params([](const std::string&, auto& f, const auto& d) { f = xt::cast<float>(d); }, mf, m);
  DecoderLMCacheT<float> cf;
  CHECK(double(decoder_lm_forward(cf, mf, in, tg, 2)) == doctest::Approx(l0).epsilon(1e-5));
}

TEST_CASE("decoder LM: cached decoding gives the logits of recomputation; RoPE offsets; causal masks") {
  DecoderLMConfig cfg = tiny_config();
  cfg.context = 12;
  DecoderLM m = decoder_lm_init(cfg, 4);
  Rng rng(2);
  visit_decoder_params([&](const std::string&, auto& t) { for (auto& x : t) x = rng.normal() * 0.4f + (t.dimension() == 1 ? 1.0f : 0.0f); }, m);
  const std::vector<int> toks{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  // Prefill 4 tokens (query length 4, key length 4), then decode one at a time (query length 1,
  // key length 5 … 10): each step's logits equal the full recomputation of that prefix.
  auto cache = decoder_lm_cache(m);
  Vec got = decoder_lm_feed(m, cache, {toks.begin(), toks.begin() + 4});
  for (std::size_t n = 4; n <= toks.size(); ++n) {
    if (n > 4) got = decoder_lm_feed(m, cache, {toks[n - 1]});
    CHECK(cache[0].len == n);
    const Vec want = decoder_lm_last_logits(m, {toks.begin(), toks.begin() + long(n)});
    const DecoderLMTrace tr = decoder_lm_trace(m, {toks.begin(), toks.begin() + long(n)});
    CAPTURE(n);
    CHECK(float(xt::amax(xt::abs(got - want))()) < 1e-4f);
    CHECK(float(xt::amax(xt::abs(got - xt::view(tr.logits, n - 1, xt::all())))()) < 1e-4f);
  }
  // A second prefill chunk (query length 3 on key length 7) must see the cached keys and itself
  // causally: the mask is (3, 7), query i sees keys 0 … 4 + i.
  auto c2 = decoder_lm_cache(m);
  decoder_lm_feed(m, c2, {toks.begin(), toks.begin() + 4});
  const Vec chunk = decoder_lm_feed(m, c2, {toks.begin() + 4, toks.begin() + 7});
  CHECK(float(xt::amax(xt::abs(chunk - decoder_lm_last_logits(m, {toks.begin(), toks.begin() + 7})))()) < 1e-4f);
  // The bug this guards against: a decoded token's key rotated as if it sat at position 0. The
  // cached key of position 4 is RoPE at 4 of the raw key, which differs from RoPE at 0.
  auto c3 = decoder_lm_cache(m);
  decoder_lm_feed(m, c3, {toks.begin(), toks.begin() + 4});
  decoder_lm_feed(m, c3, {toks[4]});
  auto c4 = decoder_lm_cache(m);
  decoder_lm_feed(m, c4, {toks.begin(), toks.begin() + 5});
  const std::size_t w = c3[1].k.shape(1);
  for (std::size_t j = 0; j < w; ++j) CHECK(c3[1].k(4, j) == doctest::Approx(c4[1].k(4, j)).epsilon(1e-4));
  const Mat mask = causal_mask(3, 7);
  CHECK(mask(0, 4) == 0.0f);
  CHECK(std::isinf(mask(0, 5)));
  CHECK(mask(2, 6) == 0.0f);
  CHECK_THROWS_AS(decoder_lm_feed(m, cache, {1, 2, 3}), ShapeError);  // past the context of 12
}

TEST_CASE("decoder LM: parameter count, checkpoint round trip, bad files") {
  DecoderLMConfig cfg;  // the chapter's shape
  DecoderLM m = decoder_lm_init(cfg, 1);
  const std::size_t d = 128, dff = 344, kv = 2 * 16;
  const std::size_t per_block = 2 * d + d * d + 2 * d * kv + d * d + 3 * d * dff;
  CHECK(parameter_count(m) == 512 * d + 5 * per_block + d + d * 512);
  const std::string path = (std::filesystem::temp_directory_path() / "attn_test_decoder_lm.safetensors").string();
  save_decoder_lm(path, m, {{"note", "test"}});
  Metadata meta;
  DecoderLM back = load_decoder_lm(path, &meta);
  CHECK(meta.at("note") == "test");
  CHECK(meta.at("rope_pairing") == "interleaved");
  CHECK(back.cfg.n_kv_heads == 2);
  CHECK(back.blocks[3].ffn.down.w == m.blocks[3].ffn.down.w);
  CHECK(back.tok_emb == m.tok_emb);
  {  // decoder_lm_bytes: the very bytes save_decoder_lm wrote (a set of files writes them itself)
    std::ifstream in(path, std::ios::binary);
    const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(decoder_lm_bytes(m, {{"note", "test"}}, path) == written);
    CHECK(decoder_lm_bytes(m, {{"note", "other"}}, path) != written);
  }
  write_safetensors(path, {{"x", TensorF32{{1}, {1.0f}}}}, {});
  CHECK_THROWS_AS(load_decoder_lm(path), SafetensorsError);
  std::remove(path.c_str());
  CHECK_THROWS_AS(load_decoder_lm(path), SafetensorsError);
  DecoderLMConfig badc = cfg;
  badc.n_kv_heads = 3;
  CHECK_THROWS_AS(check_config(badc), std::invalid_argument);
  CHECK(config_from_json(config_json(cfg)).d_ff == cfg.d_ff);
}

TEST_CASE("shipped chapter 09 model: files load, validation loss pinned and equal to the curve's last point") {
  const TinyLm lm = load_tiny_lm();
  CHECK(lm.tokenizer.vocab_size() == 512);
  CHECK(parameter_count(lm.model) == 997760);
  CHECK(lm.metadata.at("rope_pairing") == "interleaved");
  // 32 windows of 256 held-out tokens: the figure chapter 09 prints and training recorded last.
  const double loss = decoder_lm_eval_loss(lm.model, lm.valid_tokens, 32, 256);
  CHECK(loss == doctest::Approx(kShippedValidLoss).epsilon(0.0005));
  CHECK(loss == doctest::Approx(lm.curve.back().valid_loss).epsilon(1e-5));
  // The trace API chapter 10 reads: every layer's weights and the loss of the sequence.
  const std::vector<int> ids = bpe_encode(lm.tokenizer, "And God said, Let there be light");
  const DecoderLMTrace tr = decoder_lm_trace(lm.model, ids);
  CHECK(shape_of(tr.attn_weights) == Shape{5, 8, ids.size(), ids.size()});
  CHECK(tr.loss > 0.0);
  CHECK(std::isfinite(tr.loss));
}

TEST_CASE("training: the loss falls on a repetitive text, and the same seed gives the same bits") {
  std::vector<int> toks;
  for (int i = 0; i < 400; ++i) toks.push_back((i * 7) % 11);  // a cycle the model can learn
  DecoderLMConfig cfg = tiny_config();
  LmTrainConfig tc;
  tc.steps = 30;
  tc.batch = 4;
  tc.time = 8;
  tc.lr = 1e-2;
  tc.min_lr = 1e-3;
  tc.warmup = 5;
  tc.eval_every = 10;
  tc.eval_windows = 4;
  const LmTrainResult a = train_decoder_lm(cfg, toks, toks, tc), b = train_decoder_lm(cfg, toks, toks, tc);
  CHECK(a.curve.size() == 3);
  CHECK(a.curve.back().valid_loss < 0.5 * std::log(11.0));
  CHECK(a.model.tok_emb == b.model.tok_emb);
  CHECK(a.model.blocks[1].ffn.down.w == b.model.blocks[1].ffn.down.w);
  tc.seed = 2;
  const LmTrainResult c = train_decoder_lm(cfg, toks, toks, tc);
  CHECK(c.model.tok_emb != a.model.tok_emb);
}
