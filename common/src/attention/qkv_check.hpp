// Private to common/src/attention: what the attention variants (tiled, sparse, linear) share to
// check their inputs, and the −∞ a masked score starts from.
#pragma once

#include <limits>

#include "attn/tensor/tensor.hpp"

namespace attn::detail {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// q (n, d), k (s, d), v (s, d_v): queries and keys share d, keys and values share s.
inline void check_qkv(const char* fn, const Mat& q, const Mat& k, const Mat& v) {
  if (q.shape(1) != k.shape(1)) shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need the same d");
  if (k.shape(0) != v.shape(0)) shape_mismatch(fn, "k", shape_of(k), "v", shape_of(v), "need the same number of keys");
}

}  // namespace attn::detail
