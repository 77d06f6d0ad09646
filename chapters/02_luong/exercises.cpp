// Chapter 02 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 02
// Vectors and matrices are xtensor containers: v(i), m(i, j), m.shape(0); xt::zeros<float>({n}).
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex02 {

// Exercise 02.1 — luong_general_scores
// Hint: h_t·W_a does not depend on s: compute it once, then compare it with each row of H.
attn::Vec luong_general_scores(const attn::Vec& h_t, const attn::Mat& H, const attn::Mat& w_a) {
  throw attn::NotImplemented("02.1 luong_general_scores: score_s = (h_t·W_a)·h̄_s");
}

// Exercise 02.2 — local_p_position
// Hint: σ maps any real number into (0, 1); what must it be multiplied by to become a source position?
double local_p_position(const attn::Vec& h_t, const attn::Mat& w_p, const attn::Vec& v_p, std::size_t src_len) {
  throw attn::NotImplemented("02.2 local_p_position: p_t = S·σ(v_pᵀ tanh(h_t·W_p))");
}

// Exercise 02.3 — local_p_weights
// Hint: which positions take part in the softmax — and what weight do the others get?
// Hint: the Gaussian comes after the softmax; the paper does not renormalise afterwards, so neither do the checks.
attn::Vec local_p_weights(const attn::Vec& scores, double p_t, std::size_t half_width) {
  throw attn::NotImplemented("02.3 local_p_weights: windowed softmax × exp(−(s − p_t)²/(2σ²)), σ = D/2");
}

}  // namespace ex02
