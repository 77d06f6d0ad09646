// Chapter 03 exercises: write the three pieces of self-attention yourself.
//   scripts/exercises check 03     build your exercises.cpp and run its checks
//   scripts/exercises hint 03      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex03 {

// 03.1 — x: (R, C) -> (R, C): softmax of each row. Must stay finite for logits near ±1e4,
// give weight 0 to −∞ entries, and give a row of zeros (not NaN) when every entry is −∞.
attn::Mat softmax_rows(const attn::Mat& x);

// 03.2 — (n, n): 0 where key j may be seen by query i (j ≤ i), −∞ where it may not (j > i).
attn::Mat causal_mask(std::size_t n);

// 03.3 — q: (n_q, d_k), k: (n_k, d_k), v: (n_k, d_v), mask: (n_q, n_k) additive or empty -> (n_q, d_v):
// softmax(q·kᵀ/√d_k + mask)·v. You may call your softmax_rows.
attn::Mat attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v, const attn::Mat& mask);

}  // namespace ex03
