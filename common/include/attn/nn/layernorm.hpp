// Normalisation layers over the last axis of x: (N, C) (a (B, T, C) tensor is B·T rows).
//   LayerNorm (Ba et al. 2016):  y = (x − μ) / √(σ² + ε) · γ + β,   μ, σ² over the C features
//   RMSNorm (Zhang & Sennrich 2019): y = x / √(mean(x²) + ε) · γ     (no centring, no β)
// The forward saves μ and rstd = 1/√(…) per row for the backward.
#pragma once

#include <string>

#include "attn/tensor/params.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

template <class T>
struct NormT {
  VecT<T> gamma;  // (C,) scale, initialised to 1
  VecT<T> beta;   // (C,) shift, initialised to 0; empty for RMSNorm
};
using Norm = NormT<float>;
using NormD = NormT<double>;

Norm layernorm_init(std::size_t channels);  // γ = 1, β = 0
Norm rmsnorm_init(std::size_t channels);    // γ = 1, no β
template <class T> NormT<T> zeros_like(const NormT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, Norm& p, Norm& grad);

// x: (N, C) -> y: (N, C), mean: (N,), rstd: (N,). ε = 1e-5 is PyTorch's default.
template <class T>
void layernorm_forward(MatT<T>& y, VecT<T>& mean, VecT<T>& rstd, const MatT<T>& x, const NormT<T>& p,
                       T eps = T(1e-5));
// dy, x: (N, C) -> dx: (N, C) (+=), dp.gamma, dp.beta (+=).
template <class T>
void layernorm_backward(MatT<T>& dx, NormT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const VecT<T>& mean,
                        const VecT<T>& rstd, const NormT<T>& p);

// x: (N, C) -> y: (N, C), rstd: (N,). ε = 1e-6 as in LLaMA.
template <class T>
void rmsnorm_forward(MatT<T>& y, VecT<T>& rstd, const MatT<T>& x, const NormT<T>& p, T eps = T(1e-6));
template <class T>
void rmsnorm_backward(MatT<T>& dx, NormT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const VecT<T>& rstd,
                      const NormT<T>& p);

}  // namespace attn
