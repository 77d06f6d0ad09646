// Cross-attention: queries from one sequence, keys and values from another (Vaswani et al. 2017,
// §3.2.3, "encoder-decoder attention"):
//   Q = Y·W_Q   (T, d_k)   Y: the sequence that asks, e.g. decoder states (T, d_y)
//   K = X·W_K   (S, d_k)   X: the sequence that is read, e.g. encoder outputs (S, d_x)
//   V = X·W_V   (S, d_v)
//   output = softmax(Q·Kᵀ/√d_k + M)·V   (T, d_v); the weights are (T, S)
// Nothing in W_Q, W_K, W_V depends on S or T, so one set of weights reads a source of any length.
// Self-attention is the special case X = Y (attn/attention/self_attention.hpp).
#pragma once

#include "attn/attention/attention.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

struct CrossAttentionWeights {
  Mat w_q;  // (d_y, d_k)  reads the querying sequence
  Mat w_k;  // (d_x, d_k)  reads the other sequence
  Mat w_v;  // (d_x, d_v)
};

// W_Q entries N(0, 1/d_y), W_K and W_V entries N(0, 1/d_x): unit-variance inputs give
// unit-variance Q, K, V.
CrossAttentionWeights init_cross_attention(Rng& rng, std::size_t d_y, std::size_t d_x, std::size_t d_k,
                                           std::size_t d_v);

struct CrossAttentionTrace {
  Mat q, k, v;           // (T, d_k), (S, d_k), (S, d_v)
  AttentionResult attn;  // scores (T, S), weights (T, S), output (T, d_v)
};

// y: (T, d_y), x: (S, d_x), mask: (T, S) additive or empty -> every intermediate.
// scale <= 0 means 1/√d_k. Throws ShapeError naming the weight whose rows do not fit its input.
CrossAttentionTrace cross_attention(const Mat& y, const Mat& x, const CrossAttentionWeights& w, const Mat& mask = {},
                                    float scale = 0.0f);

}  // namespace attn
