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
// Hint: softmax(x) = softmax(x − c) for any constant c: which c keeps every exp ≤ 1?
// Hint: a fully masked row is all −∞: what does your code do with it, and what should a row with nothing visible give?
attn::Mat softmax_rows(const attn::Mat& x) {
  throw attn::NotImplemented("03.1 softmax_rows: subtract each row's max, exp, divide by the row sum");
}

// Exercise 03.2 — causal_mask
// Hint: row i is the query, column j the key: which keys lie in query i's future? (<limits> has an infinity.)
attn::Mat causal_mask(std::size_t n) {
  throw attn::NotImplemented("03.2 causal_mask: zeros on and below the diagonal, −∞ above it");
}

// Exercise 03.3 — attention
// Hint: three stages, each one of the chapter's steps; which d is d_k, and where does the mask enter?
// Hint: you wrote the middle stage in 03.1. The mask argument may be empty (size 0): then there is no mask.
attn::Mat attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v, const attn::Mat& mask) {
  throw attn::NotImplemented("03.3 attention: scores = q·kᵀ/√d_k + mask, softmax each row, multiply by v");
}

}  // namespace ex03
