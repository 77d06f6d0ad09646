// Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"): replace exp(q·k) by
// φ(q)·φ(k) with φ(x) = elu(x) + 1 > 0. Then matrix products can be reordered:
//   out_i = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / (φ(q_i)ᵀ Σ_j φ(k_j))       O(n·d·d_v) instead of O(n²·d)
// Causal, the sums become a running state — an RNN with a (d × d_v) matrix state, the bridge to
// state-space models such as Mamba:
//   S_t = S_{t−1} + φ(k_t) v_tᵀ,   z_t = z_{t−1} + φ(k_t),   out_t = φ(q_t)ᵀ S_t / (φ(q_t)ᵀ z_t)
// It is a different model, not an approximation of softmax attention: chapter 06 prints how far
// its outputs are from softmax attention's on the same inputs.
#pragma once

#include "attn/tensor/tensor.hpp"

namespace attn {

// φ(x) = elu(x) + 1 = x + 1 for x > 0, exp(x) otherwise (elementwise, always > 0).
Mat elu_plus_one(const Mat& x);

// q: (N, d), k: (N, d), v: (N, d_v) -> (N, d_v). Non-causal, the reordered (parallel) form.
Mat linear_attention(const Mat& q, const Mat& k, const Mat& v);
// Causal, the recurrent form: one pass over t with the (d × d_v) state S and the (d) state z.
Mat linear_attention_causal(const Mat& q, const Mat& k, const Mat& v);
// The same model computed the quadratic way, for tests: A = φ(Q)φ(K)ᵀ (lower triangle when
// causal), each row divided by its sum, times V. O(n²·d).
Mat linear_attention_quadratic(const Mat& q, const Mat& k, const Mat& v, bool causal);

}  // namespace attn
