// Chapter 03 — worked solutions, in plain loops so every index is visible. (The library's
// versions in common/src/tensor/softmax.cpp and attention/attention.cpp compute the same;
// attention.cpp does its two matrix products with BLAS, and its softmax in softmax.cpp's loop.)
#include <cmath>
#include <limits>

#include "exercises.hpp"

namespace ex03 {

attn::Mat softmax_rows(const attn::Mat& x) {
  const std::size_t rows = x.shape(0), cols = x.shape(1);
  attn::Mat y = xt::zeros<float>({rows, cols});
  for (std::size_t i = 0; i < rows; ++i) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < cols; ++j) m = std::max(m, x(i, j));
    if (std::isinf(m) && m < 0) continue;  // all masked: the row stays zero
    float sum = 0.0f;
    for (std::size_t j = 0; j < cols; ++j) sum += (y(i, j) = std::exp(x(i, j) - m));
    for (std::size_t j = 0; j < cols; ++j) y(i, j) /= sum;
  }
  return y;
}

attn::Mat causal_mask(std::size_t n) {
  attn::Mat m = xt::zeros<float>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) m(i, j) = -std::numeric_limits<float>::infinity();
  return m;
}

attn::Mat attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v, const attn::Mat& mask) {
  const std::size_t t = q.shape(0), s = k.shape(0), dk = q.shape(1), dv = v.shape(1);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  attn::Mat scores = xt::zeros<float>({t, s});
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < s; ++j) {
      float dot = 0.0f;
      for (std::size_t c = 0; c < dk; ++c) dot += q(i, c) * k(j, c);
      scores(i, j) = dot * scale + (mask.size() > 0 ? mask(i, j) : 0.0f);
    }
  const attn::Mat w = softmax_rows(scores);
  attn::Mat out = xt::zeros<float>({t, dv});
  for (std::size_t i = 0; i < t; ++i)
    for (std::size_t j = 0; j < s; ++j)
      for (std::size_t c = 0; c < dv; ++c) out(i, c) += w(i, j) * v(j, c);
  return out;
}

}  // namespace ex03
