// Chapter 06 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 06
// Plain loops are fine. −∞ is -std::numeric_limits<float>::infinity(); std::exp(−∞) is 0.
#include "exercises.hpp"

#include <cmath>
#include <limits>

#include "attn/present/exercise.hpp"

namespace ex06 {

// Exercise 06.1 — online_softmax_update
// Hint: m_new = max(m, max_j x_j). If m_new is −∞, nothing is visible yet: return 1.
// Hint: the old sum ℓ was computed against the old max: what factor rescales it to the new one?
float online_softmax_update(float& m, float& l, const float* x, std::size_t n) {
  throw attn::NotImplemented("06.1 online_softmax_update: new max, α = exp(m_old − m_new), l = α·l + Σ exp(x − m_new)");
}

// Exercise 06.2 — sliding_window_mask
// Hint: which keys j can query i see — how far back, and how far forward (causal)?
// Hint: careful with unsigned arithmetic: i − w underflows when w > i; compare j + w > i instead.
attn::Mat sliding_window_mask(std::size_t n, std::size_t w) {
  throw attn::NotImplemented("06.2 sliding_window_mask: 0 where i − w < j ≤ i, −∞ elsewhere");
}

}  // namespace ex06
