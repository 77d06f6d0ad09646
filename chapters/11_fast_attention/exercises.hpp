// Chapter 11 exercises: the two decisions inside a tiled attention kernel.
//   scripts/exercises check 11     build your exercises.cpp and run its checks
//   scripts/exercises hint 11      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

namespace ex11 {

// 11.1 — one key tile for one query row. The row keeps m (running max), l (running sum) and
// o[0, d) (the UNnormalised output Σ_j exp(s_j − m)·v_j). Given the tile's scores s[0, kc)
// (already scaled, finite) and its values v (kc rows of d floats, row-major), update m, l and o
// so that after the last tile o / l is the attention output. Rescale o and l by exp(m_old − m_new)
// before adding the tile's contributions (m = −∞, l = 0, o = 0 before the first tile).
void tile_update(float& m, float& l, float* o, const float* s, const float* v, std::size_t kc, std::size_t d);

// 11.2 — the causal tile rule. Query rows [i0, i0 + rows) meet key columns [j0, j0 + cols);
// query i may see key j when j <= i (N = S). Return 0 when no query of the block sees any key of
// the tile (skip it: no work at all), 2 when every query sees every key (no mask needed), and 1
// otherwise (compute, then mask the pairs with j > i).
int causal_tile_kind(std::size_t i0, std::size_t rows, std::size_t j0, std::size_t cols);

}  // namespace ex11
