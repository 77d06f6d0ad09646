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
// Hint: row t of x is not at position t when start > 0; the frequency of pair i is the sinusoidal one.
// Hint: a 2-D rotation by an angle; read both inputs of a pair before writing either output.
attn::Mat rope_rotate(const attn::Mat& x, std::size_t start) {
  throw attn::NotImplemented("05.2 rope_rotate: turn each adjacent pair (2i, 2i+1) by (start + t)·θ_i");
}

// Exercise 05.3 — alibi_bias
// Hint: the slopes form a geometric sequence; for 8 heads the paper lists 1/2, 1/4, …, 1/256 — mind 0-based h.
// Hint: the bias is a penalty: what sign must it have, and what is it when a query looks at itself?
attn::Tensor3 alibi_bias(std::size_t n_heads, std::size_t n) {
  throw attn::NotImplemented("05.3 alibi_bias: −2^(−8(h+1)/H)·|i − j|");
}

}  // namespace ex05
