// Single-head self-attention (see attn/attention/self_attention.hpp).
#include "attn/attention/self_attention.hpp"

#include <cmath>

#include "attn/tensor/blas.hpp"

namespace attn {

SelfAttentionWeights init_self_attention(Rng& rng, std::size_t d_model, std::size_t d_k, std::size_t d_v) {
  const float stddev = 1.0f / std::sqrt(static_cast<float>(d_model));
  SelfAttentionWeights w;
  w.w_q = rng.normal_mat(d_model, d_k, stddev);
  w.w_k = rng.normal_mat(d_model, d_k, stddev);
  w.w_v = rng.normal_mat(d_model, d_v, stddev);
  return w;
}

SelfAttentionTrace self_attention(const Mat& x, const SelfAttentionWeights& w, const Mat& mask, float scale) {
  // x: (T, d_model) -> q, k: (T, d_k), v: (T, d_v), output: (T, d_v)
  const std::size_t d_model = x.shape(1);
  expect_shape("self_attention", "W_Q", shape_of(w.w_q), {d_model, 0});
  expect_shape("self_attention", "W_K", shape_of(w.w_k), {d_model, w.w_q.shape(1)});
  expect_shape("self_attention", "W_V", shape_of(w.w_v), {d_model, 0});
  SelfAttentionTrace t;
  t.q = matmul(x, w.w_q);
  t.k = matmul(x, w.w_k);
  t.v = matmul(x, w.w_v);
  t.attn = scaled_dot_product_attention(t.q, t.k, t.v, mask, scale);
  return t;
}

}  // namespace attn
