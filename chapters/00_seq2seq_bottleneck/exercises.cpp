// Chapter 00 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 00
// Vectors and matrices are xtensor containers: v(i), m(i, j), m.shape(0); xt::zeros<float>({n}).
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex00 {

// Exercise 00.1 — gru_step
// Hint: Wx and Wh each hold three blocks of H columns (r, z, n): which block feeds which gate?
// Hint: the reset gate scales part of the candidate's input — the part from x, or the part from h?
attn::Vec gru_step(const attn::Vec& x, const attn::Vec& h, const attn::Mat& wx, const attn::Mat& wh,
                   const attn::Vec& bx, const attn::Vec& bh) {
  throw attn::NotImplemented("00.1 gru_step: gates r, z from σ(x·Wx + bx + h·Wh + bh), n = tanh(… + r ⊙ (h·Wh_n + bh_n)), h' = (1−z)⊙n + z⊙h");
}

// Exercise 00.2 — token_accuracy
// Hint: the hypothesis may be shorter or longer than the reference: which length divides, and what
// Hint: happens at a position only one of them has?
double token_accuracy(const std::vector<std::string>& hyp, const std::vector<std::string>& ref) {
  throw attn::NotImplemented("00.2 token_accuracy: matches at the same position / reference length");
}

}  // namespace ex00
