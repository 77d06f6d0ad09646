// Tensor aliases and shape contracts shared by every chapter.
// All tensors are float32, row-major, fixed-rank xtensor containers; double only appears in
// references and gradient checks. A public function checks its shapes on entry and throws
// attn::ShapeError naming itself and both shapes when they do not fit.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace attn {

using Vec = xt::xtensor<float, 1>;      // (n,)
using Mat = xt::xtensor<float, 2>;      // (rows, cols)
using Tensor3 = xt::xtensor<float, 3>;  // e.g. (heads, T, d_head)
using Tensor4 = xt::xtensor<float, 4>;  // e.g. (batch, heads, T, d_head)
using MatD = xt::xtensor<double, 2>;    // references and gradient checks only
using Labels = std::vector<std::string>;
using Shape = std::vector<std::size_t>;

// Thrown when a tensor's shape does not fit a function's contract.
class ShapeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// "(3, 4)" for a shape.
std::string shape_str(const Shape& shape);

template <class E>
Shape shape_of(const E& e) {
  return Shape(e.shape().begin(), e.shape().end());
}

// Throws ShapeError("fn: what has shape (a, b), expected (c, d)") unless got == expected.
// A 0 in `expected` means "any size" for that axis.
void expect_shape(const char* fn, const char* what, const Shape& got, const Shape& expected);

// Throws ShapeError("fn: a (shape) and b (shape): <reason>") — for relations between two inputs.
[[noreturn]] void shape_mismatch(const char* fn, const char* a, const Shape& sa, const char* b,
                                 const Shape& sb, const std::string& reason);

// Convenience: compare two tensors' shapes for an exact match.
template <class A, class B>
void expect_same_shape(const char* fn, const char* na, const A& a, const char* nb, const B& b) {
  if (shape_of(a) != shape_of(b)) shape_mismatch(fn, na, shape_of(a), nb, shape_of(b), "must match");
}

}  // namespace attn
