// Element-wise activations (see attn/nn/activations.hpp).
#include "attn/nn/activations.hpp"

#include <cmath>

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
  for (std::size_t i = 0; i < n; ++i) y[i] = act(a, x[i]);
}

template <class T>
void activation_backward(Activation a, T* dx, const T* dy, const T* x, std::size_t n) {
  // forward: y[i] = f(x[i])
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
