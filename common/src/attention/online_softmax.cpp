// Online softmax (see attn/attention/online_softmax.hpp).
#include "attn/attention/online_softmax.hpp"

#include <algorithm>
#include <cmath>

namespace attn {

float online_softmax_update(OnlineSoftmaxState& st, const float* x, std::size_t n, float* p) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  float tile_max = neg_inf;
  for (std::size_t j = 0; j < n; ++j) tile_max = std::max(tile_max, x[j]);
  const float m_new = std::max(st.m, tile_max);
  if (m_new == neg_inf) {  // everything so far is masked: no max yet, nothing to rescale
    if (p) std::fill(p, p + n, 0.0f);
    return 1.0f;
  }
  const float alpha = st.m == neg_inf ? 0.0f : std::exp(st.m - m_new);
  float sum = 0.0f;
  for (std::size_t j = 0; j < n; ++j) {
    const float e = std::exp(x[j] - m_new);  // exp(−∞) = 0 for masked logits
    if (p) p[j] = e;
    sum += e;
  }
  st.l = alpha * st.l + sum;
  st.m = m_new;
  return alpha;
}

void online_softmax_row(float* out, const float* x, std::size_t n, std::size_t tile,
                        std::vector<OnlineSoftmaxStep>* trace) {
  if (tile == 0) tile = n == 0 ? 1 : n;
  OnlineSoftmaxState st;
  // Pass 1: m and ℓ, tile by tile (a kernel would also accumulate P·V here, rescaled by α).
  for (std::size_t b = 0; b < n; b += tile) {
    const std::size_t e = std::min(n, b + tile);
    OnlineSoftmaxStep step;
    step.begin = b;
    step.end = e;
    step.tile_max = *std::max_element(x + b, x + e);
    step.m_before = st.m;
    step.l_before = st.l;
    step.alpha = online_softmax_update(st, x + b, e - b);
    step.m_after = st.m;
    step.l_after = st.l;
    if (trace) trace->push_back(step);
  }
  // Pass 2: the final normalisation with the row's true max and sum.
  for (std::size_t j = 0; j < n; ++j) out[j] = st.l > 0.0f ? std::exp(x[j] - st.m) / st.l : 0.0f;
}

}  // namespace attn
