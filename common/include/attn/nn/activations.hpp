// Element-wise activations and their derivatives (the backward recomputes from the input x):
//   tanh      y = tanh x                    dy/dx = 1 − y²
//   relu      y = max(0, x)                 dy/dx = [x > 0]
//   gelu      y = x·Φ(x) (exact, erf form)  dy/dx = Φ(x) + x·φ(x)      Hendrycks & Gimpel 2016
//   silu      y = x·σ(x)                    dy/dx = σ(x)(1 + x(1 − σ(x)))   (a.k.a. swish)
//   sigmoid   y = σ(x) = 1/(1 + e^−x)       dy/dx = σ(x)(1 − σ(x))
// GELU is the exact erf form (PyTorch's nn.GELU() default), not the tanh approximation.
#pragma once

#include <cstddef>

#include "attn/tensor/tensor_t.hpp"

namespace attn {

enum class Activation { Tanh, Relu, Gelu, Silu, Sigmoid };
const char* activation_name(Activation a);  // "tanh", "relu", …

// Raw form: y[i] = f(x[i]) for i < n; y may alias x.
template <class T> void activation_forward(Activation a, T* y, const T* x, std::size_t n);
// dx[i] += f'(x[i]) · dy[i].
template <class T> void activation_backward(Activation a, T* dx, const T* dy, const T* x, std::size_t n);

// x: (R, C) -> y: (R, C) (resized when needed).
template <class T> void activation_forward(Activation a, MatT<T>& y, const MatT<T>& x);
// dy, x: (R, C) -> dx: (R, C), accumulated.
template <class T> void activation_backward(Activation a, MatT<T>& dx, const MatT<T>& dy, const MatT<T>& x);

}  // namespace attn
