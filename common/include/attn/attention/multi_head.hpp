// Multi-head attention (Vaswani et al. 2017, §3.2.2) with grouped K/V heads (GQA, Ainslie et al.
// 2023; MQA when n_kv_heads = 1, plain MHA when n_kv_heads = n_heads). Right-multiplied:
//   Q = Xq·W_Q + b_Q   (B, T, H·dh)      K = Xkv·W_K + b_K,  V = Xkv·W_V + b_V   (B, S, Hkv·dh)
//   head h:  O_h = softmax(Q_h·K_gᵀ/√dh + M)·V_g,   g = h / (H / Hkv)   (query heads share K/V by group)
//   concat = [O_1 … O_H]  (B, T, H·dh),   out = concat·W_O + b_O   (B, T, C)
// Self-attention passes the same tensor as xq and xkv (and the same gradient buffer for dxq and
// dxkv: gradients accumulate). Head h of Q is the column block [h·dh, (h+1)·dh) — no split copies.
#pragma once

#include <string>

#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

template <class T>
struct MultiHeadT {
  std::size_t n_heads = 1;     // H
  std::size_t n_kv_heads = 1;  // Hkv, divides H
  MatT<T> w_q;                 // (C, H·dh)
  MatT<T> w_k, w_v;            // (C, Hkv·dh)
  MatT<T> w_o;                 // (H·dh, C)
  VecT<T> b_q, b_k, b_v, b_o;  // biases, or all empty
  std::size_t d_head() const { return w_q.shape(1) / n_heads; }
};
using MultiHead = MultiHeadT<float>;
using MultiHeadD = MultiHeadT<double>;

// d_head = d_model / n_heads; weights U(−1/√C, 1/√C), biases (if any) 0.
MultiHead multi_head_init(std::size_t d_model, std::size_t n_heads, std::size_t n_kv_heads, Rng& rng,
                          bool bias = true);
template <class T> MultiHeadT<T> zeros_like(const MultiHeadT<T>& p);
// The same weights in double (the finite-difference checks of the models built on it).
MultiHeadD to_double(const MultiHead& p);
void register_params(ParamRegistry& reg, const std::string& prefix, MultiHead& p, MultiHead& grad);

template <class T>
struct MultiHeadCacheT {
  Tensor3T<T> q;        // (B, T, H·dh)
  Tensor3T<T> k, v;     // (B, S, Hkv·dh)
  Tensor4T<T> weights;  // (B, H, T, S) attention weights per head (for heatmaps and backward)
  Tensor3T<T> concat;   // (B, T, H·dh)
};

// xq: (B, T, C), xkv: (B, S, C), mask: (T, S) additive (e.g. causal_mask) or empty -> out: (B, T, C)
template <class T>
void multi_head_forward(Tensor3T<T>& out, MultiHeadCacheT<T>& cache, const Tensor3T<T>& xq,
                        const Tensor3T<T>& xkv, const MultiHeadT<T>& p, const MatT<T>& mask = {});
// dout: (B, T, C) -> dxq: (B, T, C), dxkv: (B, S, C) (+=; may be the same buffer), dp (+=).
template <class T>
void multi_head_backward(Tensor3T<T>& dxq, Tensor3T<T>& dxkv, MultiHeadT<T>& dp, const Tensor3T<T>& dout,
                         const MultiHeadCacheT<T>& cache, const Tensor3T<T>& xq, const Tensor3T<T>& xkv,
                         const MultiHeadT<T>& p);

}  // namespace attn
