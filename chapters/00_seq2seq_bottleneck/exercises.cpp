// Chapter 00 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 00
// Vectors and matrices are xtensor containers: v(i), m(i, j), m.shape(0); xt::zeros<float>({n}).
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex00 {

// Exercise 00.1 — gru_step
// Hint: compute a = x·Wx + bx and b = h·Wh + bh as two vectors of length 3H first (plain loops).
// Hint: the reset gate r multiplies only the n-part of b (h·Wh_n + bh_n), not x's part.
attn::Vec gru_step(const attn::Vec& x, const attn::Vec& h, const attn::Mat& wx, const attn::Mat& wh,
                   const attn::Vec& bx, const attn::Vec& bh) {
  throw attn::NotImplemented("00.1 gru_step: gates r, z from σ(x·Wx + bx + h·Wh + bh), n = tanh(… + r ⊙ (h·Wh_n + bh_n)), h' = (1−z)⊙n + z⊙h");
}

// Exercise 00.2 — token_accuracy
// Hint: count i < ref.size() with i < hyp.size() and hyp[i] == ref[i]; divide by ref.size().
double token_accuracy(const std::vector<std::string>& hyp, const std::vector<std::string>& ref) {
  throw attn::NotImplemented("00.2 token_accuracy: matches at the same position / reference length");
}

}  // namespace ex00
