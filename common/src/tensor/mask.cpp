// Additive masks (see attn/tensor/mask.hpp).
#include "attn/tensor/mask.hpp"

#include <limits>

namespace attn {

Mat causal_mask(std::size_t t, std::size_t s) {
  if (s < t) throw ShapeError("causal_mask: keys (" + std::to_string(s) + ") must be at least as many as queries (" + std::to_string(t) + ")");
  Mat m = xt::zeros<float>({t, s});
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = i + (s - t) + 1; j < s; ++j) m(i, j) = neg_inf;
  return m;
}

Mat padding_mask(std::size_t t, const std::vector<bool>& keep) {
  Mat m = xt::zeros<float>({t, keep.size()});
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < keep.size(); ++j)
      if (!keep[j]) m(i, j) = neg_inf;
  return m;
}

}  // namespace attn
