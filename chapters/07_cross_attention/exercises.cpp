// Chapter 07 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 07
// Tensors are xtensor containers: m.shape(0) rows, m.shape(1) columns, m(i, j) an element,
// xt::zeros<float>({r, c}) a new matrix. Plain loops are perfectly fine here.
#include "exercises.hpp"

#include <cmath>
#include <limits>

#include "attn/present/exercise.hpp"

namespace ex07 {

// Exercise 07.1 — cross_attention
// Hint: three products first: which sequence do the queries come from, and which one gives keys and values?
// Hint: scores are (T, S): one row per target position, one column per source position; scale by 1/√d_k.
// Hint: softmax each row (over the source), then weight the rows of the values.
attn::Mat cross_attention(const attn::Mat& y, const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k,
                          const attn::Mat& w_v) {
  throw attn::NotImplemented("07.1 cross_attention: Q from y, K and V from x, then softmax(Q·Kᵀ/√d_k)·V");
}

// Exercise 07.2 — source_padding_mask
// Hint: the mask has one row per target position and one column per source position.
// Hint: padding is a property of the source position alone: every row of the mask is the same.
attn::Mat source_padding_mask(std::size_t t, std::size_t s, std::size_t valid) {
  throw attn::NotImplemented("07.2 source_padding_mask: (T, S) with 0 for real source words, −∞ for padding");
}

}  // namespace ex07
