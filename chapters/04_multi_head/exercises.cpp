// Chapter 04 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 04
// Tensors are xtensor containers: t.shape(0), t(i, j, k) an element, xt::zeros<float>({a, b, c}).
// Plain loops are perfectly fine here.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex04 {

// Exercise 04.1 — split_heads
// Hint: head h owns a block of d_k consecutive columns of x, for every token t: which columns?
// Hint: a plain reshape of x to (h, n, d_k) is NOT the same: it would cut rows, not column blocks.
attn::Tensor3 split_heads(const attn::Mat& x, std::size_t n_heads) {
  throw attn::NotImplemented("04.1 split_heads: out(h, t, c) = x(t, h·d_k + c)");
}

// Exercise 04.2 — multi_head_attention
// Hint: project first, then split (your 04.1): the weights multiply X from the right.
// Hint: each head is chapter 03's attention on its own slice — and its own size is the one under the root.
// Hint: concatenation undoes the split; W_O comes last.
attn::Mat multi_head_attention(const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k, const attn::Mat& w_v,
                               const attn::Mat& w_o, std::size_t n_heads) {
  throw attn::NotImplemented("04.2 multi_head_attention: project, split, attend per head with 1/√d_k, concat, ·W_O");
}

}  // namespace ex04
