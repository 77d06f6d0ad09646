// Softmax against the double reference on awkward sizes, and its edge cases: −∞ masks, fully
// masked rows (zeros, never NaN), logits of ±1e4, axis 0, per-head masks, and the backward
// against central finite differences (double). Tolerance 1e-6 on probabilities: float32 exp and
// division carry a few ulps (~1e-7) of error per entry.
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
