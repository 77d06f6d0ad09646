// Chapter 06 exercises: the two ideas that make attention cheaper without a library.
//   scripts/exercises check 06     build your exercises.cpp and run its checks
//   scripts/exercises hint 06      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex06 {

// 06.1 — the online-softmax update. (m, l) are a row's running max and running Σ exp(x − m)
// over the logits seen so far (m = −∞, l = 0 before the first tile). Fold in the tile x[0, n)
// (entries may be −∞ = masked) and return α = exp(m_old − m_new), the factor by which anything
// accumulated so far must be rescaled (return 0 when m_old was −∞ and m_new is finite; return 1
// when m_new is still −∞: nothing seen yet, nothing to rescale).
float online_softmax_update(float& m, float& l, const float* x, std::size_t n);

// 06.2 — (n, n) additive causal sliding-window mask: 0 where query i may see key j, that is
// i − w < j ≤ i (itself and the w − 1 keys before it), −∞ everywhere else. w >= n is full causal.
attn::Mat sliding_window_mask(std::size_t n, std::size_t w);

}  // namespace ex06
