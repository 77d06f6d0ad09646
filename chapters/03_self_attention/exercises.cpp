// Chapter 03 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 03
// Tensors are xtensor containers: m.shape(0) rows, m.shape(1) columns, m(i, j) an element,
// xt::zeros<float>({r, c}) a new matrix. Plain loops are perfectly fine here.
#include "exercises.hpp"

#include <cmath>
#include <limits>

#include "attn/present/exercise.hpp"

namespace ex03 {

// Exercise 03.1 — softmax_rows
// Hint: for each row, find its max m; compute exp(x_j − m); divide by the row's sum.
// Hint: if m is −∞ the whole row is masked — return zeros for it instead of dividing 0 by 0.
attn::Mat softmax_rows(const attn::Mat& x) {
  throw attn::NotImplemented("03.1 softmax_rows: subtract each row's max, exp, divide by the row sum");
}

// Exercise 03.2 — causal_mask
// Hint: start from zeros; set entry (i, j) to -std::numeric_limits<float>::infinity() when j > i.
attn::Mat causal_mask(std::size_t n) {
  throw attn::NotImplemented("03.2 causal_mask: zeros on and below the diagonal, −∞ above it");
}

// Exercise 03.3 — attention
// Hint: scores(i, j) = Σ_c q(i, c)·k(j, c) / √d_k (+ mask(i, j) when the mask is not empty).
// Hint: weights = softmax_rows(scores); out(i, c) = Σ_j weights(i, j)·v(j, c).
attn::Mat attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v, const attn::Mat& mask) {
  throw attn::NotImplemented("03.3 attention: scores = q·kᵀ/√d_k + mask, softmax each row, multiply by v");
}

}  // namespace ex03
