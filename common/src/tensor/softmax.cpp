// Stable softmax with additive masks (see attn/tensor/softmax.hpp).
#include "attn/tensor/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

namespace {
template <class T>
void softmax_row_impl(T* out, const T* x, const T* mask, std::size_t n) {
  const T neg_inf = -std::numeric_limits<T>::infinity();
  T row_max = neg_inf;
  for (std::size_t j = 0; j < n; ++j) {
    const T z = mask ? x[j] + mask[j] : x[j];
    out[j] = z;
    row_max = std::max(row_max, z);  // (row_max < z) ? z : row_max: no branch to mispredict
  }
  if (row_max == neg_inf) {  // fully masked (or empty): attend to nothing
    for (std::size_t j = 0; j < n; ++j) out[j] = T(0);
    return;
  }
  T sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    out[j] = std::exp(out[j] - row_max);  // exp(−∞) = 0 for masked entries
    sum += out[j];
  }
  for (std::size_t j = 0; j < n; ++j) out[j] /= sum;  // sum ≥ 1: the max entry contributes exp(0)
}

template <class T>
T row_max(const T* x, std::size_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::size_t j = 0; j < n; ++j) m = std::max(m, x[j]);
  return m;
}

template <class T>
T logsumexp_row_impl(const T* x, std::size_t n) {
  const T m = row_max(x, n);
  if (m == -std::numeric_limits<T>::infinity()) return m;  // empty, or every entry −∞
  T sum = 0;
  for (std::size_t j = 0; j < n; ++j) sum += std::exp(x[j] - m);
  return m + std::log(sum);  // sum ≥ 1: the max entry contributes exp(0)
}

template <class T>
void log_softmax_row_impl(T* out, const T* x, std::size_t n) {
  const T m = row_max(x, n);
  if (m == -std::numeric_limits<T>::infinity()) {  // every probability 0
    for (std::size_t j = 0; j < n; ++j) out[j] = m;
    return;
  }
  double sum = 0;  // the shift in T, the sum in double
  for (std::size_t j = 0; j < n; ++j) sum += std::exp(double(x[j] - m));
  const T lse = m + T(std::log(sum));
  for (std::size_t j = 0; j < n; ++j) out[j] = x[j] - lse;
}

template <class T>
void softmax_row_backward_impl(T* dx, const T* y, const T* dy, std::size_t n) {
  // forward: y_j = exp(x_j) / Σ_k exp(x_k);  backward: dx_j = y_j (dy_j − Σ_k dy_k y_k)
  T dot = 0;
  for (std::size_t j = 0; j < n; ++j) dot += dy[j] * y[j];
  for (std::size_t j = 0; j < n; ++j) dx[j] += y[j] * (dy[j] - dot);
}
}  // namespace

void softmax_row(float* out, const float* x, const float* mask, std::size_t n) { softmax_row_impl(out, x, mask, n); }
void softmax_row(double* out, const double* x, const double* mask, std::size_t n) {
  softmax_row_impl(out, x, mask, n);
}
void softmax_row_backward(float* dx, const float* y, const float* dy, std::size_t n) {
  softmax_row_backward_impl(dx, y, dy, n);
}
void softmax_row_backward(double* dx, const double* y, const double* dy, std::size_t n) {
  softmax_row_backward_impl(dx, y, dy, n);
}

void softmax_row_temperature(float* out, const float* x, std::size_t n, float temperature) {
  if (!(temperature > 0.0f))
    throw std::invalid_argument("softmax_row_temperature: temperature must be > 0, got " + std::to_string(temperature));
  const float m = row_max(x, n);
  if (m == -std::numeric_limits<float>::infinity()) {  // empty, or nothing to draw
    for (std::size_t j = 0; j < n; ++j) out[j] = 0.0f;
    return;
  }
  std::vector<double> e(n);
  double sum = 0.0;
  for (std::size_t j = 0; j < n; ++j) sum += e[j] = std::exp(double(x[j] - m) / double(temperature));
  for (std::size_t j = 0; j < n; ++j) out[j] = float(e[j] / sum);
}

float logsumexp_row(const float* x, std::size_t n) { return logsumexp_row_impl(x, n); }
double logsumexp_row(const double* x, std::size_t n) { return logsumexp_row_impl(x, n); }
double logsumexp_row_in_double(const float* x, std::size_t n) {
  const std::vector<double> wide(x, x + n);  // exact: every float is a double
  return logsumexp_row_impl(wide.data(), n);
}
void log_softmax_row(float* out, const float* x, std::size_t n) { log_softmax_row_impl(out, x, n); }
void log_softmax_row(double* out, const double* x, std::size_t n) { log_softmax_row_impl(out, x, n); }

Mat softmax(const Mat& x, std::size_t axis) { return softmax(x, Mat{}, axis); }

Mat softmax(const Mat& x, const Mat& mask, std::size_t axis) {
  // x: (R, C), mask: (R, C) or empty -> (R, C)
  const bool has_mask = mask.size() > 0;
  if (has_mask) expect_same_shape("softmax", "x", x, "mask", mask);
  if (axis > 1) throw ShapeError("softmax: axis must be 0 or 1 for a matrix, got " + std::to_string(axis));
  if (axis == 0) {  // columns: transpose, softmax rows, transpose back
    Mat xt = xt::transpose(x);
    Mat mt = has_mask ? Mat(xt::transpose(mask)) : Mat{};
    Mat yt = softmax(xt, mt, 1);
    return xt::transpose(yt);
  }
  Mat y(x.shape());
  const std::size_t rows = x.shape(0), cols = x.shape(1);
  for (std::size_t i = 0; i < rows; ++i)
    softmax_row(y.data() + i * cols, x.data() + i * cols, has_mask ? mask.data() + i * cols : nullptr, cols);
  return y;
}

Tensor3 softmax(const Tensor3& x, const Mat& mask) {
  // x: (H, T, S), mask: (T, S) or empty -> (H, T, S)
  const std::size_t h = x.shape(0), t = x.shape(1), s = x.shape(2);
  const bool has_mask = mask.size() > 0;
  if (has_mask) expect_shape("softmax", "mask", shape_of(mask), {t, s});
  Tensor3 y(x.shape());
  for (std::size_t b = 0; b < h; ++b)
    for (std::size_t i = 0; i < t; ++i)
      softmax_row(y.data() + (b * t + i) * s, x.data() + (b * t + i) * s,
                  has_mask ? mask.data() + i * s : nullptr, s);
  return y;
}

void softmax_rows_backward(Mat& dx, const Mat& y, const Mat& dy) {
  expect_same_shape("softmax_rows_backward", "y", y, "dy", dy);
  expect_same_shape("softmax_rows_backward", "dx", dx, "y", y);
  const std::size_t rows = y.shape(0), cols = y.shape(1);
  for (std::size_t i = 0; i < rows; ++i)
    softmax_row_backward(dx.data() + i * cols, y.data() + i * cols, dy.data() + i * cols, cols);
}

MatD softmax_reference(const Mat& x, const Mat& mask) {
  const std::size_t rows = x.shape(0), cols = x.shape(1);
  const bool has_mask = mask.size() > 0;
  if (has_mask) expect_same_shape("softmax_reference", "x", x, "mask", mask);
  MatD y = xt::zeros<double>({rows, cols});
  for (std::size_t i = 0; i < rows; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < cols; ++j) m = std::max(m, double(x(i, j)) + (has_mask ? mask(i, j) : 0.0));
    if (std::isinf(m) && m < 0) continue;  // fully masked row stays zero
    double sum = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      y(i, j) = std::exp(double(x(i, j)) + (has_mask ? mask(i, j) : 0.0) - m);
      sum += y(i, j);
    }
    for (std::size_t j = 0; j < cols; ++j) y(i, j) /= sum;
  }
  return y;
}

}  // namespace attn
