// Positional encodings (chapter 05): sinusoidal, RoPE, ALiBi, learned table.
// Map: sinusoidal table + shift M_k + similarity · RoPE tables, rotation, relative property, bound,
// backward (gradcheck) · ALiBi slopes (paper's sequences, non-power-of-2 rule), bias, slope gradient
// through attention (gradcheck), slope 0 == no positions · learned table forward/backward/limit.
// Tolerances: float32 tables from double angles, values in [−1, 1]: 1e-6 per entry; products of
// d ≤ 64 such terms: 1e-5. Gradient checks in double: relative error < 1e-6.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/position/alibi.hpp"
#include "attn/attention/attention.hpp"
#include "attn/attention/attention_layer.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/nn/gradcheck.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/studies/lookup.hpp"
#include "attn/position/position_encoding.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

namespace {
MatD to_d(const Mat& m) { return xt::cast<double>(m); }
MatD random_d(Rng& rng, std::size_t r, std::size_t c) { return to_d(rng.normal_mat(r, c)); }
double dot_rows(const Mat& a, std::size_t i, const Mat& b, std::size_t j) {
  double s = 0.0;
  for (std::size_t c = 0; c < a.shape(1); ++c) s += double(a(i, c)) * b(j, c);
  return s;
}
}  // namespace

TEST_CASE("sinusoidal: the paper's formula, sin on even and cos on odd columns") {
  const Mat pe = sinusoidal_table(50, 16);
  CHECK(pe.shape(0) == 50);
  CHECK(pe.shape(1) == 16);
  for (std::size_t pos : {0u, 1u, 7u, 49u})
    for (std::size_t i = 0; i < 8; ++i) {
      const double w = std::pow(10000.0, -2.0 * double(i) / 16.0);
      CHECK(std::abs(pe(pos, 2 * i) - std::sin(double(pos) * w)) < 1e-6);
      CHECK(std::abs(pe(pos, 2 * i + 1) - std::cos(double(pos) * w)) < 1e-6);
    }
  const Vec w = sinusoidal_frequencies(16);
  CHECK(w(0) == 1.0f);
  CHECK(std::abs(w(7) - std::pow(10000.0, -14.0 / 16.0)) < 1e-9);
  CHECK_THROWS_AS(sinusoidal_table(4, 7), std::invalid_argument);
  CHECK_THROWS_AS(sinusoidal_shift(0, 1), std::invalid_argument);
}

TEST_CASE("sinusoidal: PE(pos + k) = M_k·PE(pos), with M_k independent of pos and block-diagonal") {
  const std::size_t d = 32;
  const Mat pe = sinusoidal_table(200, d);
  for (long k : {1L, 5L, 37L, -3L}) {
    const Mat M = sinusoidal_shift(d, k);
    double worst = 0.0;
    for (std::size_t pos = 10; pos + 40 < 200; pos += 13) {
      const Vec moved = row_of(pe, std::size_t(long(pos) + k));
      for (std::size_t r = 0; r < d; ++r) {
        double s = 0.0;
        for (std::size_t c = 0; c < d; ++c) s += double(M(r, c)) * pe(pos, c);
        worst = std::max(worst, std::abs(s - moved(r)));
      }
    }
    CHECK_MESSAGE(worst < 1e-5, "k = " << k << ": max |M_k·PE(pos) − PE(pos + k)| = " << worst);
    // Block-diagonal: nothing outside the 2×2 blocks; each block is a rotation (orthogonal).
    for (std::size_t r = 0; r < d; ++r)
      for (std::size_t c = 0; c < d; ++c)
        if (r / 2 != c / 2) CHECK(M(r, c) == 0.0f);
    const MatD mmt = gemm_reference(M, M, Op::N, Op::T);
    for (std::size_t r = 0; r < d; ++r) CHECK(std::abs(mmt(r, r) - 1.0) < 1e-6);
  }
  // M_0 is the identity; M_a·M_b = M_(a+b).
  CHECK(max_abs_diff(sinusoidal_shift(d, 0), Mat(xt::eye<float>(d))) == 0.0);
  CHECK(max_abs_diff(sinusoidal_shift(d, 7), gemm_reference(sinusoidal_shift(d, 3), sinusoidal_shift(d, 4))) < 1e-6);
}

TEST_CASE("sinusoidal: PE·PE depends only on the distance and is largest at 0") {
  const std::size_t d = 64;
  const Mat pe = sinusoidal_table(300, d);
  const Vec sim = sinusoidal_similarity(d, 100);
  CHECK(std::abs(sim(0) - 32.0f) < 1e-5);  // d/2 pairs, each sin² + cos² = 1
  for (std::size_t k : {1u, 10u, 100u}) {
    for (std::size_t pos : {0u, 50u, 199u}) CHECK(std::abs(dot_rows(pe, pos, pe, pos + k) - sim(k)) < 1e-4);
    CHECK(sim(k) < sim(0));
  }
}

TEST_CASE("rope: tables, the adjacent-pair rotation and the inverse") {
  const RopeTables tab = rope_tables(20, 8);
  CHECK(tab.positions() == 20);
  CHECK(tab.dim() == 8);
  CHECK(tab.cos(0, 3) == 1.0f);
  CHECK(tab.sin(0, 3) == 0.0f);
  CHECK(std::abs(tab.cos(5, 1) - std::cos(5.0 * std::pow(10000.0, -2.0 / 8.0))) < 1e-6);
  Rng rng(5);
  const Mat x = rng.normal_mat(6, 8);
  const Mat y = rope_rotate(x, tab, 3);
  // Row t, pair i is turned by (3 + t)·θ_i: check one pair by hand.
  const double a = 5.0 * std::pow(10000.0, -2.0 * 2 / 8.0);  // t = 2 -> pos 5, pair 2
  CHECK(std::abs(y(2, 4) - (x(2, 4) * std::cos(a) - x(2, 5) * std::sin(a))) < 1e-5);
  CHECK(std::abs(y(2, 5) - (x(2, 4) * std::sin(a) + x(2, 5) * std::cos(a))) < 1e-5);
  // Position 0 is the identity; a rotation keeps each pair's length.
  CHECK(max_abs_diff(Mat(xt::view(rope_rotate(x, tab, 0), xt::range(0, 1), xt::all())),
                     Mat(xt::view(x, xt::range(0, 1), xt::all()))) == 0.0);
  for (std::size_t t = 0; t < 6; ++t)
    for (std::size_t i = 0; i < 4; ++i)
      CHECK(std::abs(std::hypot(y(t, 2 * i), y(t, 2 * i + 1)) - std::hypot(x(t, 2 * i), x(t, 2 * i + 1))) < 1e-5);
  // The backward applied to y turns it back (Rᵀ = R⁻¹).
  Mat back = xt::zeros<float>({6, 8});
  rope_backward(back, y, tab, 3);
  CHECK(max_abs_diff(back, x) < 1e-5);
  // In place equals out of place; the Tensor3 form rotates each head the same way.
  Mat inplace = x;
  rope_forward(inplace, inplace, tab, 3);
  CHECK(max_abs_diff(inplace, y) == 0.0);
  Tensor3 heads = xt::zeros<float>({2, 6, 8});
  xt::view(heads, 1, xt::all(), xt::all()) = x;
  CHECK(max_abs_diff(slice_of(rope_rotate(heads, tab, 3), 1), y) == 0.0);
  // Bad shapes: odd d, too few table rows, wrong width.
  CHECK_THROWS_AS(rope_tables(4, 5), std::invalid_argument);
  CHECK_THROWS_AS(rope_rotate(x, tab, 15), ShapeError);
  CHECK_THROWS_AS(rope_rotate(rng.normal_mat(3, 6), tab), ShapeError);
}

TEST_CASE("rope: q_m·k_n depends only on m − n (scores at (m, n) and (m + s, n + s) agree to 1e-5)") {
  const std::size_t d = 64, T = 8;
  const RopeTables tab = rope_tables(600, d);
  Rng rng(17);
  const Mat q = rng.normal_mat(T, d, 0.25f), k = rng.normal_mat(T, d, 0.25f);  // |q·k| = O(1)
  const Mat q0 = rope_rotate(q, tab, 0), k0 = rope_rotate(k, tab, 0);
  double worst = 0.0, moved = 0.0;
  for (std::size_t s : {1u, 17u, 100u, 500u}) {
    const Mat qs = rope_rotate(q, tab, s), ks = rope_rotate(k, tab, s);
    for (std::size_t m = 0; m < T; ++m)
      for (std::size_t n = 0; n < T; ++n) {
        worst = std::max(worst, std::abs(dot_rows(q0, m, k0, n) - dot_rows(qs, m, ks, n)));
        moved = std::max(moved, std::abs(dot_rows(q0, m, k0, n) - dot_rows(qs, m, k0, n)));
      }
  }
  CHECK_MESSAGE(worst < 1e-5, "max |q_m·k_n − q_(m+s)·k_(n+s)| = " << worst);
  CHECK_MESSAGE(moved > 1e-2, "rotating only q must change the scores (it did by " << moved << ")");
}

TEST_CASE("rope: the RoFormer upper bound starts at (d/2 + 1)/2 and decays with distance") {
  const Vec b = rope_distance_bound(128, 256);
  CHECK(std::abs(b(0) - 32.5f) < 1e-4);  // S_j = j at distance 0: (2/d)·Σ j = (d/2 + 1)/2
  CHECK(b(16) < b(0));
  CHECK(b(64) < b(8));
  CHECK(b(256) < 0.5f * b(0));
}

TEST_CASE("rope: gradient check of the rotation (double)") {
  const RopeTables tab = rope_tables(12, 6);
  Rng rng(8);
  MatD x = random_d(rng, 5, 6);
  const MatD G = random_d(rng, 5, 6);  // L = Σ G ⊙ rope(x)
  auto loss = [&]() {
    MatD y;
    rope_forward(y, x, tab, 4);
    return double(xt::sum(G * y)());
  };
  MatD dx = xt::zeros<double>({5, 6});
  dx(0, 0) = 1.0;  // accumulates onto what is there
  rope_backward(dx, G, tab, 4);
  dx(0, 0) -= 1.0;
  const GradCheckResult r = check_gradient(loss, x, dx);
  CHECK_MESSAGE(r.rel_error < 1e-6, "rope dx relative error " << r.rel_error);
}

TEST_CASE("alibi: slopes are the paper's geometric sequences") {
  const Vec s8 = alibi_slopes(8);  // 1/2, 1/4, …, 1/256 (Press et al. 2021, §3)
  for (std::size_t i = 0; i < 8; ++i) CHECK(s8(i) == std::ldexp(1.0f, -int(i) - 1));
  const Vec s16 = alibi_slopes(16);  // 1/√2, 1/2, 1/(2√2), …, 1/256
  CHECK(std::abs(s16(0) - std::pow(2.0, -0.5)) < 1e-7);
  CHECK(s16(15) == std::ldexp(1.0f, -8));
  // 12 heads: the 8 slopes of 8 heads, then slopes 1, 3, 5, 7 (1-based) of 16 heads.
  const Vec s12 = alibi_slopes(12);
  for (std::size_t i = 0; i < 8; ++i) CHECK(s12(i) == s8(i));
  for (std::size_t i = 0; i < 4; ++i) CHECK(s12(8 + i) == s16(2 * i));
  CHECK(alibi_slopes(1)(0) == std::ldexp(1.0f, -8));
  CHECK_THROWS_AS(alibi_slopes(0), std::invalid_argument);
}

TEST_CASE("alibi: the bias is −m·distance; cache-style queries sit at the last positions") {
  const Vec slopes = alibi_slopes(4);
  const Tensor3 b = alibi_bias(slopes, 5);
  CHECK(shape_of(b) == Shape{4, 5, 5});
  for (std::size_t h = 0; h < 4; ++h)
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 5; ++j) CHECK(b(h, i, j) == -slopes(h) * float(i > j ? i - j : j - i));
  Tensor3 last;
  alibi_bias_forward(last, Vec(slopes), 1, 5);  // one query at position 4
  for (std::size_t j = 0; j < 5; ++j) CHECK(last(2, 0, j) == b(2, 4, j));
  CHECK_THROWS_AS(alibi_bias_forward(last, Vec(slopes), 6, 5), ShapeError);
}

TEST_CASE("alibi: slope 0 equals attention with no positional information") {
  Rng rng(12);
  const Tensor3 q = rng.normal_tensor3(2, 6, 8), k = rng.normal_tensor3(2, 6, 8), v = rng.normal_tensor3(2, 6, 3);
  const Tensor3 zero_bias = alibi_bias(Vec(xt::zeros<float>({2})), 6);
  const AttentionResult3 a = attention_with_bias(q, k, v, zero_bias, causal_mask(6));
  const AttentionResult3 plain = scaled_dot_product_attention(q, k, v, causal_mask(6));
  CHECK(max_abs_diff(a.output, plain.output) == 0.0);
  // A nonzero slope changes the weights, and more for the steeper head.
  const AttentionResult3 al = attention_with_bias(q, k, v, alibi_bias(alibi_slopes(2), 6));
  CHECK(max_abs_diff(al.weights, scaled_dot_product_attention(q, k, v).weights) > 1e-2);
  // The per-head result equals the Mat SDPA with that head's bias as the mask.
  const Mat b1 = slice_of(alibi_bias(alibi_slopes(2), 6), 1);
  CHECK(max_abs_diff(slice_of(al.output, 1), scaled_dot_product_attention(slice_of(q, 1), slice_of(k, 1), slice_of(v, 1), b1).output) == 0.0);
  CHECK_THROWS_AS(attention_with_bias(q, k, v, alibi_bias(alibi_slopes(3), 6)), ShapeError);
}

TEST_CASE("alibi: gradient check of the bias path — slopes, q, k, v through attention (double)") {
  // L = Σ_h Σ G_h ⊙ softmax(q_h·k_hᵀ/√d + bias_h(m) + causal)·v_h. The softmax backward gives
  // dS_h = P ⊙ (dP − rowsum(dP ⊙ P)); since bias enters the scores additively, dbias_h = dS_h.
  const std::size_t H = 3, T = 5, d = 4;
  Rng rng(21);
  VecD slopes = xt::cast<double>(alibi_slopes(H));
  std::vector<MatD> q, k, v, G;
  for (std::size_t h = 0; h < H; ++h) {
    q.push_back(random_d(rng, T, d));
    k.push_back(random_d(rng, T, d));
    v.push_back(random_d(rng, T, d));
    G.push_back(random_d(rng, T, d));
  }
  const MatD causal = xt::cast<double>(causal_mask(T));
  auto head_mask = [&](const Tensor3D& bias, std::size_t h) {
    MatD m = xt::view(bias, h, xt::all(), xt::all());
    return MatD(m + causal);
  };
  auto loss = [&]() {
    Tensor3D bias;
    alibi_bias_forward(bias, slopes, T, T);
    double L = 0.0;
    for (std::size_t h = 0; h < H; ++h) {
      MatD out, w;
      sdpa_forward(out, w, q[h], k[h], v[h], head_mask(bias, h));
      L += xt::sum(G[h] * out)();
    }
    return L;
  };
  Tensor3D bias;
  alibi_bias_forward(bias, slopes, T, T);
  Tensor3D dbias = xt::zeros<double>({H, T, T});
  std::vector<MatD> dq, dk, dv;
  for (std::size_t h = 0; h < H; ++h) {
    MatD out, w;
    sdpa_forward(out, w, q[h], k[h], v[h], head_mask(bias, h));
    dq.push_back(xt::zeros<double>({T, d}));
    dk.push_back(xt::zeros<double>({T, d}));
    dv.push_back(xt::zeros<double>({T, d}));
    sdpa_backward(dq[h], dk[h], dv[h], G[h], w, q[h], k[h], v[h]);
    for (std::size_t i = 0; i < T; ++i) {
      double row = 0.0;
      std::vector<double> dp(T);
      for (std::size_t j = 0; j < T; ++j) {
        dp[j] = 0.0;
        for (std::size_t c = 0; c < d; ++c) dp[j] += G[h](i, c) * v[h](j, c);  // dP = dO·Vᵀ
        row += dp[j] * w(i, j);
      }
      for (std::size_t j = 0; j < T; ++j) dbias(h, i, j) = w(i, j) * (dp[j] - row);
    }
  }
  VecD dslopes = xt::zeros<double>({H});
  alibi_bias_backward(dslopes, dbias);
  const GradCheckResult rs = check_gradient(loss, slopes, dslopes);
  CHECK_MESSAGE(rs.rel_error < 1e-6, "ALiBi dslopes relative error " << rs.rel_error);
  for (std::size_t h = 0; h < H; ++h) {
    CHECK(check_gradient(loss, q[h], dq[h]).rel_error < 1e-6);
    CHECK(check_gradient(loss, k[h], dk[h]).rel_error < 1e-6);
    CHECK(check_gradient(loss, v[h], dv[h]).rel_error < 1e-6);
  }
}

TEST_CASE("learned positions: y = x + P[start + t], gradients, and the hard limit") {
  Rng rng(3);
  const Mat table = learned_position_init(8, 4, rng);
  CHECK(shape_of(table) == Shape{8, 4});
  const Mat x = rng.normal_mat(3, 4);
  Mat y;
  learned_position_forward(y, x, table, 2);
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t c = 0; c < 4; ++c) CHECK(y(t, c) == x(t, c) + table(2 + t, c));
  // Positions 0 … 7 exist; a sequence reaching position 8 has no row: a clear error, not garbage.
  Mat ok;
  learned_position_forward(ok, rng.normal_mat(8, 4), table);
  try {
    learned_position_forward(y, rng.normal_mat(9, 4), table);
    FAIL("position 8 of an 8-row table must throw");
  } catch (const PositionLimitError& e) {
    CHECK(std::string(e.what()).find("position 8 has no learned row") != std::string::npos);
    CHECK(std::string(e.what()).find("max_len 8") != std::string::npos);
  }
  CHECK_THROWS_AS(learned_position_forward(y, x, table, 6), PositionLimitError);
  CHECK_THROWS_AS(learned_position_forward(y, rng.normal_mat(3, 5), table), ShapeError);

  // Gradient check in double: both x and the table; a repeated call accumulates.
  MatD xd = random_d(rng, 3, 4), P = random_d(rng, 6, 4);
  const MatD G = random_d(rng, 3, 4);
  auto loss = [&]() {
    MatD yd;
    learned_position_forward(yd, xd, P, 1);
    return double(xt::sum(G * yd)());
  };
  MatD dx = xt::zeros<double>({3, 4}), dP = xt::zeros<double>({6, 4});
  learned_position_backward(dx, dP, G, 1);
  CHECK(check_gradient(loss, xd, dx).rel_error < 1e-6);
  CHECK(check_gradient(loss, P, dP).rel_error < 1e-6);
  for (std::size_t c = 0; c < 4; ++c) CHECK(dP(0, c) == 0.0);  // row 0 was not used
  learned_position_backward(dx, dP, G, 1);
  CHECK(dP(1, 0) == 2.0 * G(0, 0));
  MatD none;
  learned_position_backward(none, dP, G, 1);  // empty dx: only the table's gradient
  CHECK_THROWS_AS(learned_position_backward(dx, dP, G, 4), PositionLimitError);
}

TEST_CASE("positioned_self_attention: each encoding is the formula it names; reversal symmetry") {
  Rng rng(30);
  const std::size_t T = 4, d = 8;
  const Mat x = rng.normal_mat(T, d);
  const SelfAttentionWeights w = init_self_attention(rng, d, d, d);
  CHECK(max_abs_diff(positioned_self_attention(x, w, PositionEncoding::None), self_attention(x, w).attn.output) == 0.0);
  const Mat xs = x + sinusoidal_table(T, d);
  CHECK(max_abs_diff(positioned_self_attention(x, w, PositionEncoding::Sinusoidal), self_attention(xs, w).attn.output) < 1e-6);
  const Mat table = learned_position_init(6, d, rng, 1.0f);
  const Mat xl = x + Mat(xt::view(table, xt::range(0, T), xt::all()));
  CHECK(max_abs_diff(positioned_self_attention(x, w, PositionEncoding::Learned, table), self_attention(xl, w).attn.output) < 1e-6);
  CHECK_THROWS_AS(positioned_self_attention(rng.normal_mat(7, d), w, PositionEncoding::Learned, table), PositionLimitError);
  const SelfAttentionTrace t = self_attention(x, w);
  const RopeTables tab = rope_tables(T, d);
  CHECK(max_abs_diff(positioned_self_attention(x, w, PositionEncoding::Rope),
                     scaled_dot_product_attention(rope_rotate(t.q, tab), rope_rotate(t.k, tab), t.v).output) < 1e-6);
  CHECK(max_abs_diff(positioned_self_attention(x, w, PositionEncoding::Alibi, {}, 0.0f), t.attn.output) == 0.0);
  CHECK(max_abs_diff(positioned_self_attention(x, w, PositionEncoding::Alibi, {}, 0.5f),
                     scaled_dot_product_attention(t.q, t.k, t.v, slice_of(alibi_bias(Vec{0.5f}, T), 0)).output) < 1e-6);
  // Reversal: no positions and symmetric ALiBi are equivariant to it; RoPE is not.
  const std::vector<std::size_t> rev = {3, 2, 1, 0};
  const Mat xr = permute_rows(x, rev);
  for (PositionEncoding e : {PositionEncoding::None, PositionEncoding::Alibi})
    CHECK(max_abs_diff(positioned_self_attention(xr, w, e), permute_rows(positioned_self_attention(x, w, e), rev)) < 1e-6);
  CHECK(max_abs_diff(positioned_self_attention(xr, w, PositionEncoding::Rope),
                     permute_rows(positioned_self_attention(x, w, PositionEncoding::Rope), rev)) > 1e-3);
  CHECK(std::string(position_encoding_name(PositionEncoding::Rope)) == "rope");
  CHECK(all_position_encodings().size() == 5);
}
