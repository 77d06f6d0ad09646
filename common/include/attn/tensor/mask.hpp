// Additive attention masks: 0 where a query may look, −∞ where it may not. Added to the scores
// before softmax, a −∞ becomes a weight of exactly 0.
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace attn {

// (T, S): query i may see key j when j <= i + (S − T), i.e. itself and the past. With T = S this
// is the usual lower-triangular mask; with S > T (a cache of S − T earlier keys) the queries are
// the last T positions.
Mat causal_mask(std::size_t t, std::size_t s);
inline Mat causal_mask(std::size_t n) { return causal_mask(n, n); }

// (T, S): key j is visible to every query when keep[j] is true (padding mask).
Mat padding_mask(std::size_t t, const std::vector<bool>& keep);

}  // namespace attn
