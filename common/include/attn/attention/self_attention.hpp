// Single-head self-attention: one sequence supplies queries, keys and values.
//   Q = X·W_Q,  K = X·W_K,  V = X·W_V   (projections right-multiplied: X is (T, d_model))
//   output = softmax(Q·Kᵀ/√d_k + M)·V
#pragma once

#include "attn/attention/attention.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

struct SelfAttentionWeights {
  Mat w_q;  // (d_model, d_k)
  Mat w_k;  // (d_model, d_k)
  Mat w_v;  // (d_model, d_v)
};

// N(0, 1/d_model) entries, so that Q, K, V keep roughly unit variance when X has it.
SelfAttentionWeights init_self_attention(Rng& rng, std::size_t d_model, std::size_t d_k, std::size_t d_v);

struct SelfAttentionTrace {
  Mat q, k, v;           // (T, d_k), (T, d_k), (T, d_v)
  AttentionResult attn;  // scores, weights, output
};

// x: (T, d_model), mask: (T, T) or empty -> every intermediate. scale <= 0 means 1/√d_k.
SelfAttentionTrace self_attention(const Mat& x, const SelfAttentionWeights& w, const Mat& mask = {},
                                  float scale = 0.0f);

}  // namespace attn
