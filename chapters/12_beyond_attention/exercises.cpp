// Chapter 12 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 12
// Tensors are xtensor containers: m(i, j) an element, xt::zeros<float>({r, c}) a new matrix.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex12 {

// Exercise 12.1 — scan_step
// Hint: two loops over i < N and j < P: first state(i, j) = a·state(i, j) + b(i)·x(j) …
// Hint: … then y(j) = Σ_i state(i, j)·c(i), with the state you just updated (the token reads itself).
attn::Vec scan_step(attn::Mat& state, float a, const attn::Vec& b, const attn::Vec& c, const attn::Vec& x) {
  throw attn::NotImplemented("12.1 scan_step: decay the state by a, add b xᵀ, then read y = stateᵀ c");
}

// Exercise 12.2 — decay_mask
// Hint: L_tt = 1 (an empty product); below the diagonal multiply the decays of the tokens AFTER s,
// up to and including t: a_{s+1}·…·a_t, i.e. exp of the sum of log_a over s+1 … t.
// Hint: above the diagonal (s > t) the entry is 0: a token never reads the future.
attn::Mat decay_mask(const attn::Vec& log_a) {
  throw attn::NotImplemented("12.2 decay_mask: L_ts = exp(log_a_{s+1} + … + log_a_t) for s ≤ t, else 0");
}

}  // namespace ex12
