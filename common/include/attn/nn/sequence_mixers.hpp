// The trainable sequence mixers of chapter 12 that are not softmax attention, each with its
// hand-written backward (templated on float and double, so the finite-difference check runs this
// code). Inputs are (B, T, C) batches of B sequences of T tokens, C = d_model channels; heads are
// the column blocks [h·P, (h+1)·P) with P = C / H (d_k = d_v = P).
//
//   short convolution (depthwise, causal, K taps; Mamba and Based put one before the mixer):
//     s_t = Σ_{k<K} w_k ⊙ u_{t−k}                         w: (K, C), u_{t−k} = 0 before the start
//   selective SSM, the Mamba-2 form (Dao & Gu 2024, §7; scalar decay per head):
//     x = u·W_x (B,T,C)   B = u·W_B (B,T,N)   C = u·W_C (B,T,N)   Δ = softplus(u·W_Δ + b_Δ) (B,T,H)
//     head h:  log a_t = −Δ_t·exp(A_log_h),  h_t = a_t·h_{t−1} + B_t (Δ_t x_t)ᵀ,  y_t = h_tᵀ C_t + D_h x_t
//     out = y·W_O                                         state per head: N × P
//   causal linear attention (Katharopoulos et al. 2020; chapter 06's map as a layer):
//     head h:  out_t = Σ_{s≤t} φ(q_t)·φ(k_s) v_s / Σ_{s≤t} φ(q_t)·φ(k_s),  φ = elu + 1
//     trained in its quadratic form (T is small here); state per head: P × P + P
// Run: ./build/bin/test_core -tc="*mixer*"
#pragma once

#include <cstddef>
#include <string>

#include "attn/nn/linear.hpp"
#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

// ------------------------------------------------------------------ short convolution
template <class T>
struct ShortConvT {
  MatT<T> w;  // (K, C): w(0, c) weighs the token itself, w(k, c) the token k places back
};
using ShortConv = ShortConvT<float>;
// w(0, ·) = 1, the other taps U(−1/√K, 1/√K).
ShortConv short_conv_init(std::size_t channels, std::size_t taps, Rng& rng);
template <class T> ShortConvT<T> zeros_like(const ShortConvT<T>& p);
template <class P, class F, if_layer<P, ShortConvT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  f(prefix + ".w", p.w);
}
// u: (B, T, C) -> s: (B, T, C).
template <class T> void short_conv_forward(Tensor3T<T>& s, const Tensor3T<T>& u, const ShortConvT<T>& p);
// ds: (B, T, C) -> du (+=), dp (+=).
template <class T>
void short_conv_backward(Tensor3T<T>& du, ShortConvT<T>& dp, const Tensor3T<T>& ds, const Tensor3T<T>& u,
                         const ShortConvT<T>& p);

// ------------------------------------------------------------------ selective SSM (Mamba-2 form)
template <class T>
struct SelectiveSsmT {
  std::size_t heads = 1;    // H
  std::size_t state_n = 1;  // N
  LinearT<T> in_x;          // (C, C), no bias
  LinearT<T> in_b, in_c;    // (C, N), no bias
  LinearT<T> in_dt;         // (C, H), bias b_Δ
  VecT<T> a_log;            // (H,): A = exp(A_log) > 0, so the decay a = exp(−Δ·A) is in (0, 1)
  VecT<T> d_skip;           // (H,): D, the skip connection around the state
  LinearT<T> out;           // W_O: (C, C), no bias
};
using SelectiveSsm = SelectiveSsmT<float>;
using SelectiveSsmD = SelectiveSsmT<double>;
// Projections U(−1/√C, 1/√C); b_Δ so that Δ = softplus(b_Δ) spreads over [0.1, 1] across heads
// (Mamba-2: [0.001, 0.1]; see the .cpp) and A_log = log(1 … H) as in Mamba-2; D = 1.
SelectiveSsm selective_ssm_init(std::size_t d_model, std::size_t heads, std::size_t state_n, Rng& rng);
template <class T> SelectiveSsmT<T> zeros_like(const SelectiveSsmT<T>& p);
template <class P, class F, if_layer<P, SelectiveSsmT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  visit_params(p.in_x, prefix + ".in_x", f);
  visit_params(p.in_b, prefix + ".in_b", f);
  visit_params(p.in_c, prefix + ".in_c", f);
  visit_params(p.in_dt, prefix + ".in_dt", f);
  f(prefix + ".a_log", p.a_log);
  f(prefix + ".d_skip", p.d_skip);
  visit_params(p.out, prefix + ".out", f);
}
// Floats of recurrent state one sequence carries at generation time: H · N · P.
std::size_t selective_ssm_state_floats(std::size_t d_model, std::size_t heads, std::size_t state_n);

template <class T>
struct SelectiveSsmCacheT {
  Tensor3T<T> x, b, c;  // (B, T, C), (B, T, N), (B, T, N)
  Tensor3T<T> dt_raw;   // (B, T, H) before the softplus
  Tensor3T<T> dt;       // (B, T, H) Δ
  Tensor3T<T> log_a;    // (B, T, H)
  Tensor4T<T> states;   // (B, H, T, N·P): h_t after each token (the backward reads h_{t−1})
  Tensor3T<T> y;        // (B, T, C) before W_O
};
// u: (B, T, C) -> out: (B, T, C).
template <class T>
void selective_ssm_forward(Tensor3T<T>& out, SelectiveSsmCacheT<T>& cache, const Tensor3T<T>& u,
                           const SelectiveSsmT<T>& p);
// dout: (B, T, C) -> du (+=), dp (+=).
template <class T>
void selective_ssm_backward(Tensor3T<T>& du, SelectiveSsmT<T>& dp, const Tensor3T<T>& dout,
                            const SelectiveSsmCacheT<T>& cache, const Tensor3T<T>& u, const SelectiveSsmT<T>& p);

// One generation step: u_t (C,) -> out_t (C,), state (H, N, P) updated in place — the fixed-size
// state that replaces a KV cache. The same map as selective_ssm_forward, one token at a time.
Vec selective_ssm_step(const SelectiveSsm& p, Tensor3& state, const Vec& u);

// ------------------------------------------------------------------ causal linear attention
template <class T>
struct LinearAttentionLayerT {
  std::size_t heads = 1;
  LinearT<T> q, k, v, out;  // (C, C) each, no bias
};
using LinearAttentionLayer = LinearAttentionLayerT<float>;
using LinearAttentionLayerD = LinearAttentionLayerT<double>;
LinearAttentionLayer linear_attention_layer_init(std::size_t d_model, std::size_t heads, Rng& rng);
template <class T> LinearAttentionLayerT<T> zeros_like(const LinearAttentionLayerT<T>& p);
template <class P, class F, if_layer<P, LinearAttentionLayerT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  visit_params(p.q, prefix + ".q", f);
  visit_params(p.k, prefix + ".k", f);
  visit_params(p.v, prefix + ".v", f);
  visit_params(p.out, prefix + ".out", f);
}
// Floats of recurrent state per sequence: H · (P·P + P) (the matrix S and the normaliser z).
std::size_t linear_attention_state_floats(std::size_t d_model, std::size_t heads);

template <class T>
struct LinearAttentionCacheT {
  Tensor3T<T> q, k, v;    // (B, T, C) projections, before φ
  Tensor4T<T> weights;    // (B, H, T, T): φ(q_t)·φ(k_s) / Σ_s (causal, rows sum to 1)
  Tensor3T<T> norm;       // (B, H, T): Σ_{s≤t} φ(q_t)·φ(k_s)
  Tensor3T<T> concat;     // (B, T, C) heads side by side, before W_O
};
template <class T>
void linear_attention_layer_forward(Tensor3T<T>& out, LinearAttentionCacheT<T>& cache, const Tensor3T<T>& u,
                                    const LinearAttentionLayerT<T>& p);
template <class T>
void linear_attention_layer_backward(Tensor3T<T>& du, LinearAttentionLayerT<T>& dp, const Tensor3T<T>& dout,
                                     const LinearAttentionCacheT<T>& cache, const Tensor3T<T>& u,
                                     const LinearAttentionLayerT<T>& p);

}  // namespace attn
