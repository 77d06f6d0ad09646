// Editing a head's weights and recombining the layer (see attn/attention/head_intervention.hpp).
#include "attn/attention/head_intervention.hpp"

#include <cmath>
#include <vector>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

std::string head_edit_name(HeadEdit e) {
  switch (e) {
    case HeadEdit::zero: return "zero";
    case HeadEdit::uniform: return "uniform";
    case HeadEdit::permute: return "permute";
  }
  return "?";
}

template <class T>
void edit_head_weights(MatT<T>& p, HeadEdit edit, const MatT<T>& mask, Rng& rng) {
  const std::size_t t = p.shape(0), s = p.shape(1);
  if (mask.size() > 0) expect_same_shape("edit_head_weights", "mask", mask, "p", p);
  std::vector<std::size_t> keys;
  for (std::size_t i = 0; i < t; ++i) {
    keys.clear();
    for (std::size_t j = 0; j < s; ++j)
      if (mask.size() == 0 || std::isfinite(double(mask(i, j)))) keys.push_back(j);
    if (edit == HeadEdit::zero) {
      for (std::size_t j = 0; j < s; ++j) p(i, j) = T(0);
    } else if (edit == HeadEdit::uniform) {
      for (std::size_t j = 0; j < s; ++j) p(i, j) = T(0);
      for (std::size_t j : keys) p(i, j) = T(1) / T(keys.size());
    } else {  // Fisher–Yates over the visible keys' weights
      for (std::size_t k = keys.size(); k > 1; --k) {
        const std::size_t r = rng.below(std::uint32_t(k));
        std::swap(p(i, keys[k - 1]), p(i, keys[r]));
      }
    }
  }
}

template <class T>
void multi_head_recombine(Tensor3T<T>& out, MultiHeadCacheT<T>& cache, const MultiHeadT<T>& p) {
  const std::size_t b = cache.weights.shape(0), h = cache.weights.shape(1), t = cache.weights.shape(2),
                    s = cache.weights.shape(3);
  const std::size_t hkv = p.n_kv_heads, dh = p.d_head(), group = h / hkv, c = p.w_o.shape(1);
  expect_shape("multi_head_recombine", "cache.v", shape_of(cache.v), {b, s, hkv * dh});
  ensure_shape(cache.concat, {b, t, h * dh});
  ensure_shape(out, {b, t, c});
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t hh = 0; hh < h; ++hh) {
      // forward: O_h = P_h·V_g, written into the head's column block of concat
      gemm_raw(Op::N, Op::N, t, dh, s, T(1), cache.weights.data() + (i * h + hh) * t * s, s,
               cache.v.data() + i * s * hkv * dh + (hh / group) * dh, hkv * dh, T(0),
               cache.concat.data() + i * t * h * dh + hh * dh, h * dh);
    }
  // out = concat·W_O + b_O
  gemm_raw(Op::N, Op::N, b * t, c, h * dh, T(1), cache.concat.data(), h * dh, p.w_o.data(), c, T(0), out.data(), c);
  if (p.b_o.size() > 0)
    for (std::size_t r = 0; r < b * t; ++r)
      for (std::size_t j = 0; j < c; ++j) out.data()[r * c + j] += p.b_o(j);
}

#define ATTN_INSTANTIATE_HEAD_EDIT(T)                                                              \
  template void edit_head_weights(MatT<T>&, HeadEdit, const MatT<T>&, Rng&);                       \
  template void multi_head_recombine(Tensor3T<T>&, MultiHeadCacheT<T>&, const MultiHeadT<T>&);
ATTN_INSTANTIATE_HEAD_EDIT(float)
ATTN_INSTANTIATE_HEAD_EDIT(double)

}  // namespace attn
