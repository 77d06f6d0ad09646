// Online softmax and tiled attention (attn/attention/online_softmax.hpp, attn/attention/tiled_attention.hpp).
// Map: 1. online softmax == softmax_row for every tile size; 2. the α rescale in one worked row;
// 3. tiled forward == reference for every tile size (incl. tiles that do not divide n), causal
// and not, S != N; 4. logsumexp; 5. tiled backward == materialised backward; 6. both == central
// finite differences of a float64 forward.
// Tolerances: forward 1e-5 (the ladder; float32 sums over <= 130 terms of unit-size
// values err ~1e-6); backward vs backward 1e-4·max(1, |g|) (the two sum in different orders,
// gradients reach ~10); finite differences h = 1e-6 in double: truncation ~h² and rounding
// ~1e-16/h ~1e-10, so the float32 analytic gradient dominates: 1e-4.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/attention/attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/attention/online_softmax.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/attention/tiled_attention.hpp"

using namespace attn;

namespace {

Mat mask_for(std::size_t n, std::size_t s, bool causal) {
  Mat m = xt::zeros<float>({n, s});
  if (causal)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < s; ++j)
        if (std::ptrdiff_t(j) > std::ptrdiff_t(i) + std::ptrdiff_t(s) - std::ptrdiff_t(n))
          m(i, j) = -std::numeric_limits<float>::infinity();
  return m;
}

double max_abs(const Mat& a, const MatD& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(double(a.data()[i]) - b.data()[i]));
  return e;
}

double max_rel(const Mat& a, const Mat& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    e = std::max(e, std::abs(double(a.data()[i]) - b.data()[i]) / std::max(1.0, std::abs(double(b.data()[i]))));
  return e;
}

// loss = Σ O ∘ G with O = attention in double: what the finite differences differentiate.
double loss_double(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                   const Mat& g, std::size_t n, std::size_t s, std::size_t d, std::size_t dv, bool causal) {
  const double scale = 1.0 / std::sqrt(double(d));
  double loss = 0.0;
  std::vector<double> w(s);
  for (std::size_t i = 0; i < n; ++i) {
    std::ptrdiff_t vis = std::min<std::ptrdiff_t>(std::ptrdiff_t(s), causal ? std::ptrdiff_t(i + s) - std::ptrdiff_t(n) + 1 : std::ptrdiff_t(s));
    if (vis <= 0) continue;
    double mx = -1e300, sum = 0;
    for (std::ptrdiff_t j = 0; j < vis; ++j) {
      double acc = 0;
      for (std::size_t c = 0; c < d; ++c) acc += q[i * d + c] * k[j * d + c];
      mx = std::max(mx, w[j] = acc * scale);
    }
    for (std::ptrdiff_t j = 0; j < vis; ++j) sum += (w[j] = std::exp(w[j] - mx));
    for (std::ptrdiff_t j = 0; j < vis; ++j)
      for (std::size_t c = 0; c < dv; ++c) loss += w[j] / sum * v[j * dv + c] * g(i, c);
  }
  return loss;
}

}  // namespace

TEST_CASE("online softmax over tiles equals the one-pass softmax for every tile size") {
  Rng rng(1);
  Mat x = rng.normal_mat(1, 37, 3.0f);
  std::vector<float> ref(37), out(37);
  softmax_row(ref.data(), x.data(), nullptr, 37);
  for (std::size_t tile = 1; tile <= 38; ++tile) {
    online_softmax_row(out.data(), x.data(), 37, tile);
    CAPTURE(tile);
    for (std::size_t j = 0; j < 37; ++j) CHECK(out[j] == doctest::Approx(ref[j]).epsilon(1e-5));
  }
}

TEST_CASE("online softmax: a bigger max in a later tile rescales the sum by exp(m_old - m_new)") {
  const float x[4] = {1.0f, 2.0f, 5.0f, 0.0f};
  std::vector<OnlineSoftmaxStep> trace;
  float out[4];
  online_softmax_row(out, x, 4, 2, &trace);
  REQUIRE(trace.size() == 2);
  CHECK(trace[0].alpha == 0.0f);  // nothing before the first tile
  CHECK(trace[0].m_after == 2.0f);
  CHECK(trace[0].l_after == doctest::Approx(std::exp(-1.0f) + 1.0f));
  CHECK(trace[1].alpha == doctest::Approx(std::exp(2.0f - 5.0f)));
  CHECK(trace[1].l_after == doctest::Approx((std::exp(-1.0f) + 1.0f) * std::exp(-3.0f) + 1.0f + std::exp(-5.0f)));
  // A fully masked row stays zeros, never NaN.
  const float inf = std::numeric_limits<float>::infinity();
  const float masked[3] = {-inf, -inf, -inf};
  online_softmax_row(out, masked, 3, 2);
  CHECK(out[0] == 0.0f);
  CHECK(out[2] == 0.0f);
}

TEST_CASE("tiled attention equals exact attention for every tile size, causal and not") {
  Rng rng(2);
  const std::size_t n = 13, d = 5, dv = 3;
  Mat q = rng.normal_mat(n, d), k = rng.normal_mat(n, d), v = rng.normal_mat(n, dv);
  for (bool causal : {false, true}) {
    MatD ref = attention_reference(q, k, v, causal ? causal_mask(n) : Mat{});
    for (std::size_t bq = 1; bq <= n + 1; ++bq)
      for (std::size_t bk = 1; bk <= n + 1; ++bk) {
        CAPTURE(bq); CAPTURE(bk); CAPTURE(causal);
        CHECK(max_abs(tiled_attention_forward(q, k, v, bq, bk, causal).output, ref) < 1e-5);
      }
  }
  // Larger, awkward: 129 rows, tiles 7, 32, 64, 100 (none divides 129).
  Mat q2 = rng.normal_mat(129, 33), k2 = rng.normal_mat(129, 33), v2 = rng.normal_mat(129, 33);
  for (bool causal : {false, true}) {
    MatD ref = attention_reference(q2, k2, v2, causal ? causal_mask(129) : Mat{});
    for (std::size_t t : {7u, 32u, 64u, 100u}) {
      CAPTURE(t); CAPTURE(causal);
      CHECK(max_abs(tiled_attention_forward(q2, k2, v2, t, t + 3, causal).output, ref) < 1e-5);
    }
  }
}

TEST_CASE("tiled attention with S != N: a cache (S > N) and rows that see nothing (S < N)") {
  Rng rng(3);
  for (auto [n, s] : {std::pair<std::size_t, std::size_t>{4, 19}, {19, 4}})
    for (bool causal : {false, true}) {
      Mat q = rng.normal_mat(n, 6), k = rng.normal_mat(s, 6), v = rng.normal_mat(s, 2);
      TiledAttentionResult r = tiled_attention_forward(q, k, v, 3, 5, causal);
      CAPTURE(n); CAPTURE(s); CAPTURE(causal);
      CHECK(max_abs(r.output, attention_reference(q, k, v, mask_for(n, s, causal))) < 1e-5);
      CHECK(xt::all(xt::isfinite(r.output)));
    }
}

TEST_CASE("tiled attention's logsumexp is log Σ_j exp(s_ij) of the row") {
  Rng rng(4);
  Mat q = rng.normal_mat(9, 4), k = rng.normal_mat(9, 4), v = rng.normal_mat(9, 4);
  TiledAttentionResult r = tiled_attention_forward(q, k, v, 4, 2, true);
  for (std::size_t i = 0; i < 9; ++i) {
    double sum = 0;
    for (std::size_t j = 0; j <= i; ++j) {
      double sc = 0;
      for (std::size_t c = 0; c < 4; ++c) sc += double(q(i, c)) * k(j, c);
      sum += std::exp(sc / 2.0);
    }
    CHECK(r.logsumexp(i) == doctest::Approx(std::log(sum)).epsilon(1e-5));
  }
}

TEST_CASE("tiled backward equals the materialised backward for tiles that do not divide n") {
  Rng rng(5);
  for (auto [n, s] : {std::pair<std::size_t, std::size_t>{33, 33}, {7, 20}, {20, 7}})
    for (bool causal : {false, true}) {
      const std::size_t d = 8, dvs = 5;
      Mat q = rng.normal_mat(n, d), k = rng.normal_mat(s, d), v = rng.normal_mat(s, dvs), g = rng.normal_mat(n, dvs);
      Mat dq0 = xt::zeros<float>({n, d}), dk0 = xt::zeros<float>({s, d}), dv0 = xt::zeros<float>({s, dvs});
      attention_backward(dq0, dk0, dv0, g, q, k, v, causal);
      for (std::size_t t : {1u, 4u, 7u, 64u}) {
        TiledAttentionResult f = tiled_attention_forward(q, k, v, t, t + 1, causal);
        Mat dq = xt::zeros<float>({n, d}), dk = xt::zeros<float>({s, d}), dv = xt::zeros<float>({s, dvs});
        tiled_attention_backward(dq, dk, dv, g, q, k, v, f.output, f.logsumexp, t, t + 1, causal);
        CAPTURE(n); CAPTURE(s); CAPTURE(causal); CAPTURE(t);
        CHECK(max_rel(dq, dq0) < 1e-4);
        CHECK(max_rel(dk, dk0) < 1e-4);
        CHECK(max_rel(dv, dv0) < 1e-4);
      }
    }
}

TEST_CASE("tiled and materialised backward match central finite differences in double") {
  Rng rng(6);
  const std::size_t n = 6, s = 6, d = 4, dvs = 3;
  for (bool causal : {false, true}) {
    Mat q = rng.normal_mat(n, d), k = rng.normal_mat(s, d), v = rng.normal_mat(s, dvs), g = rng.normal_mat(n, dvs);
    TiledAttentionResult f = tiled_attention_forward(q, k, v, 4, 4, causal);
    Mat dq = xt::zeros<float>({n, d}), dk = xt::zeros<float>({s, d}), dv = xt::zeros<float>({s, dvs});
    tiled_attention_backward(dq, dk, dv, g, q, k, v, f.output, f.logsumexp, 4, 4, causal);
    Mat dq0 = xt::zeros<float>({n, d}), dk0 = xt::zeros<float>({s, d}), dv0 = xt::zeros<float>({s, dvs});
    attention_backward(dq0, dk0, dv0, g, q, k, v, causal);
    std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end());
    const double h = 1e-6;
    auto check = [&](std::vector<double>& x, const Mat& grad, const Mat& grad0, const char* what) {
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double keep = x[i];
        x[i] = keep + h;
        const double up = loss_double(qd, kd, vd, g, n, s, d, dvs, causal);
        x[i] = keep - h;
        const double down = loss_double(qd, kd, vd, g, n, s, d, dvs, causal);
        x[i] = keep;
        const double fd = (up - down) / (2 * h);
        CAPTURE(what); CAPTURE(i); CAPTURE(causal);
        CHECK(std::abs(grad.data()[i] - fd) < 1e-4 * std::max(1.0, std::abs(fd)));
        CHECK(std::abs(grad0.data()[i] - fd) < 1e-4 * std::max(1.0, std::abs(fd)));
      }
    };
    check(qd, dq, dq0, "dq");
    check(kd, dk, dk0, "dk");
    check(vd, dv, dv0, "dv");
  }
}

TEST_CASE("tiled attention rejects bad shapes and empty tiles") {
  Mat q = xt::zeros<float>({3, 4}), k = xt::zeros<float>({5, 3}), v = xt::zeros<float>({5, 2});
  CHECK_THROWS_AS(tiled_attention_forward(q, k, v, 2, 2), ShapeError);
  Mat k2 = xt::zeros<float>({5, 4});
  CHECK_THROWS_AS(tiled_attention_forward(q, k2, v, 0, 2), ShapeError);
}
