// Linear (fully connected) layer, right-multiplied as the papers write it (Q = X·W_Q):
//   y = x·W + b        x: (N, in), W: (in, out), b: (out,) -> y: (N, out)
// Backward (gradients accumulate, +=):  dx += dy·Wᵀ,  dW += xᵀ·dy,  db += Σ_rows dy.
// A (B, T, in) tensor is treated as B·T rows. Run: ./build/bin/test_core -tc="linear*"
#pragma once

#include <string>

#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

template <class T>
struct LinearT {
  MatT<T> w;  // (in, out)
  VecT<T> b;  // (out,), or empty: no bias
};
using Linear = LinearT<float>;
using LinearD = LinearT<double>;

// W, b ~ U(−1/√in, 1/√in), PyTorch's nn.Linear default.
Linear linear_init(std::size_t in, std::size_t out, Rng& rng, bool bias = true);
// Same shapes, all zeros: the gradient buffer of p.
template <class T> LinearT<T> zeros_like(const LinearT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, Linear& p, Linear& grad);
// Its parameters by name: prefix.w, then prefix.b (see attn/tensor/params.hpp).
template <class P, class F, if_layer<P, LinearT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  f(prefix + ".w", p.w);
  f(prefix + ".b", p.b);
}

// x: (N, in) -> y: (N, out); y is resized when needed.
template <class T> void linear_forward(MatT<T>& y, const MatT<T>& x, const LinearT<T>& p);
// x: (B, T, in) -> y: (B, T, out)
template <class T> void linear_forward(Tensor3T<T>& y, const Tensor3T<T>& x, const LinearT<T>& p);

// dy: (N, out), x: (N, in) -> dx: (N, in) (+=; pass an empty dx to skip it), dp (+=, shapes of p).
template <class T>
void linear_backward(MatT<T>& dx, LinearT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const LinearT<T>& p);
template <class T>
void linear_backward(Tensor3T<T>& dx, LinearT<T>& dp, const Tensor3T<T>& dy, const Tensor3T<T>& x,
                     const LinearT<T>& p);

}  // namespace attn
