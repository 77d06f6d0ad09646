// Chapter 11 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 11
// Plain loops are fine: the kernel in common/src/attention/fast_attention.cpp does the same with AVX-512.
#include "exercises.hpp"

#include <cmath>
#include <limits>

#include "attn/present/exercise.hpp"

namespace ex11 {

// Exercise 11.1 — tile_update
// Hint: m_new = max(m, max_j s_j); α = exp(m − m_new) (0 when m is −∞).
// Hint: o and l were both accumulated against the old max; both need the same rescale before the tile is added.
void tile_update(float& m, float& l, float* o, const float* s, const float* v, std::size_t kc, std::size_t d) {
  throw attn::NotImplemented("11.1 tile_update: new max, rescale o and l by exp(m_old − m_new), add exp(s − m_new)·v");
}

// Exercise 11.2 — causal_tile_kind
// Hint: the block's last query (i0 + rows − 1) sees the most keys; if even it cannot see the tile's
// first key j0, skip. Its first query i0 sees the fewest; if it sees the tile's last key, it is full.
int causal_tile_kind(std::size_t i0, std::size_t rows, std::size_t j0, std::size_t cols) {
  throw attn::NotImplemented("11.2 causal_tile_kind: 0 skip if j0 > last query, 2 full if last key <= first query, else 1");
}

}  // namespace ex11
