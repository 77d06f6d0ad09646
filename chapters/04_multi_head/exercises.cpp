// Chapter 04 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 04
// Tensors are xtensor containers: t.shape(0), t(i, j, k) an element, xt::zeros<float>({a, b, c}).
// Plain loops are perfectly fine here.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex04 {

// Exercise 04.1 — split_heads
// Hint: d_head = x.shape(1) / n_heads; out(h, t, c) = x(t, h·d_head + c).
// Hint: a plain reshape of x to (h, T, d_head) is NOT the same: it would cut rows, not column blocks.
attn::Tensor3 split_heads(const attn::Mat& x, std::size_t n_heads) {
  throw attn::NotImplemented("04.1 split_heads: out(h, t, c) = x(t, h·d_head + c)");
}

// Exercise 04.2 — multi_head_attention
// Hint: Q = X·W_Q, K = X·W_K, V = X·W_V (right-multiplied); then split each into heads (your 04.1).
// Hint: per head: scores = Q_i·K_iᵀ / √d_head (d_head, not d_model), softmax each row, times V_i.
// Hint: put head i's output back in columns [i·d_head, (i+1)·d_head) of concat, then output = concat·W_O.
attn::Mat multi_head_attention(const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k, const attn::Mat& w_v,
                               const attn::Mat& w_o, std::size_t n_heads) {
  throw attn::NotImplemented("04.2 multi_head_attention: project, split, attend per head with 1/√d_head, concat, ·W_O");
}

}  // namespace ex04
