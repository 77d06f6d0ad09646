// Chapter 06 — worked solutions (the library's versions: common/src/attention/online_softmax.cpp and
// sparse_attention.cpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises.hpp"

namespace ex06 {

float online_softmax_update(float& m, float& l, const float* x, std::size_t n) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  float m_new = m;
  for (std::size_t j = 0; j < n; ++j) m_new = std::max(m_new, x[j]);
  if (m_new == neg_inf) return 1.0f;                        // nothing visible yet
  const float alpha = m == neg_inf ? 0.0f : std::exp(m - m_new);
  float sum = 0.0f;
  for (std::size_t j = 0; j < n; ++j) sum += std::exp(x[j] - m_new);
  l = alpha * l + sum;                                      // old terms were relative to m: rescale
  m = m_new;
  return alpha;
}

attn::Mat sliding_window_mask(std::size_t n, std::size_t w) {
  attn::Mat mask = xt::zeros<float>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (j > i || j + w <= i) mask(i, j) = -std::numeric_limits<float>::infinity();
  return mask;
}

}  // namespace ex06
