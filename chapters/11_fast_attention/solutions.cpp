// Chapter 11 — worked solutions (the kernel's versions: avx512_block and keys_for_block in
// common/src/attention/fast_attention.cpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises.hpp"

namespace ex11 {

void tile_update(float& m, float& l, float* o, const float* s, const float* v, std::size_t kc, std::size_t d) {
  float m_new = m;
  for (std::size_t j = 0; j < kc; ++j) m_new = std::max(m_new, s[j]);
  const float alpha = m == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(m - m_new);
  for (std::size_t c = 0; c < d; ++c) o[c] *= alpha;  // everything so far was relative to the old max
  l *= alpha;
  for (std::size_t j = 0; j < kc; ++j) {
    const float p = std::exp(s[j] - m_new);
    l += p;
    for (std::size_t c = 0; c < d; ++c) o[c] += p * v[j * d + c];
  }
  m = m_new;
}

int causal_tile_kind(std::size_t i0, std::size_t rows, std::size_t j0, std::size_t cols) {
  if (rows == 0 || cols == 0) return 0;
  if (j0 > i0 + rows - 1) return 0;      // even the last query is before the tile's first key
  if (j0 + cols - 1 <= i0) return 2;     // even the first query sees the tile's last key
  return 1;
}

}  // namespace ex11
