// Chapter 02 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 02
// Vectors and matrices are xtensor containers: v(i), m(i, j), m.shape(0); xt::zeros<float>({n}).
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex02 {

// Exercise 02.1 — luong_general_scores
// Hint: q = h_t·W_a is He numbers (q[k] = Σ_i h_t[i]·W_a(i, k)); then score_s = Σ_k q[k]·H(s, k).
attn::Vec luong_general_scores(const attn::Vec& h_t, const attn::Mat& H, const attn::Mat& w_a) {
  throw attn::NotImplemented("02.1 luong_general_scores: score_s = (h_t·W_a)·h̄_s");
}

// Exercise 02.2 — local_p_position
// Hint: u = Σ_k v_p[k]·tanh((h_t·W_p)[k]); p_t = S / (1 + exp(−u)).
double local_p_position(const attn::Vec& h_t, const attn::Mat& w_p, const attn::Vec& v_p, std::size_t src_len) {
  throw attn::NotImplemented("02.2 local_p_position: p_t = S·σ(v_pᵀ tanh(h_t·W_p))");
}

// Exercise 02.3 — local_p_weights
// Hint: first a softmax over only the positions with |s − p_t| ≤ D (max and sum over the window).
// Hint: then multiply each by the Gaussian exp(−(s − p_t)²/(2σ²)), σ = D/2 — do not renormalise.
attn::Vec local_p_weights(const attn::Vec& scores, double p_t, std::size_t half_width) {
  throw attn::NotImplemented("02.3 local_p_weights: windowed softmax × exp(−(s − p_t)²/(2σ²)), σ = D/2");
}

}  // namespace ex02
