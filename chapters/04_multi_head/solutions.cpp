// Chapter 04 — worked solutions in plain loops. (The library's version is common/src/attention/mha_trace.cpp.)
#include <algorithm>
#include <cmath>

#include "exercises.hpp"

namespace ex04 {

attn::Tensor3 split_heads(const attn::Mat& x, std::size_t n_heads) {
  const std::size_t T = x.shape(0), dh = x.shape(1) / n_heads;
  attn::Tensor3 out = xt::zeros<float>({n_heads, T, dh});
  for (std::size_t h = 0; h < n_heads; ++h)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < dh; ++c) out(h, t, c) = x(t, h * dh + c);
  return out;
}

namespace {
attn::Mat matmul(const attn::Mat& a, const attn::Mat& b) {  // (n, k)·(k, m)
  attn::Mat c = xt::zeros<float>({a.shape(0), b.shape(1)});
  for (std::size_t i = 0; i < a.shape(0); ++i)
    for (std::size_t k = 0; k < a.shape(1); ++k)
      for (std::size_t j = 0; j < b.shape(1); ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}
}  // namespace

attn::Mat multi_head_attention(const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k, const attn::Mat& w_v,
                               const attn::Mat& w_o, std::size_t n_heads) {
  const attn::Tensor3 q = split_heads(matmul(x, w_q), n_heads), k = split_heads(matmul(x, w_k), n_heads),
                      v = split_heads(matmul(x, w_v), n_heads);
  const std::size_t T = x.shape(0), dh = q.shape(2);
  const float scale = 1.0f / std::sqrt(float(dh));
  attn::Mat concat = xt::zeros<float>({T, n_heads * dh});
  for (std::size_t h = 0; h < n_heads; ++h)
    for (std::size_t i = 0; i < T; ++i) {
      std::vector<float> w(T);
      float m = -INFINITY, sum = 0.0f;
      for (std::size_t j = 0; j < T; ++j) {
        float s = 0.0f;
        for (std::size_t c = 0; c < dh; ++c) s += q(h, i, c) * k(h, j, c);
        w[j] = s * scale;
        m = std::max(m, w[j]);
      }
      for (float& e : w) sum += (e = std::exp(e - m));
      for (std::size_t j = 0; j < T; ++j)
        for (std::size_t c = 0; c < dh; ++c) concat(i, h * dh + c) += w[j] / sum * v(h, j, c);
    }
  return matmul(concat, w_o);
}

}  // namespace ex04
