// Exact attention computed tile by tile (FlashAttention's algorithm, Dao et al. 2022, written
// for reading, one head): the (N × S) score matrix never exists, only one (Bq × Bk) tile of it.
// Each query row keeps a running max m, running sum ℓ and an output accumulator; a new key tile
// rescales them by α = exp(m_old − m_new) (attn/attention/online_softmax.hpp). The forward also returns
// L = m + log ℓ per row (the logsumexp), all the backward needs to recompute P tile by tile.
// attention_backward is the materialised reference beside it. Chapter 11 has the fast kernel.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/attention/online_softmax.hpp"
#include "attn/tensor/tensor.hpp"

namespace attn {

// N = queries, S = keys, d = q/k size, d_v = v size; Bq × Bk = the tile.
// causal: query i sees key j when j <= i + (S − N) (attn::causal_mask's rule; rows that see no key
// give zeros). scale <= 0 means 1/√d.

struct TiledAttentionResult {
  Mat output;     // (N, d_v)
  Vec logsumexp;  // (N,) L_i = m_i + log ℓ_i in natural log units; −∞ for a row that sees nothing
};

// q: (N, d), k: (S, d), v: (S, d_v) -> output (N, d_v), logsumexp (N,).
// When trace is not null, records the online-softmax steps of query row `trace_row`.
TiledAttentionResult tiled_attention_forward(const Mat& q, const Mat& k, const Mat& v, std::size_t tile_q,
                                             std::size_t tile_k, bool causal = false, float scale = 0.0f,
                                             std::vector<OnlineSoftmaxStep>* trace = nullptr,
                                             std::size_t trace_row = 0);

// Backward of the tiled forward, recomputing each tile's P from q, k and L (FlashAttention-2,
// Dao 2023, Algorithm 2). Gradients accumulate: dq: (N, d), dk: (S, d), dv: (S, d_v).
// dout: (N, d_v), out and logsumexp: from tiled_attention_forward.
void tiled_attention_backward(Mat& dq, Mat& dk, Mat& dv, const Mat& dout, const Mat& q, const Mat& k,
                              const Mat& v, const Mat& out, const Vec& logsumexp, std::size_t tile_q,
                              std::size_t tile_k, bool causal = false, float scale = 0.0f);

// Reference backward with the (N × S) matrices materialised. Same contract, accumulates.
void attention_backward(Mat& dq, Mat& dk, Mat& dv, const Mat& dout, const Mat& q, const Mat& k, const Mat& v,
                        bool causal = false, float scale = 0.0f);

// Floats of working memory the tiled forward allocates beyond its inputs and output:
// one S/P tile (Bq × Bk), the accumulator block (Bq × d_v), m and ℓ of the block (2·Bq).
std::size_t tiled_attention_workspace_floats(std::size_t tile_q, std::size_t tile_k, std::size_t d_v);

}  // namespace attn
