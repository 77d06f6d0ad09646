// Chapter 07 — worked solutions, in plain loops so every index is visible. (The library's version
// is attn::cross_attention in common/src/attention/cross_attention.cpp, with BLAS.)
#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises.hpp"

namespace ex07 {

namespace {
attn::Mat product(const attn::Mat& a, const attn::Mat& b) {  // (n, k)·(k, m) -> (n, m)
  attn::Mat c = xt::zeros<float>({a.shape(0), b.shape(1)});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t t = 0; t < a.shape(1); ++t)
      for (std::size_t j = 0; j < b.shape(1); ++j) c(i, j) += a(i, t) * b(t, j);
  return c;
}
}  // namespace

attn::Mat cross_attention(const attn::Mat& y, const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k,
                          const attn::Mat& w_v) {
  const attn::Mat q = product(y, w_q);  // (T, d_k): the target asks
  const attn::Mat k = product(x, w_k);  // (S, d_k): the source answers …
  const attn::Mat v = product(x, w_v);  // (S, d_v): … and hands over its values
  const std::size_t t = q.shape(0), s = k.shape(0), dk = q.shape(1);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  attn::Mat w = xt::zeros<float>({t, s});
  for (std::size_t i = 0; i < t; ++i) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < s; ++j) {
      float dot = 0.0f;
      for (std::size_t c = 0; c < dk; ++c) dot += q(i, c) * k(j, c);
      w(i, j) = dot * scale;
      m = std::max(m, w(i, j));
    }
    float sum = 0.0f;
    for (std::size_t j = 0; j < s; ++j) sum += (w(i, j) = std::exp(w(i, j) - m));
    for (std::size_t j = 0; j < s; ++j) w(i, j) /= sum;
  }
  return product(w, v);  // (T, S)·(S, d_v) -> (T, d_v)
}

attn::Mat source_padding_mask(std::size_t t, std::size_t s, std::size_t valid) {
  attn::Mat m = xt::zeros<float>({t, s});
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = valid; j < s; ++j) m(i, j) = -std::numeric_limits<float>::infinity();
  return m;
}

}  // namespace ex07
