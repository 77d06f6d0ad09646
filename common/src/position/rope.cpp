// Rotary position embedding (see attn/position/rope.hpp).
#include "attn/position/rope.hpp"

#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

namespace attn {

RopeTables rope_tables(std::size_t n_positions, std::size_t d, double base) {
  if (d == 0 || d % 2 != 0) throw std::invalid_argument("rope_tables: d must be even and > 0, got " + std::to_string(d));
  RopeTables t;
  t.cos = xt::zeros<float>({n_positions, d / 2});
  t.sin = xt::zeros<float>({n_positions, d / 2});
  for (std::size_t pos = 0; pos < n_positions; ++pos)
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double angle = double(pos) * std::pow(base, -2.0 * double(i) / double(d));  // pos·θ_i
      t.cos(pos, i) = float(std::cos(angle));
      t.sin(pos, i) = float(std::sin(angle));
    }
  return t;
}

namespace {
template <class M>
void check_rope(const char* fn, const M& x, const RopeTables& tab, std::size_t start) {
  expect_shape(fn, "x", shape_of(x), {0, tab.dim()});
  if (start + x.shape(0) > tab.positions())
    throw ShapeError(std::string(fn) + ": rows at positions " + std::to_string(start) + " … " +
                     std::to_string(start + x.shape(0) - 1) + " but the tables cover " + std::to_string(tab.positions()) +
                     " positions " + shape_str(shape_of(tab.cos)));
}
}  // namespace

template <class T>
void rope_forward(MatT<T>& y, const MatT<T>& x, const RopeTables& tab, std::size_t start) {
  // x: (T, d) -> y: (T, d)
  check_rope("rope_forward", x, tab, start);
  if (&y != &x && shape_of(y) != shape_of(x)) y = xt::zeros<T>(x.shape());
  const std::size_t rows = x.shape(0), half = tab.dim() / 2;
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t i = 0; i < half; ++i) {
      const T c = T(tab.cos(start + t, i)), s = T(tab.sin(start + t, i));
      const T x0 = x(t, 2 * i), x1 = x(t, 2 * i + 1);  // read both before writing: y may be x
      y(t, 2 * i) = x0 * c - x1 * s;
      y(t, 2 * i + 1) = x0 * s + x1 * c;
    }
}

template <class T>
void rope_backward(MatT<T>& dx, const MatT<T>& dy, const RopeTables& tab, std::size_t start) {
  // dy: (T, d) -> dx: (T, d) +=
  check_rope("rope_backward", dy, tab, start);
  expect_same_shape("rope_backward", "dx", dx, "dy", dy);
  const std::size_t rows = dy.shape(0), half = tab.dim() / 2;
  for (std::size_t t = 0; t < rows; ++t)
    for (std::size_t i = 0; i < half; ++i) {
      const T c = T(tab.cos(start + t, i)), s = T(tab.sin(start + t, i));
      // in the forward pass this was:
      //   y0 = x0·c − x1·s,   y1 = x0·s + x1·c
      // so ∂L/∂x0 = dy0·c + dy1·s and ∂L/∂x1 = −dy0·s + dy1·c (the transpose rotation, angle −pos·θ_i)
      const T g0 = dy(t, 2 * i), g1 = dy(t, 2 * i + 1);
      dx(t, 2 * i) += g0 * c + g1 * s;
      dx(t, 2 * i + 1) += -g0 * s + g1 * c;
    }
}

template void rope_forward(MatT<float>&, const MatT<float>&, const RopeTables&, std::size_t);
template void rope_forward(MatT<double>&, const MatT<double>&, const RopeTables&, std::size_t);
template void rope_backward(MatT<float>&, const MatT<float>&, const RopeTables&, std::size_t);
template void rope_backward(MatT<double>&, const MatT<double>&, const RopeTables&, std::size_t);

Mat rope_rotate(const Mat& x, const RopeTables& tab, std::size_t start) {
  Mat y;
  rope_forward(y, x, tab, start);
  return y;
}

Tensor3 rope_rotate(const Tensor3& x, const RopeTables& tab, std::size_t start) {
  // x: (H, T, d_head) -> (H, T, d_head), every head rotated by the same positions
  expect_shape("rope_rotate", "x", shape_of(x), {0, 0, tab.dim()});
  Tensor3 y = xt::zeros<float>(x.shape());
  const std::size_t rows = x.shape(1), d = x.shape(2);
  for (std::size_t h = 0; h < x.shape(0); ++h) {
    Mat xh = xt::zeros<float>({rows, d});
    std::copy(x.data() + h * rows * d, x.data() + (h + 1) * rows * d, xh.data());
    rope_forward(xh, xh, tab, start);
    std::copy(xh.data(), xh.data() + rows * d, y.data() + h * rows * d);
  }
  return y;
}

Vec rope_distance_bound(std::size_t d, std::size_t max_distance, double base) {
  if (d == 0 || d % 2 != 0) throw std::invalid_argument("rope_distance_bound: d must be even and > 0, got " + std::to_string(d));
  Vec b = xt::zeros<float>({max_distance + 1});
  for (std::size_t r = 0; r <= max_distance; ++r) {
    std::complex<double> s = 0.0;  // S_j, the partial sum up to j
    double acc = 0.0;
    for (std::size_t i = 0; i < d / 2; ++i) {
      s += std::polar(1.0, double(r) * std::pow(base, -2.0 * double(i) / double(d)));
      acc += std::abs(s);
    }
    b(r) = float(acc * 2.0 / double(d));
  }
  return b;
}

}  // namespace attn
