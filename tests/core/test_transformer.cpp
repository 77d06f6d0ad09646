// The Transformer of attn/models/transformer.hpp: finite-difference checks in double of the encoder
// layer, the decoder layer and the whole model on a tiny config, for Post-Norm and Pre-Norm, tied
// and untied output; the parameter visitor (names, counts, registry, float↔double); the causal
// mask (a later target token cannot change an earlier one's output).
// Tolerance: relative error < 1e-6 (a key bias, whose true gradient is 0: absolute error < 1e-9), as in test_layers_grad.cpp (central differences with ε = 1e-5
// in double are accurate to ~1e-10 on these smooth functions; ReLU kinks are avoided by random
// inputs that almost surely do not sit within ε of 0).
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "attn/models/transformer.hpp"
#include "attn/models/transformer_decode.hpp"
#include "attn/nn/gradcheck.hpp"

using namespace attn;

namespace {

constexpr double kTol = 1e-6;

Tensor3D rand3(Rng& rng, std::size_t a, std::size_t b, std::size_t c, double scale = 1.0) {
  Tensor3D t({a, b, c});
  for (auto& x : t) x = rng.normal() * scale;
  return t;
}
double weighted_sum(const Tensor3D& out, const Tensor3D& g) {
  double s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) s += out.data()[i] * g.data()[i];
  return s;
}

TransformerModelConfig tiny_cfg(NormPlacement norm, bool tie) {
  TransformerModelConfig c;
  c.src_vocab = 9;
  c.tgt_vocab = 11;
  c.d_model = 8;
  c.n_heads = 2;
  c.d_ff = 12;
  c.enc_layers = 2;
  c.dec_layers = 2;
  c.norm = norm;
  c.tie_output = tie;
  return c;
}

// Random LayerNorm γ, β and biases, so that no gradient is trivially symmetric or zero.
TransformerD randomised(const TransformerModelConfig& cfg, std::uint64_t seed) {
  Rng rng(seed);
  TransformerD m = to_double(transformer_init(cfg, rng));
  for_each_param(
      [&](const std::string& name, auto& x) {
        const bool is_norm = name.find("gamma") != std::string::npos;
        const bool is_small = name.find(".b") != std::string::npos || name.find("beta") != std::string::npos;
        for (auto& v : x) {
          if (is_norm) v = 1.0 + 0.3 * rng.normal();
          else if (is_small) v = 0.2 * rng.normal();
        }
      },
      m);
  return m;
}

Batch tiny_transformer_batch() {
  Batch b;
  b.size = 2;
  b.src_len = 4;
  b.tgt_len = 5;
  b.src = {4, 5, 6, 7, 8, 4, 6, 5};
  b.tgt_in = {1, 4, 5, 6, 7, 1, 8, 9, 10, 4};
  b.tgt_out = {4, 5, 6, 7, 2, 8, 9, 10, 2, 0};  // the last target is <pad>: ignored
  return b;
}

// Checks every parameter tensor of m against central differences of the model's loss.
void check_model(const TransformerModelConfig& cfg) {
  TransformerD m = randomised(cfg, 3);
  TransformerD g = zeros_like(m);
  const Batch b = tiny_transformer_batch();
  TransformerTapeT<double> tape;
  transformer_forward(tape, m, b);
  transformer_backward(g, tape, m, b);
  std::size_t checked = 0;
  for_each_param(
      [&](const std::string& name, auto& x, auto& gx) {
        if (x.size() == 0) return;
        TransformerTapeT<double> t2;
        const auto r = check_gradient([&] { return transformer_forward(t2, m, b); }, x.data(), gx.data(), x.size());
        INFO(std::string(norm_name(cfg.norm)) << (cfg.tie_output ? " tied " : " untied ") << name
                                              << ": rel error " << r.rel_error << ", worst " << r.max_abs_error);
        // A key bias adds the same q·b_k to every score of a row, which softmax ignores: its
        // gradient is 0 in theory, judged by the absolute error (central differences: ~1e-11).
        if (name.size() > 4 && name.substr(name.size() - 4) == ".b_k")
          CHECK(r.max_abs_error < 1e-9);
        else
          CHECK(r.rel_error < kTol);
        ++checked;
      },
      m, g);
  CHECK(checked > 60);
}

}  // namespace

TEST_CASE("transformer encoder layer: gradients of x and every parameter, Post-Norm and Pre-Norm") {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    const TransformerD m = randomised(tiny_cfg(norm, true), 11);
    EncoderLayerT<double> p = m.enc[0];
    Rng rng(4);
    Tensor3D x = rand3(rng, 2, 5, 8), G = rand3(rng, 2, 5, 8);
    EncoderLayerCacheT<double> c;
    encoder_layer_forward(c, x, p, norm);
    Tensor3D dx = xt::zeros<double>(x.shape());
    EncoderLayerT<double> dp = zeros_like(m).enc[0];
    encoder_layer_backward(dx, dp, G, c, p, norm);
    auto loss = [&] {
      EncoderLayerCacheT<double> c2;
      encoder_layer_forward(c2, x, p, norm);
      return weighted_sum(c2.y, G);
    };
    INFO(std::string(norm_name(norm)));
    CHECK(check_gradient(loss, x, dx).rel_error < kTol);
    CHECK(check_gradient(loss, p.self.w_q, dp.self.w_q).rel_error < kTol);
    CHECK(check_gradient(loss, p.self.w_v, dp.self.w_v).rel_error < kTol);
    CHECK(check_gradient(loss, p.self.b_o, dp.self.b_o).rel_error < kTol);
    CHECK(check_gradient(loss, p.ln1.gamma, dp.ln1.gamma).rel_error < kTol);
    CHECK(check_gradient(loss, p.ln1.beta, dp.ln1.beta).rel_error < kTol);
    CHECK(check_gradient(loss, p.ff1.w, dp.ff1.w).rel_error < kTol);
    CHECK(check_gradient(loss, p.ff1.b, dp.ff1.b).rel_error < kTol);
    CHECK(check_gradient(loss, p.ff2.w, dp.ff2.w).rel_error < kTol);
    CHECK(check_gradient(loss, p.ln2.gamma, dp.ln2.gamma).rel_error < kTol);
  }
}

TEST_CASE("transformer decoder layer: gradients of x, memory and every parameter, both norms") {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    const TransformerD m = randomised(tiny_cfg(norm, true), 12);
    DecoderLayerT<double> p = m.dec[1];
    Rng rng(6);
    Tensor3D x = rand3(rng, 2, 3, 8), mem = rand3(rng, 2, 7, 8), G = rand3(rng, 2, 3, 8);  // T = 3 ≠ S = 7
    DecoderLayerCacheT<double> c;
    decoder_layer_forward(c, x, mem, p, norm);
    Tensor3D dx = xt::zeros<double>(x.shape()), dmem = xt::zeros<double>(mem.shape());
    DecoderLayerT<double> dp = zeros_like(m).dec[1];
    decoder_layer_backward(dx, dmem, dp, G, c, mem, p, norm);
    auto loss = [&] {
      DecoderLayerCacheT<double> c2;
      decoder_layer_forward(c2, x, mem, p, norm);
      return weighted_sum(c2.y, G);
    };
    INFO(std::string(norm_name(norm)));
    CHECK(check_gradient(loss, x, dx).rel_error < kTol);
    CHECK(check_gradient(loss, mem, dmem).rel_error < kTol);
    CHECK(check_gradient(loss, p.self.w_k, dp.self.w_k).rel_error < kTol);
    CHECK(check_gradient(loss, p.self.w_o, dp.self.w_o).rel_error < kTol);
    CHECK(check_gradient(loss, p.cross.w_q, dp.cross.w_q).rel_error < kTol);
    CHECK(check_gradient(loss, p.cross.w_k, dp.cross.w_k).rel_error < kTol);
    CHECK(check_gradient(loss, p.cross.b_v, dp.cross.b_v).rel_error < kTol);
    CHECK(check_gradient(loss, p.ln1.gamma, dp.ln1.gamma).rel_error < kTol);
    CHECK(check_gradient(loss, p.ln2.beta, dp.ln2.beta).rel_error < kTol);
    CHECK(check_gradient(loss, p.ln3.gamma, dp.ln3.gamma).rel_error < kTol);
    CHECK(check_gradient(loss, p.ff2.w, dp.ff2.w).rel_error < kTol);
    CHECK(check_gradient(loss, p.ff2.b, dp.ff2.b).rel_error < kTol);
  }
}

TEST_CASE("transformer: whole-model gradients, Post-Norm and Pre-Norm, tied and untied output") {
  check_model(tiny_cfg(NormPlacement::Post, true));
  check_model(tiny_cfg(NormPlacement::Pre, true));
  check_model(tiny_cfg(NormPlacement::Post, false));
}

TEST_CASE("transformer: the decoder is causal — changing a later target token leaves earlier rows alone") {
  Rng rng(2);
  const Transformer m = transformer_init(tiny_cfg(NormPlacement::Post, true), rng);
  Batch b = tiny_transformer_batch();
  TransformerTape t1, t2;
  transformer_forward(t1, m, b);
  b.tgt_in[3] = 9;  // sentence 0, position 3
  transformer_forward(t2, m, b);
  for (std::size_t t = 0; t < 5; ++t) {
    double diff = 0;
    for (std::size_t k = 0; k < 8; ++k) diff = std::max(diff, double(std::abs(t1.feats(t, k) - t2.feats(t, k))));
    if (t < 3) CHECK(diff == 0.0);
    else CHECK(diff > 1e-4);
  }
}

TEST_CASE("transformer parameters: names, count, registry, double copy, bad configs") {
  Rng rng(1);
  TransformerModelConfig cfg = tiny_cfg(NormPlacement::Pre, true);
  Transformer m = transformer_init(cfg, rng), g = zeros_like(m);
  ParamRegistry reg;
  register_params(reg, m, g);
  CHECK(reg.total_size() == parameter_count(m));
  // by hand: embeddings, 2 encoder layers, 2 decoder layers, final norms, output bias
  const std::size_t d = 8, f = 12, mha = 4 * d * d + 4 * d, ln = 2 * d, ffn = d * f + f + f * d + d;
  CHECK(parameter_count(m) == 9 * d + 11 * d + 2 * (mha + 2 * ln + ffn) + 2 * (2 * mha + 3 * ln + ffn) + 2 * ln + 11);
  std::set<std::string> names;
  for (const auto& e : reg.entries()) names.insert(e.name);
  CHECK(names.count("dec.1.cross.w_k") == 1);
  CHECK(names.count("enc_norm.gamma") == 1);
  CHECK(names.count("out.w") == 0);  // tied
  const TransformerD md = to_double(m);
  CHECK(md.dec[1].cross.w_k(2, 3) == double(m.dec[1].cross.w_k(2, 3)));
  cfg.n_heads = 3;  // does not divide d_model = 8
  CHECK_THROWS_AS(transformer_init(cfg, rng), std::invalid_argument);
  CHECK_THROWS_AS(norm_from_name("middle"), std::invalid_argument);
  Batch bad = tiny_transformer_batch();
  bad.src.pop_back();
  TransformerTape tape;
  CHECK_THROWS_AS(transformer_forward(tape, m, bad), ShapeError);
}

TEST_CASE("transformer decoding: the KV-cached steps equal the teacher-forced pass, both norms") {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    Rng rng(8);
    TransformerModelConfig cfg = tiny_cfg(norm, norm == NormPlacement::Post);
    const Transformer m = transformer_init(cfg, rng);
    const std::vector<int> src = {4, 5, 6, 7, 8}, out = {9, 4, 10, 5};
    const TransformerTape tape = transformer_teacher_forced(m, src, out);
    const Mat cached = transformer_step_log_probs(m, src, {1, 9, 4, 10, 5});
    REQUIRE(cached.shape(0) == tape.probs.shape(0));
    double worst = 0;
    for (std::size_t i = 0; i < cached.shape(0); ++i)
      for (std::size_t v = 0; v < cached.shape(1); ++v)
        worst = std::max(worst, std::abs(double(cached(i, v)) - std::log(double(tape.probs(i, v)))));
    INFO(std::string(norm_name(norm)) << ": worst |Δ log p| " << worst);
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("transformer decoding: greedy = beam 1, beam output ends cleanly, batch = one by one") {
  Rng rng(9);
  const Transformer m = transformer_init(tiny_cfg(NormPlacement::Pre, true), rng);
  const std::vector<int> src = {4, 5, 6, 7, 8, 6, 5, 4};  // two sentences of length 4
  const auto g = transformer_greedy(m, src, 2, 4, 9);
  const auto b1 = transformer_beam(m, src, 2, 4, 9, 1, 0.0);
  CHECK(g == b1);
  const auto b4 = transformer_beam(m, src, 2, 4, 9, 4);
  REQUIRE(b4.size() == 2);
  for (const auto& ids : b4) {
    CHECK(ids.size() <= 9);
    for (int id : ids) CHECK(id != 2);  // no <eos> inside an output
  }
  const auto first = transformer_beam(m, {4, 5, 6, 7}, 1, 4, 9, 4);
  CHECK(first.front() == b4.front());
  CHECK(gnmt_length_penalty(1, 0.6) == doctest::Approx(1.0));
  CHECK(gnmt_length_penalty(7, 0.6) == doctest::Approx(std::pow(2.0, 0.6)));
}

TEST_CASE("beam_candidates: the best (parent, token) pairs by cumulative log-probability") {
  Mat logp = {{-0.1f, -2.0f, -3.0f}, {-0.5f, -0.2f, -4.0f}};
  const auto c = beam_candidates({-1.0, -0.5}, logp, 3);
  REQUIRE(c.size() == 3);
  CHECK(c[0].parent == 1);
  CHECK(c[0].token == 1);
  CHECK(c[0].score == doctest::Approx(-0.7));
  CHECK(c[1].parent == 1);
  CHECK(c[1].token == 0);
  CHECK(c[2].parent == 0);
  CHECK(c[2].token == 0);
  // a dead hypothesis (−∞) is never extended
  const auto d = beam_candidates({-INFINITY, 0.0}, logp, 6);
  CHECK(d.size() == 3);
  for (const auto& x : d) CHECK(x.parent == 1);
  CHECK_THROWS_AS(beam_candidates({0.0}, logp, 2), ShapeError);
}

TEST_CASE("transformer attention weights of one sentence: shapes, rows sum to 1, causal") {
  Rng rng(10);
  const Transformer m = transformer_init(tiny_cfg(NormPlacement::Post, true), rng);
  const TransformerAttention a = transformer_attention(m, {4, 5, 6, 7, 8}, {9, 10});
  CHECK(shape_of(a.enc_self) == Shape{2, 2, 5, 5});
  CHECK(shape_of(a.dec_self) == Shape{2, 2, 3, 3});
  CHECK(shape_of(a.cross) == Shape{2, 2, 3, 5});
  for (std::size_t i = 0; i < 3; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < 5; ++j) s += a.cross(1, 1, i, j);
    CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
    for (std::size_t j = i + 1; j < 3; ++j) CHECK(a.dec_self(0, 1, i, j) == 0.0f);
  }
}
