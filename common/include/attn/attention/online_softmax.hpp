// Online softmax (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax"): the
// softmax of a row seen one tile at a time, keeping only a running max m and a running sum ℓ.
//   m' = max(m, max_j x_j);   α = exp(m − m');   ℓ' = α·ℓ + Σ_j exp(x_j − m')
// Everything accumulated so far was relative to the old max m, so it is rescaled by α. After the
// last tile, softmax(x)_j = exp(x_j − m) / ℓ. This is FlashAttention's core (chapters 06 and 11).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

namespace attn {

struct OnlineSoftmaxState {
  float m = -std::numeric_limits<float>::infinity();  // running max of the logits seen so far
  float l = 0.0f;                                      // running Σ exp(x − m)
};

// One tile of a row, as recorded for the narration of chapter 06.
struct OnlineSoftmaxStep {
  std::size_t begin = 0, end = 0;  // the tile's keys [begin, end)
  float tile_max = 0.0f;           // max of the tile's (visible) logits
  float m_before = 0.0f, m_after = 0.0f;
  float alpha = 0.0f;              // exp(m_before − m_after): the rescale of everything so far
  float l_before = 0.0f, l_after = 0.0f;
};

// Folds the logits x[0, n) (−∞ = masked) into `state`. Writes p[j] = exp(x_j − m_new) when p is
// not null (p may alias x). Returns α = exp(m_old − m_new), 0 when nothing was seen before, and 1
// when nothing has been seen yet even now (a fully masked prefix: nothing to rescale).
float online_softmax_update(OnlineSoftmaxState& state, const float* x, std::size_t n, float* p = nullptr);

// Softmax of one row computed tile by tile (`tile` logits at a time, the last tile may be
// shorter); equals softmax_row up to rounding. Records every tile's step when trace is not null.
void online_softmax_row(float* out, const float* x, std::size_t n, std::size_t tile,
                        std::vector<OnlineSoftmaxStep>* trace = nullptr);

}  // namespace attn
