// Chapter 05 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 05
// Tensors are xtensor containers: m(i, j) an element, xt::zeros<float>({r, c}) a new matrix.
// Compute angles in double (std::pow, std::sin, std::cos), store floats.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex05 {

// Exercise 05.1 — sinusoidal_table
// Hint: for pair i (columns 2i and 2i+1) the angle is pos / 10000^(2i/d) — the exponent uses 2i, not i.
// Hint: sin goes to the even column, cos to the odd one.
attn::Mat sinusoidal_table(std::size_t n_positions, std::size_t d) {
  throw attn::NotImplemented("05.1 sinusoidal_table: angle = pos / 10000^(2i/d); sin at 2i, cos at 2i+1");
}

// Exercise 05.2 — rope_rotate
// Hint: for row t the position is start + t; angle = (start + t)·10000^(−2i/d) for pair i.
// Hint: read x[2i] and x[2i+1] first, then write y[2i] = x0·cos − x1·sin, y[2i+1] = x0·sin + x1·cos.
attn::Mat rope_rotate(const attn::Mat& x, std::size_t start) {
  throw attn::NotImplemented("05.2 rope_rotate: turn each adjacent pair (2i, 2i+1) by (start + t)·θ_i");
}

// Exercise 05.3 — alibi_bias
// Hint: head h (0-based) has slope m = 2^(−8·(h+1)/n_heads): 1/2, 1/4, … for 8 heads.
// Hint: the bias is a penalty, so it is ≤ 0: bias(h, i, j) = −m·|i − j| (0 on the diagonal).
attn::Tensor3 alibi_bias(std::size_t n_heads, std::size_t T) {
  throw attn::NotImplemented("05.3 alibi_bias: −2^(−8(h+1)/H)·|i − j|");
}

}  // namespace ex05
