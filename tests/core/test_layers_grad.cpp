// Gradient checks of every trainable layer: the analytic backward against central finite
// differences in double (attn/nn/gradcheck.hpp), on tiny odd shapes (3, 5, 7) so that no loop bound
// or transpose can hide behind a symmetric size. The loss is L = Σ G ⊙ output for a fixed random
// G, so dL/d(output) = G. Tolerance: relative error < 1e-6; with ε = 1e-5 in double the central
// difference's own error is ~ε²·|f'''| + 1e-16/ε ≈ 1e-10, so 1e-6 leaves room only for real bugs.
// Map: linear · embedding · activations · layernorm/rmsnorm · cross-entropy · GRU cell/sequence/
// bidirectional · Bahdanau · Luong (3 scores × 3 windows) · SDPA · multi-head (MHA, GQA, MQA).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "attn/nn/activations.hpp"
#include "attn/attention/additive_attention.hpp"
#include "attn/attention/attention.hpp"
#include "attn/attention/attention_layer.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/nn/embedding.hpp"
#include "attn/nn/gradcheck.hpp"
#include "attn/nn/gru.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/nn/linear.hpp"
#include "attn/nn/loss.hpp"
#include "attn/attention/luong_attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/attention/multi_head.hpp"

using namespace attn;

namespace {

constexpr double kTol = 1e-6;

MatD randn(Rng& rng, std::size_t r, std::size_t c, double scale = 1.0) {
  MatD m({r, c});
  for (auto& x : m) x = rng.normal() * scale;
  return m;
}
VecD randv(Rng& rng, std::size_t n, double scale = 1.0) {
  VecD v = VecD::from_shape({n});  // VecD({n}) would be the 1-element vector holding n
  for (auto& x : v) x = rng.normal() * scale;
  return v;
}
Tensor3D rand3(Rng& rng, std::size_t a, std::size_t b, std::size_t c, double scale = 1.0) {
  Tensor3D t({a, b, c});
  for (auto& x : t) x = rng.normal() * scale;
  return t;
}
template <class C>
double weighted_sum(const C& out, const C& g) {
  double s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) s += out.data()[i] * g.data()[i];
  return s;
}
template <class C> C zeros_of(const C& c) { return xt::zeros<double>(c.shape()); }

#define GRADCHECK(loss, x, gx)                                                  \
  do {                                                                          \
    auto r_ = check_gradient(loss, x, gx);                                      \
    INFO("d" #x ": rel " << r_.rel_error << ", worst |Δ| " << r_.max_abs_error \
                          << " at " << r_.worst_index << " of " << r_.count);   \
    CHECK(r_.count > 0);                                                        \
    CHECK(r_.rel_error < kTol);                                                 \
  } while (0)

}  // namespace

TEST_CASE("gradcheck: the checker itself finds a wrong gradient") {
  VecD x{0.3, -1.2, 2.0};
  auto loss = [&] { return x(0) * x(0) + 3 * x(1) + std::sin(x(2)); };
  VecD good{0.6, 3.0, std::cos(2.0)}, bad{0.6, 3.0, std::cos(2.0) + 1e-3};
  CHECK(check_gradient(loss, x, good).rel_error < 1e-9);
  CHECK(check_gradient(loss, x, bad).rel_error > 1e-5);
  CHECK(check_gradient(loss, x, bad).worst_index == 2);
}

TEST_CASE("linear: gradients of x, W, b (matrix and batch-of-sequences forms)") {
  Rng rng(1);
  LinearD p{randn(rng, 3, 7), randv(rng, 7)};
  MatD x = randn(rng, 5, 3), g = randn(rng, 5, 7);
  auto loss = [&] { MatD y; linear_forward(y, x, p); return weighted_sum(y, g); };
  MatD dx = zeros_of(x);
  LinearD dp = zeros_like(p);
  linear_backward(dx, dp, g, x, p);
  GRADCHECK(loss, x, dx);
  GRADCHECK(loss, p.w, dp.w);
  GRADCHECK(loss, p.b, dp.b);

  Tensor3D x3 = rand3(rng, 3, 5, 3), g3 = rand3(rng, 3, 5, 7);
  auto loss3 = [&] { Tensor3D y; linear_forward(y, x3, p); return weighted_sum(y, g3); };
  Tensor3D dx3 = zeros_of(x3);
  LinearD dp3 = zeros_like(p);
  linear_backward(dx3, dp3, g3, x3, p);
  GRADCHECK(loss3, x3, dx3);
  GRADCHECK(loss3, p.w, dp3.w);
}

TEST_CASE("linear: forward is x·W + b, float matches double, bad shapes name the function") {
  Rng rng(2);
  Linear p = linear_init(3, 5, rng);
  Mat x = rng.normal_mat(7, 3), y;
  linear_forward(y, x, p);
  CHECK(y(4, 2) == doctest::Approx(x(4, 0) * p.w(0, 2) + x(4, 1) * p.w(1, 2) + x(4, 2) * p.w(2, 2) + p.b(2)).epsilon(1e-5));
  Mat bad = rng.normal_mat(7, 4);
  CHECK_THROWS_WITH_AS(linear_forward(y, bad, p), doctest::Contains("linear_forward: x has shape (7, 4)"), ShapeError);
  Linear np = linear_init(3, 5, rng, false);
  CHECK(np.b.size() == 0);
  linear_forward(y, x, np);  // no bias
  CHECK(y(0, 0) == doctest::Approx(x(0, 0) * np.w(0, 0) + x(0, 1) * np.w(1, 0) + x(0, 2) * np.w(2, 0)).epsilon(1e-5));
}

TEST_CASE("embedding: gradient of the table, repeated ids accumulate, bad ids throw") {
  Rng rng(3);
  MatD table = randn(rng, 7, 3);
  std::vector<int> ids{1, 4, 1, 6, 0};
  MatD g = randn(rng, 5, 3);
  auto loss = [&] { MatD out; embedding_forward(out, ids, table); return weighted_sum(out, g); };
  MatD dtable = zeros_of(table);
  embedding_backward(dtable, g, ids);
  GRADCHECK(loss, table, dtable);
  CHECK(dtable(1, 0) == doctest::Approx(g(0, 0) + g(2, 0)));
  MatD out;
  CHECK_THROWS_AS(embedding_forward(out, {7}, table), std::out_of_range);
  CHECK_THROWS_AS(embedding_forward(out, {-1}, table), std::out_of_range);
}

TEST_CASE("activations: tanh, relu, gelu, silu, sigmoid") {
  for (Activation a : {Activation::Tanh, Activation::Relu, Activation::Gelu, Activation::Silu, Activation::Sigmoid}) {
    CAPTURE(activation_name(a));
    Rng rng(4);
    MatD x = randn(rng, 3, 5, 1.5), g = randn(rng, 3, 5);
    auto loss = [&] { MatD y; activation_forward(a, y, x); return weighted_sum(y, g); };
    MatD dx = zeros_of(x);
    activation_backward(a, dx, g, x);
    GRADCHECK(loss, x, dx);
  }
  // Known values: GELU(1) = Φ(1) = 0.8413447460685429; SiLU(1) = σ(1) = 0.7310585786300049.
  MatD x{{1.0, -2.0}}, y;
  activation_forward(Activation::Gelu, y, x);
  CHECK(y(0, 0) == doctest::Approx(0.8413447460685429).epsilon(1e-12));
  activation_forward(Activation::Silu, y, x);
  CHECK(y(0, 0) == doctest::Approx(0.7310585786300049).epsilon(1e-12));
  activation_forward(Activation::Relu, y, x);
  CHECK(y(0, 1) == 0.0);
}

TEST_CASE("layernorm and rmsnorm: gradients of x, γ, β; normalised rows") {
  Rng rng(5);
  MatD x = randn(rng, 5, 7, 2.0), g = randn(rng, 5, 7);
  NormD p{randv(rng, 7), randv(rng, 7)};
  auto loss = [&] { MatD y; VecD m, r; layernorm_forward(y, m, r, x, p); return weighted_sum(y, g); };
  MatD y;
  VecD mean, rstd;
  layernorm_forward(y, mean, rstd, x, p);
  MatD dx = zeros_of(x);
  NormD dp = zeros_like(p);
  layernorm_backward(dx, dp, g, x, mean, rstd, p);
  GRADCHECK(loss, x, dx);
  GRADCHECK(loss, p.gamma, dp.gamma);
  GRADCHECK(loss, p.beta, dp.beta);

  NormD q{randv(rng, 7), {}};
  auto rloss = [&] { MatD yy; VecD r; rmsnorm_forward(yy, r, x, q); return weighted_sum(yy, g); };
  rmsnorm_forward(y, rstd, x, q);
  MatD rdx = zeros_of(x);
  NormD rdp = zeros_like(q);
  rmsnorm_backward(rdx, rdp, g, x, rstd, q);
  GRADCHECK(rloss, x, rdx);
  GRADCHECK(rloss, q.gamma, rdp.gamma);

  // With γ = 1, β = 0 each LayerNorm row has mean 0 and variance 1 (up to ε); RMSNorm rows rms 1.
  Norm ln = layernorm_init(7), rn = rmsnorm_init(7);
  Mat xf = rng.normal_mat(3, 7, 3.0f), yf;
  Vec mf, rf;
  layernorm_forward(yf, mf, rf, xf, ln);
  for (std::size_t i = 0; i < 3; ++i) {
    double s = 0, s2 = 0;
    for (std::size_t j = 0; j < 7; ++j) { s += yf(i, j); s2 += yf(i, j) * yf(i, j); }
    CHECK(std::abs(s / 7) < 1e-5);
    CHECK(s2 / 7 == doctest::Approx(1.0).epsilon(1e-4));
  }
  rmsnorm_forward(yf, rf, xf, rn);
  double s2 = 0;
  for (std::size_t j = 0; j < 7; ++j) s2 += yf(1, j) * yf(1, j);
  CHECK(s2 / 7 == doctest::Approx(1.0).epsilon(1e-4));
}

TEST_CASE("cross-entropy: gradient with padding and label smoothing; hand-computed value") {
  Rng rng(6);
  MatD logits = randn(rng, 5, 7, 2.0);
  const int pad = 0;
  std::vector<int> targets{3, pad, 6, 2, pad};
  for (double eps : {0.0, 0.1}) {
    CAPTURE(eps);
    auto loss = [&] { MatD p; return cross_entropy_forward(p, logits, targets, pad, eps); };
    MatD probs;
    cross_entropy_forward(probs, logits, targets, pad, eps);
    MatD dl = zeros_of(logits);
    cross_entropy_backward(dl, probs, targets, pad, eps);
    GRADCHECK(loss, logits, dl);
    for (std::size_t j = 0; j < 7; ++j) CHECK(dl(1, j) == 0.0);  // padded rows get no gradient
  }
  // Two classes, logits (0, ln 3): p = (1/4, 3/4); target 1 -> −ln(3/4) = 0.2876820724517809.
  Mat l2{{0.0f, float(std::log(3.0))}}, p2;
  CHECK(cross_entropy_forward(p2, l2, {1}) == doctest::Approx(0.2876820724517809).epsilon(1e-6));
  // Smoothing 0.2 over 2 classes: q = (0.1, 0.9) -> −0.1 ln(1/4) − 0.9 ln(3/4) = 0.3975...
  CHECK(cross_entropy_forward(p2, l2, {1}, -1, 0.2f) ==
        doctest::Approx(-0.1 * std::log(0.25) - 0.9 * std::log(0.75)).epsilon(1e-6));
  // Logits of ±1e4 stay finite.
  Mat big{{1e4f, -1e4f}};
  CHECK(std::isfinite(cross_entropy_forward(p2, big, {1})));
  CHECK(cross_entropy_forward(p2, big, {1}) == doctest::Approx(2e4));
  CHECK(cross_entropy_forward(p2, l2, {pad}, pad) == 0.0f);  // nothing counted
  CHECK_THROWS_AS(cross_entropy_forward(p2, l2, {2}), std::out_of_range);
  CHECK(argmax_rows(Mat{{0.f, 2.f, 1.f}, {5.f, -1.f, 0.f}}) == std::vector<int>{1, 0});
}

TEST_CASE("gru cell: gradients of x, h and every weight; forward matches the equations") {
  Rng rng(7);
  const std::size_t b = 3, d = 5, h = 7;
  GruD p{randn(rng, d, 3 * h, 0.5), randn(rng, h, 3 * h, 0.5), randv(rng, 3 * h, 0.5), randv(rng, 3 * h, 0.5)};
  MatD x = randn(rng, b, d), h0 = randn(rng, b, h), g = randn(rng, b, h);
  auto loss = [&] { MatD hn; GruStepCacheT<double> c; gru_cell_forward(hn, c, x, h0, p); return weighted_sum(hn, g); };
  MatD hn;
  GruStepCacheT<double> cache;
  gru_cell_forward(hn, cache, x, h0, p);
  MatD dx = zeros_of(x), dh = zeros_of(h0);
  GruD dp = zeros_like(p);
  gru_cell_backward(dx, dh, dp, g, cache, x, h0, p);
  GRADCHECK(loss, x, dx);
  GRADCHECK(loss, h0, dh);
  GRADCHECK(loss, p.wx, dp.wx);
  GRADCHECK(loss, p.wh, dp.wh);
  GRADCHECK(loss, p.bx, dp.bx);
  GRADCHECK(loss, p.bh, dp.bh);
  // One unit written out by hand (PyTorch's equations).
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const std::size_t i = 2, j = 4;
  double ar = p.bx(j) + p.bh(j), az = p.bx(h + j) + p.bh(h + j), xn = p.bx(2 * h + j), hn_ = p.bh(2 * h + j);
  for (std::size_t k = 0; k < d; ++k) { ar += x(i, k) * p.wx(k, j); az += x(i, k) * p.wx(k, h + j); xn += x(i, k) * p.wx(k, 2 * h + j); }
  for (std::size_t k = 0; k < h; ++k) { ar += h0(i, k) * p.wh(k, j); az += h0(i, k) * p.wh(k, h + j); hn_ += h0(i, k) * p.wh(k, 2 * h + j); }
  const double r = sig(ar), z = sig(az), n = std::tanh(xn + r * hn_);
  CHECK(hn(i, j) == doctest::Approx((1 - z) * n + z * h0(i, j)).epsilon(1e-12));
}

TEST_CASE("gru sequence (BPTT) and bidirectional: gradients of inputs, h0 and weights") {
  Rng rng(8);
  const std::size_t b = 3, t = 5, d = 3, h = 7;
  GruD p{randn(rng, d, 3 * h, 0.5), randn(rng, h, 3 * h, 0.5), randv(rng, 3 * h, 0.5), randv(rng, 3 * h, 0.5)};
  Tensor3D x = rand3(rng, b, t, d), g = rand3(rng, b, t, h);
  MatD h0 = randn(rng, b, h);
  auto loss = [&] { Tensor3D hs; GruSeqCacheT<double> c; gru_sequence_forward(hs, c, x, h0, p); return weighted_sum(hs, g); };
  Tensor3D hs;
  GruSeqCacheT<double> cache;
  gru_sequence_forward(hs, cache, x, h0, p);
  Tensor3D dx = zeros_of(x);
  MatD dh0 = zeros_of(h0);
  GruD dp = zeros_like(p);
  gru_sequence_backward(dx, dh0, dp, g, cache, p);
  GRADCHECK(loss, x, dx);
  GRADCHECK(loss, h0, dh0);
  GRADCHECK(loss, p.wx, dp.wx);
  GRADCHECK(loss, p.wh, dp.wh);
  GRADCHECK(loss, p.bx, dp.bx);
  GRADCHECK(loss, p.bh, dp.bh);

  // The sequence is the cell applied T times.
  MatD state = h0, next;
  for (std::size_t s = 0; s < t; ++s) {
    MatD xs({b, d});
    for (std::size_t i = 0; i < b; ++i) for (std::size_t k = 0; k < d; ++k) xs(i, k) = x(i, s, k);
    GruStepCacheT<double> c;
    gru_cell_forward(next, c, xs, state, p);
    state = next;
  }
  CHECK(state(1, 3) == doctest::Approx(hs(1, t - 1, 3)).epsilon(1e-14));

  BiGruD bp{p, GruD{randn(rng, d, 3 * h, 0.5), randn(rng, h, 3 * h, 0.5), randv(rng, 3 * h, 0.5), randv(rng, 3 * h, 0.5)}};
  Tensor3D g2 = rand3(rng, b, t, 2 * h);
  auto bloss = [&] { Tensor3D o; BiGruCacheT<double> c; bigru_forward(o, c, x, bp); return weighted_sum(o, g2); };
  Tensor3D bo;
  BiGruCacheT<double> bc;
  bigru_forward(bo, bc, x, bp);
  Tensor3D bdx = zeros_of(x);
  BiGruD bdp = zeros_like(bp);
  bigru_backward(bdx, bdp, g2, bc, bp);
  GRADCHECK(bloss, x, bdx);
  GRADCHECK(bloss, bp.fwd.wh, bdp.fwd.wh);
  GRADCHECK(bloss, bp.bwd.wx, bdp.bwd.wx);
  GRADCHECK(bloss, bp.bwd.bh, bdp.bwd.bh);
  // The backward half at t = 0 has read the whole sentence right to left: it equals a forward GRU
  // (with bwd's weights) run on the reversed sentence, at its last step.
  Tensor3D xr({b, t, d});
  for (std::size_t i = 0; i < b; ++i) for (std::size_t s = 0; s < t; ++s) for (std::size_t k = 0; k < d; ++k) xr(i, s, k) = x(i, t - 1 - s, k);
  Tensor3D hr;
  GruSeqCacheT<double> rc;
  gru_sequence_forward(hr, rc, xr, MatD(xt::zeros<double>({b, h})), bp.bwd);
  CHECK(bo(2, 0, h + 5) == doctest::Approx(hr(2, t - 1, 5)).epsilon(1e-14));
}

TEST_CASE("bahdanau: gradients of s_prev, encoder states, W_a, U_a, v_a; α rows sum to 1") {
  Rng rng(9);
  const std::size_t b = 3, s = 7, hd = 5, he = 4, a = 3;
  BahdanauD p{randn(rng, hd, a), randn(rng, he, a), randv(rng, a)};
  MatD sp = randn(rng, b, hd), g = randn(rng, b, he);
  Tensor3D enc = rand3(rng, b, s, he);
  auto forward = [&](MatD& ctx, BahdanauStepT<double>& st, Tensor3D& keys) {
    bahdanau_keys_forward(keys, enc, p);
    bahdanau_step_forward(ctx, st, sp, enc, keys, p);
  };
  auto loss = [&] { MatD c; BahdanauStepT<double> st; Tensor3D k; forward(c, st, k); return weighted_sum(c, g); };
  MatD ctx;
  BahdanauStepT<double> st;
  Tensor3D keys;
  forward(ctx, st, keys);
  MatD dsp = zeros_of(sp);
  Tensor3D denc = zeros_of(enc), dkeys = zeros_of(keys);
  BahdanauD dp = zeros_like(p);
  bahdanau_step_backward(dsp, denc, dkeys, dp, g, st, sp, enc, p);
  bahdanau_keys_backward(denc, dp, dkeys, enc, p);
  GRADCHECK(loss, sp, dsp);
  GRADCHECK(loss, enc, denc);
  GRADCHECK(loss, p.w_a, dp.w_a);
  GRADCHECK(loss, p.u_a, dp.u_a);
  GRADCHECK(loss, p.v_a, dp.v_a);
  for (std::size_t i = 0; i < b; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j < s; ++j) sum += st.alpha(i, j);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-12));
  }
  // e_ij written out: v_aᵀ tanh(W_a s + U_a h_j)
  double e = 0;
  for (std::size_t k = 0; k < a; ++k) {
    double pre = 0;
    for (std::size_t m = 0; m < hd; ++m) pre += sp(1, m) * p.w_a(m, k);
    for (std::size_t m = 0; m < he; ++m) pre += enc(1, 4, m) * p.u_a(m, k);
    e += p.v_a(k) * std::tanh(pre);
  }
  CHECK(st.energies(1, 4) == doctest::Approx(e).epsilon(1e-12));
}

TEST_CASE("luong: dot / general / concat × global / local-m / local-p gradients") {
  for (LuongScore score : {LuongScore::Dot, LuongScore::General, LuongScore::Concat})
    for (LuongWindow window : {LuongWindow::Global, LuongWindow::LocalM, LuongWindow::LocalP}) {
      CAPTURE(luong_score_name(score));
      CAPTURE(luong_window_name(window));
      Rng rng(10);
      const std::size_t b = 3, s = 7, hd = 5, a = 3, pa = 3;
      const std::size_t he = score == LuongScore::Dot ? hd : 4;
      LuongConfig cfg{score, window, 2};
      LuongD p;
      if (score == LuongScore::General) p.w_a = randn(rng, hd, he);
      if (score == LuongScore::Concat) { p.w_c = randn(rng, hd + he, a); p.v_c = randv(rng, a); }
      if (window == LuongWindow::LocalP) { p.w_p = randn(rng, hd, pa); p.v_p = randv(rng, pa); }
      MatD h = randn(rng, b, hd), g = randn(rng, b, he);
      Tensor3D enc = rand3(rng, b, s, he);
      const std::size_t t = 3;
      auto loss = [&] { MatD c; LuongStepT<double> st; luong_forward(c, st, h, enc, p, cfg, t); return weighted_sum(c, g); };
      MatD ctx;
      LuongStepT<double> st;
      luong_forward(ctx, st, h, enc, p, cfg, t);
      MatD dh = zeros_of(h);
      Tensor3D denc = zeros_of(enc);
      LuongD dp = zeros_like(p);
      luong_backward(dh, denc, dp, g, st, h, enc, p, cfg);
      GRADCHECK(loss, h, dh);
      GRADCHECK(loss, enc, denc);
      if (score == LuongScore::General) GRADCHECK(loss, p.w_a, dp.w_a);
      if (score == LuongScore::Concat) { GRADCHECK(loss, p.w_c, dp.w_c); GRADCHECK(loss, p.v_c, dp.v_c); }
      if (window == LuongWindow::LocalP) { GRADCHECK(loss, p.w_p, dp.w_p); GRADCHECK(loss, p.v_p, dp.v_p); }
      if (window != LuongWindow::Global)  // nothing outside the window |s − p_t| ≤ D
        for (std::size_t i = 0; i < b; ++i)
          for (std::size_t j = 0; j < s; ++j)
            if (std::abs(double(j) - st.p(i)) > 2.0) CHECK(st.alpha(i, j) == 0.0);
      if (window == LuongWindow::LocalM) CHECK(st.p(0) == 3.0);
    }
}

TEST_CASE("luong concat: keys h̄_s·W_c[Hd:] once per sentence, reused by every step, match [h_t; h̄_s]·W_c") {
  // The model computes concat's source half once (luong_keys_forward) and each step adds h_t·W_c[:Hd];
  // the reference builds each [h_t; h̄_s] and multiplies it by the whole W_c. Awkward sizes: Hd ≠ He ≠ A.
  Rng rng(12);
  const std::size_t b = 2, s = 7, hd = 5, he = 3, a = 4;
  LuongD p;
  p.w_c = randn(rng, hd + he, a);
  p.v_c = randv(rng, a);
  const Tensor3D enc = rand3(rng, b, s, he);
  Tensor3D keys;
  luong_keys_forward(keys, enc, p, LuongScore::Concat);
  REQUIRE(keys.shape() == std::array<std::size_t, 3>{b, s, a});
  const LuongConfig cfg{LuongScore::Concat, LuongWindow::Global, 2};
  Tensor3D denc_fast = zeros_of(enc), denc_naive = zeros_of(enc);
  LuongD dp_fast = zeros_like(p), dp_naive = zeros_like(p);
  Tensor3D dkeys = xt::zeros<double>({b, s, a});
  for (int t = 0; t < 3; ++t) {  // three decoder steps share one set of keys
    CAPTURE(t);
    const MatD h = randn(rng, b, hd), g = randn(rng, b, he);
    MatD scores;
    LuongStepT<double> st;
    luong_scores_forward(scores, st, h, enc, keys, p, LuongScore::Concat);
    const MatD ref = luong_concat_scores_reference(h, enc, p);
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j) CHECK(scores(i, j) == doctest::Approx(ref(i, j)).epsilon(1e-12));
    // backward: each step adds into dkeys, the keys' backward runs once at the end; the per-step
    // form (keys' backward inside every call) must give the same gradients.
    MatD ctx, dh_fast = zeros_of(h), dh_naive = zeros_of(h);
    LuongStepT<double> fs, ns;
    luong_forward(ctx, fs, h, enc, keys, p, cfg);
    luong_backward(dh_fast, denc_fast, dkeys, dp_fast, g, fs, h, enc, p, cfg);
    luong_forward(ctx, ns, h, enc, p, cfg);
    luong_backward(dh_naive, denc_naive, dp_naive, g, ns, h, enc, p, cfg);
    CHECK(xt::allclose(dh_fast, dh_naive, 1e-12, 1e-12));
  }
  luong_keys_backward(denc_fast, dp_fast, dkeys, enc, p);
  CHECK(xt::allclose(denc_fast, denc_naive, 1e-12, 1e-12));
  CHECK(xt::allclose(dp_fast.w_c, dp_naive.w_c, 1e-12, 1e-12));
  CHECK(xt::allclose(dp_fast.v_c, dp_naive.v_c, 1e-12, 1e-12));
  // The reference is not the split form by construction: moving h_t's rows of W_c changes it.
  LuongD swapped = p;
  for (std::size_t k = 0; k < a; ++k) std::swap(swapped.w_c(0, k), swapped.w_c(hd, k));
  const MatD h = randn(rng, b, hd);
  CHECK_FALSE(xt::allclose(luong_concat_scores_reference(h, enc, swapped), luong_concat_scores_reference(h, enc, p)));
  // Other scores need no keys.
  Tensor3D none = keys;
  luong_keys_forward(none, enc, p, LuongScore::General);
  CHECK(none.size() == 0);
  LuongD short_w = p;
  short_w.w_c = randn(rng, he, a);  // no rows left for h_t
  CHECK_THROWS_WITH_AS(luong_keys_forward(keys, enc, short_w, LuongScore::Concat),
                       doctest::Contains("luong_keys_forward"), std::invalid_argument);
}

TEST_CASE("sdpa layer: gradients of q, k, v with and without masks; forward matches the core") {
  Rng rng(11);
  for (int with_mask = 0; with_mask < 2; ++with_mask) {
    CAPTURE(with_mask);
    const std::size_t t = with_mask ? 5 : 3, s = with_mask ? 5 : 7, dk = 3, dv = 5;
    MatD q = randn(rng, t, dk), k = randn(rng, s, dk), v = randn(rng, s, dv), g = randn(rng, t, dv);
    MatD mask = with_mask ? MatD(xt::cast<double>(causal_mask(t))) : MatD{};
    auto loss = [&] { MatD o, w; sdpa_forward(o, w, q, k, v, mask); return weighted_sum(o, g); };
    MatD out, w;
    sdpa_forward(out, w, q, k, v, mask);
    MatD dq = zeros_of(q), dkk = zeros_of(k), dvv = zeros_of(v);
    sdpa_backward(dq, dkk, dvv, g, w, q, k, v);
    GRADCHECK(loss, q, dq);
    GRADCHECK(loss, k, dkk);
    GRADCHECK(loss, v, dvv);
  }
  // float forward == attn::scaled_dot_product_attention
  Mat q = rng.normal_mat(7, 5), k = rng.normal_mat(3, 5), v = rng.normal_mat(3, 4), out, w;
  sdpa_forward(out, w, q, k, v);
  AttentionResult ref = scaled_dot_product_attention(q, k, v);
  CHECK(xt::allclose(out, ref.output, 1e-5, 1e-6));
  CHECK(xt::allclose(w, ref.weights, 1e-5, 1e-6));
}

TEST_CASE("multi-head attention: gradients (MHA, GQA, MQA; self and cross); h = 1 is single-head SDPA") {
  struct Case { std::size_t heads, kv; bool self; };
  for (Case c : {Case{3, 3, true}, Case{3, 1, false}, Case{4, 2, true}}) {
    CAPTURE(c.heads);
    CAPTURE(c.kv);
    Rng rng(12);
    const std::size_t b = 2, t = 3, s = c.self ? 3 : 5, dh = 2, cm = 5;
    MultiHeadD p;
    p.n_heads = c.heads;
    p.n_kv_heads = c.kv;
    p.w_q = randn(rng, cm, c.heads * dh);
    p.w_k = randn(rng, cm, c.kv * dh);
    p.w_v = randn(rng, cm, c.kv * dh);
    p.w_o = randn(rng, c.heads * dh, cm);
    p.b_q = randv(rng, c.heads * dh);
    p.b_k = randv(rng, c.kv * dh);
    p.b_v = randv(rng, c.kv * dh);
    p.b_o = randv(rng, cm);
    Tensor3D xq = rand3(rng, b, t, cm), xkv = c.self ? xq : rand3(rng, b, s, cm), g = rand3(rng, b, t, cm);
    MatD mask = c.self ? MatD(xt::cast<double>(causal_mask(t))) : MatD{};
    auto loss = [&] {
      Tensor3D o;
      MultiHeadCacheT<double> ch;
      multi_head_forward(o, ch, xq, c.self ? xq : xkv, p, mask);
      return weighted_sum(o, g);
    };
    Tensor3D out;
    MultiHeadCacheT<double> cache;
    multi_head_forward(out, cache, xq, c.self ? xq : xkv, p, mask);
    Tensor3D dxq = zeros_of(xq), dxkv = zeros_of(xkv);
    MultiHeadD dp = zeros_like(p);
    multi_head_backward(dxq, c.self ? dxq : dxkv, dp, g, cache, xq, c.self ? xq : xkv, p);
    GRADCHECK(loss, xq, dxq);
    if (!c.self) GRADCHECK(loss, xkv, dxkv);
    GRADCHECK(loss, p.w_q, dp.w_q);
    GRADCHECK(loss, p.w_k, dp.w_k);
    GRADCHECK(loss, p.w_v, dp.w_v);
    GRADCHECK(loss, p.w_o, dp.w_o);
    GRADCHECK(loss, p.b_q, dp.b_q);
    // q·(k_j + b_K) = q·k_j + q·b_K shifts every score of a row equally: softmax ignores it, so
    // dL/db_K is exactly 0 and only an absolute check makes sense (numeric noise ~1e-10).
    CHECK(xt::amax(xt::abs(dp.b_k))() < 1e-12);
    CHECK(check_gradient(loss, p.b_k, dp.b_k).max_abs_error < 1e-8);
    GRADCHECK(loss, p.b_o, dp.b_o);
  }
  // One head, no biases, W_O = I: the output is SDPA of (X·W_Q, X·W_K, X·W_V).
  Rng rng(13);
  MultiHead p = multi_head_init(4, 1, 1, rng, false);
  p.w_o = xt::eye<float>(4);
  Tensor3 x = rng.normal_tensor3(1, 5, 4), out;
  MultiHeadCacheT<float> cache;
  multi_head_forward(out, cache, x, x, p, causal_mask(5));
  Mat x2 = xt::view(x, 0, xt::all(), xt::all());
  AttentionResult ref = scaled_dot_product_attention(matmul(x2, p.w_q), matmul(x2, p.w_k), matmul(x2, p.w_v), causal_mask(5));
  Mat out2 = xt::view(out, 0, xt::all(), xt::all());
  CHECK(xt::allclose(out2, ref.output, 1e-5, 1e-6));
  // GQA with groups = heads (n_kv = n_heads) is MHA; MQA shares one K/V head among all query heads.
  MultiHead g = multi_head_init(6, 3, 1, rng);
  CHECK(g.w_k.shape(1) == 2);
  CHECK(g.d_head() == 2);
  CHECK_THROWS_AS(multi_head_init(6, 4, 1, rng), std::invalid_argument);
}
