// Scaled dot-product attention as a trainable layer: the forward of attn/attention/attention.hpp, templated
// on the scalar type, plus its backward (Vaswani et al. 2017, eq. 1):
//   S = scale · Q·Kᵀ,   P = softmax(S + M),   O = P·V
// Backward, restating each forward line:
//   O = P·V                ->  dP = dO·Vᵀ,  dV += Pᵀ·dO
//   P = softmax(S + M)     ->  dS = P ⊙ (dP − rowsum(dP ⊙ P))   (masked entries have P = 0: no gradient)
//   S = scale · Q·Kᵀ       ->  dQ += scale · dS·K,  dK += scale · dSᵀ·Q
#pragma once

#include "attn/tensor/tensor_t.hpp"

namespace attn {

// q: (T, d_k), k: (S, d_k), v: (S, d_v), mask: (T, S) additive or empty -> out: (T, d_v),
// weights: (T, S) (= P, kept for the backward and for heatmaps). scale <= 0 means 1/√d_k.
template <class T>
void sdpa_forward(MatT<T>& out, MatT<T>& weights, const MatT<T>& q, const MatT<T>& k, const MatT<T>& v,
                  const MatT<T>& mask = {}, T scale = T(0));
// dout: (T, d_v) -> dq: (T, d_k), dk: (S, d_k), dv: (S, d_v), all accumulated (+=).
template <class T>
void sdpa_backward(MatT<T>& dq, MatT<T>& dk, MatT<T>& dv, const MatT<T>& dout, const MatT<T>& weights,
                   const MatT<T>& q, const MatT<T>& k, const MatT<T>& v, T scale = T(0));

}  // namespace attn
