// Linear layer (see attn/nn/linear.hpp): one gemm forward, two gemms backward.
#include "attn/nn/linear.hpp"

#include <cmath>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

Linear linear_init(std::size_t in, std::size_t out, Rng& rng, bool bias) {
  const float bound = 1.0f / std::sqrt(float(in));
  Linear p;
  p.w = rng.uniform_mat(in, out, -bound, bound);
  if (bias) {
    p.b = Vec::from_shape({out});
    for (auto& x : p.b) x = rng.uniform(-bound, bound);
  }
  return p;
}

template <class T>
LinearT<T> zeros_like(const LinearT<T>& p) {
  LinearT<T> g;
  g.w = xt::zeros<T>(p.w.shape());
  g.b = xt::zeros<T>(p.b.shape());
  return g;
}

void register_params(ParamRegistry& reg, const std::string& prefix, Linear& p, Linear& grad) {
  register_visited(reg, p, grad, [&](auto& layer, auto&& f) { visit_params(layer, prefix, f); });
}

namespace {

// The shared kernel on N rows: x (N, in) -> y (N, out).
template <class T>
void linear_rows_forward(T* y, const T* x, const LinearT<T>& p, std::size_t n) {
  const std::size_t in = p.w.shape(0), out = p.w.shape(1);
  gemm_raw(Op::N, Op::N, n, out, in, T(1), x, in, p.w.data(), out, T(0), y, out);  // y = x·W
  if (p.b.size() > 0)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < out; ++j) y[i * out + j] += p.b(j);  // y += b
}

template <class T>
void linear_rows_backward(T* dx, LinearT<T>& dp, const T* dy, const T* x, const LinearT<T>& p, std::size_t n) {
  const std::size_t in = p.w.shape(0), out = p.w.shape(1);
  // forward: y = x·W + b
  if (dx) gemm_raw(Op::N, Op::T, n, in, out, T(1), dy, out, p.w.data(), out, T(1), dx, in);  // dx += dy·Wᵀ
  gemm_raw(Op::T, Op::N, in, out, n, T(1), x, in, dy, out, T(1), dp.w.data(), out);          // dW += xᵀ·dy
  if (p.b.size() > 0)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < out; ++j) dp.b(j) += dy[i * out + j];  // db += Σ_rows dy
}

template <class T>
void check_params(const char* fn, const LinearT<T>& p) {
  if (p.b.size() > 0) expect_shape(fn, "b", shape_of(p.b), {p.w.shape(1)});
}

template <class T>
void check_grads(const char* fn, const LinearT<T>& dp, const LinearT<T>& p) {
  expect_same_shape(fn, "dp.w", dp.w, "w", p.w);
  if (p.b.size() > 0) expect_same_shape(fn, "dp.b", dp.b, "b", p.b);
}

}  // namespace

template <class T>
void linear_forward(MatT<T>& y, const MatT<T>& x, const LinearT<T>& p) {
  // x: (N, in), W: (in, out), b: (out,) -> y: (N, out)
  check_params("linear_forward", p);
  expect_shape("linear_forward", "x", shape_of(x), {0, p.w.shape(0)});
  ensure_shape(y, {x.shape(0), p.w.shape(1)});
  linear_rows_forward(y.data(), x.data(), p, x.shape(0));
}

template <class T>
void linear_forward(Tensor3T<T>& y, const Tensor3T<T>& x, const LinearT<T>& p) {
  // x: (B, T, in) -> y: (B, T, out)
  check_params("linear_forward", p);
  expect_shape("linear_forward", "x", shape_of(x), {0, 0, p.w.shape(0)});
  ensure_shape(y, {x.shape(0), x.shape(1), p.w.shape(1)});
  linear_rows_forward(y.data(), x.data(), p, x.shape(0) * x.shape(1));
}

template <class T>
void linear_backward(MatT<T>& dx, LinearT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const LinearT<T>& p) {
  // dy: (N, out), x: (N, in) -> dx: (N, in), dW: (in, out), db: (out,)
  const char* fn = "linear_backward";
  check_grads(fn, dp, p);
  expect_shape(fn, "x", shape_of(x), {0, p.w.shape(0)});
  expect_shape(fn, "dy", shape_of(dy), {x.shape(0), p.w.shape(1)});
  const bool want_dx = wants_grad(fn, "dx", dx, shape_of(x));
  linear_rows_backward(want_dx ? dx.data() : nullptr, dp, dy.data(), x.data(), p, x.shape(0));
}

template <class T>
void linear_backward(Tensor3T<T>& dx, LinearT<T>& dp, const Tensor3T<T>& dy, const Tensor3T<T>& x,
                     const LinearT<T>& p) {
  // dy: (B, T, out), x: (B, T, in) -> dx: (B, T, in)
  const char* fn = "linear_backward";
  check_grads(fn, dp, p);
  expect_shape(fn, "x", shape_of(x), {0, 0, p.w.shape(0)});
  expect_shape(fn, "dy", shape_of(dy), {x.shape(0), x.shape(1), p.w.shape(1)});
  const bool want_dx = wants_grad(fn, "dx", dx, shape_of(x));
  linear_rows_backward(want_dx ? dx.data() : nullptr, dp, dy.data(), x.data(), p, x.shape(0) * x.shape(1));
}

#define ATTN_INSTANTIATE_LINEAR(T)                                                                     \
  template LinearT<T> zeros_like(const LinearT<T>&);                                                   \
  template void linear_forward(MatT<T>&, const MatT<T>&, const LinearT<T>&);                           \
  template void linear_forward(Tensor3T<T>&, const Tensor3T<T>&, const LinearT<T>&);                   \
  template void linear_backward(MatT<T>&, LinearT<T>&, const MatT<T>&, const MatT<T>&, const LinearT<T>&); \
  template void linear_backward(Tensor3T<T>&, LinearT<T>&, const Tensor3T<T>&, const Tensor3T<T>&,     \
                                const LinearT<T>&);
ATTN_INSTANTIATE_LINEAR(float)
ATTN_INSTANTIATE_LINEAR(double)

}  // namespace attn
