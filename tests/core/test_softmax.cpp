// Softmax against the double reference on awkward sizes, and its edge cases: −∞ masks, fully
// masked rows (zeros, never NaN), logits of ±1e4, axis 0, per-head masks, and the backward
// against central finite differences (double). Tolerance 1e-6 on probabilities: float32 exp and
// division carry a few ulps (~1e-7) of error per entry. The rest of the family (log-sum-exp,
// log-softmax, softmax at a temperature) against long-double and double references.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

namespace {
const float kInf = std::numeric_limits<float>::infinity();
bool all_finite(const Mat& m) {
  for (float x : m)
    if (!std::isfinite(x)) return false;
  return true;
}
}  // namespace

TEST_CASE("softmax matches the reference on awkward sizes, with and without masks") {
  Rng rng(2);
  for (std::size_t r : {1u, 7u, 33u, 129u})
    for (std::size_t c : {1u, 7u, 33u, 129u}) {
      CAPTURE(r); CAPTURE(c);
      const Mat x = rng.normal_mat(r, c, 3.0f);
      CHECK(max_abs_diff(softmax(x), softmax_reference(x)) < 1e-6);
      const Mat m = rng.uniform_mat(r, c, -2.0f, 2.0f);  // a finite additive bias (ALiBi-like)
      CHECK(max_abs_diff(softmax(x, m), softmax_reference(x, m)) < 1e-6);
      if (c >= r) CHECK(max_abs_diff(softmax(x, causal_mask(r, c)), softmax_reference(x, causal_mask(r, c))) < 1e-6);
    }
}

TEST_CASE("softmax: −∞ gives exactly 0, a fully masked row gives zeros, not NaN") {
  const Mat x = {{1.0f, 2.0f, 3.0f}, {1.0f, 2.0f, 3.0f}};
  const Mat mask = {{0.0f, -kInf, 0.0f}, {-kInf, -kInf, -kInf}};
  const Mat y = softmax(x, mask);
  CHECK(y(0, 1) == 0.0f);
  CHECK(y(0, 0) + y(0, 2) == doctest::Approx(1.0f));
  CHECK(all_finite(y));
  CHECK(y(1, 0) == 0.0f);
  CHECK(y(1, 1) == 0.0f);
  CHECK(y(1, 2) == 0.0f);
}

TEST_CASE("softmax: logits of ±1e4 stay finite and correct") {
  const Mat x = {{1e4f, -1e4f, 0.0f}, {1e4f, 1e4f - 1.0f, -1e4f}};
  const Mat y = softmax(x);
  CHECK(all_finite(y));
  CHECK(y(0, 0) == doctest::Approx(1.0f));
  CHECK(y(1, 0) == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))).epsilon(1e-6));
  CHECK(max_abs_diff(y, softmax_reference(x)) < 1e-6);
}

TEST_CASE("softmax along axis 0 normalises columns") {
  Rng rng(4);
  const Mat x = rng.normal_mat(7, 5);
  const Mat y = softmax(x, 0);
  for (std::size_t j = 0; j < 5; ++j) {
    double s = 0.0;
    for (std::size_t i = 0; i < 7; ++i) s += y(i, j);
    CHECK(s == doctest::Approx(1.0).epsilon(1e-6));
  }
  const Mat xt_ = xt::transpose(x);
  const Mat yt_ = xt::transpose(softmax(xt_, 1));
  CHECK(max_abs_diff(y, yt_) < 1e-7);
  CHECK_THROWS_AS(softmax(x, 2), ShapeError);
}

TEST_CASE("softmax on (H, T, S) applies the same mask to every head") {
  Rng rng(6);
  const Tensor3 x = rng.normal_tensor3(3, 5, 5);
  const Mat m = causal_mask(5);
  const Tensor3 y = softmax(x, m);
  for (std::size_t h = 0; h < 3; ++h) CHECK(max_abs_diff(slice_of(y, h), softmax_reference(slice_of(x, h), m)) < 1e-6);
  CHECK_THROWS_AS(softmax(x, causal_mask(4)), ShapeError);
}

TEST_CASE("softmax rejects a mask of the wrong shape, naming both shapes") {
  const Mat x = xt::zeros<float>({3, 4});
  CHECK_THROWS_WITH_AS(softmax(x, Mat(xt::zeros<float>({3, 5}))), doctest::Contains("softmax: x (3, 4) and mask (3, 5)"), ShapeError);
}

TEST_CASE("softmax_rows_backward matches central finite differences") {
  Rng rng(8);
  const Mat x = rng.normal_mat(3, 5), dy = rng.normal_mat(3, 5);
  const Mat y = softmax(x);
  Mat dx = xt::zeros<float>({3, 5});
  softmax_rows_backward(dx, y, dy);
  // loss = Σ dy ⊙ softmax(x), evaluated in double.
  auto loss = [&](const Mat& xx) {
    const MatD p = softmax_reference(xx);
    double l = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) l += double(dy.data()[i]) * p.data()[i];
    return l;
  };
  const double h = 1e-3;  // float inputs: a step well above float eps, loss evaluated in double
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 5; ++j) {
      Mat xp = x, xm = x;
      xp(i, j) += float(h);
      xm(i, j) -= float(h);
      const double step = double(xp(i, j)) - double(xm(i, j));
      const double fd = (loss(xp) - loss(xm)) / step;
      CHECK(std::abs(fd - dx(i, j)) < 1e-4);
    }
  // Gradients accumulate: calling twice doubles them.
  Mat dx2 = dx;
  softmax_rows_backward(dx2, y, dy);
  CHECK(max_abs_diff(dx2, Mat(2.0f * dx)) < 1e-6);
  // The row kernel in double (what the double gradient checks run) agrees with the float rows.
  for (std::size_t i = 0; i < 3; ++i) {
    std::vector<double> yd(5), dyd(5), dxd(5, 0.0);
    for (std::size_t j = 0; j < 5; ++j) yd[j] = y(i, j), dyd[j] = dy(i, j);
    softmax_row_backward(dxd.data(), yd.data(), dyd.data(), 5);
    for (std::size_t j = 0; j < 5; ++j) CHECK(std::abs(dxd[j] - double(dx(i, j))) < 1e-6);
  }
}

TEST_CASE("softmax_row: the one kernel in float and double, edge cases included") {
  Rng rng(9);
  const Mat x = rng.normal_mat(5, 33), mask = causal_mask(5, 33);
  const MatD ref = softmax_reference(x, mask);
  std::vector<float> yf(33);
  std::vector<double> xd(33), md(33), yd(33);
  for (std::size_t i = 0; i < 5; ++i) {
    softmax_row(yf.data(), &x(i, 0), &mask(i, 0), 33);
    for (std::size_t j = 0; j < 33; ++j) xd[j] = x(i, j), md[j] = mask(i, j);
    softmax_row(yd.data(), xd.data(), md.data(), 33);
    for (std::size_t j = 0; j < 33; ++j) {
      CHECK(std::abs(yd[j] - ref(i, j)) < 1e-15);         // double: the reference to rounding
      CHECK(std::abs(double(yf[j]) - ref(i, j)) < 1e-6);  // float: a few ulps per entry
    }
  }
  // The matrix form is the row kernel applied row by row: identical bits.
  const Mat y = softmax(x, mask);
  for (std::size_t j = 0; j < 33; ++j) {
    softmax_row(yf.data(), &x(4, 0), &mask(4, 0), 33);
    CHECK(y(4, j) == yf[j]);
  }
  // In place, with no mask; n = 0 writes nothing; a fully masked row (double) is zeros.
  std::vector<float> z = {1.0f, 2.0f, 3.0f};
  softmax_row(z.data(), z.data(), nullptr, 3);
  CHECK(z[0] + z[1] + z[2] == doctest::Approx(1.0f));
  CHECK(z[2] > z[1]);
  float untouched = 7.0f;
  softmax_row(&untouched, &untouched, nullptr, 0);
  CHECK(untouched == 7.0f);
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> masked = {ninf, ninf}, out(2, 5.0);
  softmax_row(out.data(), masked.data(), nullptr, 2);
  CHECK(out[0] == 0.0);
  CHECK(out[1] == 0.0);
}

namespace {
// log Σ exp(x) in long double with plain loops: the reference the family is checked against.
long double lse_reference(const std::vector<double>& x) {
  long double m = -std::numeric_limits<long double>::infinity(), s = 0;
  for (double v : x) m = std::max<long double>(m, v);
  for (double v : x) s += std::exp((long double)v - m);
  return m + std::log(s);
}
}  // namespace

TEST_CASE("logsumexp_row: float, double and float-in-double against a long-double reference") {
  Rng rng(11);
  for (std::size_t n : {1u, 2u, 7u, 33u, 129u, 1000u})
    for (float scale : {0.1f, 3.0f, 40.0f}) {
      CAPTURE(n); CAPTURE(scale);
      const Mat x = rng.normal_mat(1, n, scale);
      std::vector<double> xd(x.begin(), x.end());
      const long double ref = lse_reference(xd);
      CHECK(std::abs(double(logsumexp_row(x.data(), n)) - double(ref)) < 1e-5 * std::max(1.0, std::abs(double(ref))));
      CHECK(std::abs(logsumexp_row(xd.data(), n) - double(ref)) < 1e-13 * std::max(1.0, std::abs(double(ref))));
      CHECK(logsumexp_row_in_double(x.data(), n) == logsumexp_row(xd.data(), n));  // the same sums in double
    }
  // ±1e4 stay finite (a naive log Σ exp would overflow); equal entries give M + log n.
  const std::vector<float> big = {1e4f, 1e4f, -1e4f};
  CHECK(logsumexp_row(big.data(), 3) == doctest::Approx(1e4 + std::log(2.0)));
  const std::vector<double> same(5, -3.0);
  CHECK(logsumexp_row(same.data(), 5) == doctest::Approx(-3.0 + std::log(5.0)));
  // Empty and all −∞: the log of an empty sum, −∞ (never NaN).
  CHECK(logsumexp_row(static_cast<const float*>(nullptr), 0) == -kInf);
  const std::vector<float> none = {-kInf, -kInf};
  CHECK(logsumexp_row(none.data(), 2) == -kInf);
  CHECK(logsumexp_row_in_double(none.data(), 2) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("log_softmax_row: x − logsumexp(x), finite where softmax underflows, in place") {
  Rng rng(12);
  for (std::size_t n : {1u, 7u, 33u, 512u}) {
    CAPTURE(n);
    const Mat x = rng.normal_mat(1, n, 4.0f);
    const MatD p = softmax_reference(x);
    std::vector<float> y(n);
    log_softmax_row(y.data(), x.data(), n);
    std::vector<double> xd(x.begin(), x.end()), yd(n);
    log_softmax_row(yd.data(), xd.data(), n);
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(std::abs(double(y[j]) - std::log(p(0, j))) < 1e-5);
      CHECK(std::abs(yd[j] - std::log(p(0, j))) < 1e-12);
    }
    std::vector<float> in_place(x.begin(), x.end());
    log_softmax_row(in_place.data(), in_place.data(), n);
    CHECK(in_place == y);
  }
  // A gap of 200 nats: softmax gives exactly 0 in float, log-softmax the finite −200.
  std::vector<float> gap = {0.0f, -200.0f}, out(2);
  log_softmax_row(out.data(), gap.data(), 2);
  CHECK(out[1] == doctest::Approx(-200.0f));
  softmax_row(gap.data(), gap.data(), nullptr, 2);
  CHECK(gap[1] == 0.0f);
  // All −∞: every probability is 0, every log-probability −∞.
  std::vector<float> none = {-kInf, -kInf, -kInf};
  log_softmax_row(none.data(), none.data(), 3);
  for (float v : none) CHECK(v == -kInf);
}

TEST_CASE("softmax_row_temperature: softmax(x / τ), sharper below 1, flatter above, rejects τ ≤ 0") {
  Rng rng(13);
  const Mat x = rng.normal_mat(1, 33, 2.0f);
  for (float tau : {0.25f, 1.0f, 3.0f}) {
    CAPTURE(tau);
    const Mat scaled = x / tau;
    const MatD ref = softmax_reference(scaled);
    std::vector<float> p(33);
    softmax_row_temperature(p.data(), x.data(), 33, tau);
    double sum = 0;
    for (std::size_t j = 0; j < 33; ++j) {
      CHECK(std::abs(double(p[j]) - ref(0, j)) < 1e-6);
      sum += p[j];
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  }
  const std::vector<float> two = {1.0f, 0.0f};
  std::vector<float> cold(2), hot(2);
  softmax_row_temperature(cold.data(), two.data(), 2, 0.5f);
  softmax_row_temperature(hot.data(), two.data(), 2, 2.0f);
  CHECK(cold[0] == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))));
  CHECK(hot[0] == doctest::Approx(1.0 / (1.0 + std::exp(-0.5))));
  const std::vector<float> none = {-kInf, -kInf};
  std::vector<float> zeros(2, 5.0f);
  softmax_row_temperature(zeros.data(), none.data(), 2, 1.0f);
  CHECK(zeros[0] == 0.0f);
  CHECK(zeros[1] == 0.0f);
  CHECK_THROWS_WITH_AS(softmax_row_temperature(cold.data(), two.data(), 2, 0.0f),
                       doctest::Contains("temperature must be > 0"), std::invalid_argument);
  CHECK_THROWS_AS(softmax_row_temperature(cold.data(), two.data(), 2, std::nanf("")), std::invalid_argument);
}
