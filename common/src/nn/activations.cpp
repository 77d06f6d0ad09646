// Element-wise activations (see attn/nn/activations.hpp).
#include "attn/nn/activations.hpp"

#include <cmath>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::Tanh: return "tanh";
    case Activation::Relu: return "relu";
    case Activation::Gelu: return "gelu";
    case Activation::Silu: return "silu";
    case Activation::Sigmoid: return "sigmoid";
  }
  return "?";
}

namespace {
constexpr double kInvSqrt2 = 0.70710678118654752440;   // 1/√2, in Φ(x) = (1 + erf(x/√2))/2
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π), in φ(x) = e^(−x²/2)/√(2π)

template <class T> T act(Activation a, T x) {
  switch (a) {
    case Activation::Tanh: return std::tanh(x);
    case Activation::Relu: return x > T(0) ? x : T(0);
    case Activation::Gelu: return x * T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2)));
    case Activation::Silu: return x * sigmoid_t(x);
    case Activation::Sigmoid: return sigmoid_t(x);
  }
  return x;
}

// y = x > 0 ? x : 0 (NaN -> 0, as act()). maxps(x, 0) computes exactly that, four floats at a time;
// the compiler keeps a compare-and-branch for the scalar form, which mispredicts on random signs.
template <class T> void relu(T* y, const T* x, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
    const __m128 zero = _mm_setzero_ps();
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_max_ps(_mm_loadu_ps(x + i), zero));
  }
#endif
  for (; i < n; ++i) y[i] = act(Activation::Relu, x[i]);
}

template <class T> T act_grad(Activation a, T x) {
  switch (a) {
    case Activation::Tanh: { const T y = std::tanh(x); return T(1) - y * y; }
    case Activation::Relu: return x > T(0) ? T(1) : T(0);
    case Activation::Gelu:
      return T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2))) + x * T(kInvSqrt2Pi) * std::exp(-T(0.5) * x * x);
    case Activation::Silu: { const T s = sigmoid_t(x); return s * (T(1) + x * (T(1) - s)); }
    case Activation::Sigmoid: { const T s = sigmoid_t(x); return s * (T(1) - s); }
  }
  return T(1);
}
}  // namespace

template <class T>
void activation_forward(Activation a, T* y, const T* x, std::size_t n) {
  if (a == Activation::Relu) {  // the Transformer's FFN: signs are a coin flip, so no branch per element
    relu(y, x, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) y[i] = act(a, x[i]);
}

template <class T>
void activation_backward(Activation a, T* dx, const T* dy, const T* x, std::size_t n) {
  // forward: y[i] = f(x[i])
  if (a == Activation::Relu) {
    for (std::size_t i = 0; i < n; ++i) dx[i] += T(x[i] > T(0)) * dy[i];  // branch-free act_grad(Relu)
    return;
  }
  for (std::size_t i = 0; i < n; ++i) dx[i] += act_grad(a, x[i]) * dy[i];
}

template <class T>
void activation_forward(Activation a, MatT<T>& y, const MatT<T>& x) {
  // x: (R, C) -> y: (R, C)
  ensure_shape(y, shape_of(x));
  activation_forward(a, y.data(), x.data(), x.size());
}

template <class T>
void activation_backward(Activation a, MatT<T>& dx, const MatT<T>& dy, const MatT<T>& x) {
  // dy, x: (R, C) -> dx: (R, C)
  expect_same_shape("activation_backward", "dy", dy, "x", x);
  expect_same_shape("activation_backward", "dx", dx, "x", x);
  activation_backward(a, dx.data(), dy.data(), x.data(), x.size());
}

#define ATTN_INSTANTIATE_ACT(T)                                                               \
  template void activation_forward(Activation, T*, const T*, std::size_t);                    \
  template void activation_backward(Activation, T*, const T*, const T*, std::size_t);         \
  template void activation_forward(Activation, MatT<T>&, const MatT<T>&);                     \
  template void activation_backward(Activation, MatT<T>&, const MatT<T>&, const MatT<T>&);
ATTN_INSTANTIATE_ACT(float)
ATTN_INSTANTIATE_ACT(double)

}  // namespace attn
