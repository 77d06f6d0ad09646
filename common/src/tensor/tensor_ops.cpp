// Small shared tensor utilities (see attn/tensor/tensor_ops.hpp).
#include "attn/tensor/tensor_ops.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

namespace attn {

Vec row_of(const Mat& m, std::size_t i) {
  if (i >= m.shape(0)) throw ShapeError("row_of: row " + std::to_string(i) + " of a matrix with " + std::to_string(m.shape(0)) + " rows");
  return xt::view(m, i, xt::all());
}

Mat slice_of(const Tensor3& t, std::size_t i) {
  if (i >= t.shape(0)) throw ShapeError("slice_of: slice " + std::to_string(i) + " of " + std::to_string(t.shape(0)));
  return xt::view(t, i, xt::all(), xt::all());
}

namespace {
template <class A, class B>
double max_diff(const char* fn, const A& a, const B& b) {
  if (shape_of(a) != shape_of(b)) shape_mismatch(fn, "a", shape_of(a), "b", shape_of(b), "must match");
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(double(a.data()[i]) - double(b.data()[i]));
    if (std::isnan(d)) return d;  // NaN must never look like agreement
    m = std::max(m, d);
  }
  return m;
}
}  // namespace

double max_abs_diff(const Vec& a, const Vec& b) { return max_diff("max_abs_diff", a, b); }
double max_abs_diff(const Mat& a, const Mat& b) { return max_diff("max_abs_diff", a, b); }
double max_abs_diff(const Tensor3& a, const Tensor3& b) { return max_diff("max_abs_diff", a, b); }
double max_abs_diff(const Mat& a, const MatD& b) { return max_diff("max_abs_diff", a, b); }

std::vector<int> argmax_rows(const Mat& x) {
  std::vector<int> out(x.shape(0));
  const std::size_t v = x.shape(1);
  if (x.shape(0) > 0 && v == 0) throw ShapeError("argmax_rows: x " + shape_str(shape_of(x)) + " has rows of no entries");
  for (std::size_t i = 0; i < x.shape(0); ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < v; ++j)
      if (x(i, j) > x(i, best)) best = j;
    out[i] = int(best);
  }
  return out;
}

}  // namespace attn
