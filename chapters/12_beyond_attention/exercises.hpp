// Chapter 12 exercises: one step of the selective state-space recurrence, and its decay mask L.
//   scripts/exercises check 12     build your exercises.cpp and run its checks
//   scripts/exercises hint 12      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include "attn/tensor/tensor.hpp"

namespace ex12 {

// 12.1 — one token of the recurrence, state: (N, P), in place, then the read:
//   h ← a·h + b xᵀ       (b: (N,), x: (P,), a in (0, 1])
//   return y = hᵀ c      (c: (N,)) -> (P,), read from the NEW state
attn::Vec scan_step(attn::Mat& state, float a, const attn::Vec& b, const attn::Vec& c, const attn::Vec& x);

// 12.2 — the decay mask of the quadratic form Y = (L ∘ C Bᵀ) X, from log_a: (T,):
//   L_ts = exp(log_a_{s+1} + … + log_a_t) for s ≤ t (so L_tt = 1), and 0 for s > t.
attn::Mat decay_mask(const attn::Vec& log_a);

}  // namespace ex12
