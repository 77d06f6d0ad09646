// ALiBi, attention with linear biases (Press, Smith & Lewis 2021, "Train Short, Test Long", §3):
// no position vectors at all; each head adds a fixed penalty proportional to the distance:
//   scores_h(i, j) = q_i·k_j / √d_k − m_h·|i − j|,    m_h = 2^(−8h/H),  h = 1 … H
// (the paper's causal form is m_h·(j − i) for j ≤ i; |i − j| is the same there and also serves
// bidirectional attention). Slope 0 removes the bias: no positional information at all.
#pragma once

#include <cstddef>

#include "attn/attention/attention.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

// -> (n_heads,): the geometric sequence 2^(−8/H), 2^(−16/H), …, 2^(−8) (Press et al. §3). For H not
// a power of 2, the authors' rule (their reference code, get_slopes): the n = 2^⌊log2 H⌋ slopes of n
// heads, then the odd-numbered slopes of 2n heads, 2^(−8·1/2n), 2^(−8·3/2n), …, for the other H − n.
Vec alibi_slopes(std::size_t n_heads);

// slopes: (H,) -> bias: (H, t_q, t_k), bias(h, i, j) = −m_h·|p_i − j| with query i at position
// p_i = t_k − t_q + i (the last t_q positions: t_q == t_k for a whole sequence, t_q = 1 when decoding
// with a cache). t_q ≤ t_k (ShapeError otherwise). bias is resized.
template <class T>
void alibi_bias_forward(Tensor3T<T>& bias, const VecT<T>& slopes, std::size_t t_q, std::size_t t_k);
// dbias: (H, t_q, t_k) -> dslopes: (H,), accumulated: dm_h += Σ_ij −|p_i − j|·dbias(h, i, j).
template <class T>
void alibi_bias_backward(VecT<T>& dslopes, const Tensor3T<T>& dbias);

// Allocating form of alibi_bias_forward for a whole sequence: (H, T, T).
Tensor3 alibi_bias(const Vec& slopes, std::size_t T);

// Attention with one additive bias per head: q: (H, T, d_k), k: (H, S, d_k), v: (H, S, d_v),
// bias: (H, T, S), mask: (T, S) shared or empty -> per head softmax(q·kᵀ·scale + bias_h + mask)·v.
// scale <= 0 means 1/√d_k.
AttentionResult3 attention_with_bias(const Tensor3& q, const Tensor3& k, const Tensor3& v, const Tensor3& bias,
                                     const Mat& mask = {}, float scale = 0.0f);

}  // namespace attn
