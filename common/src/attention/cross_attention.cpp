// Cross-attention (see attn/attention/cross_attention.hpp).
#include "attn/attention/cross_attention.hpp"

#include <cmath>

#include "attn/tensor/blas.hpp"

namespace attn {

CrossAttentionWeights init_cross_attention(Rng& rng, std::size_t d_y, std::size_t d_x, std::size_t d_k,
                                           std::size_t d_v) {
  CrossAttentionWeights w;
  w.w_q = rng.normal_mat(d_y, d_k, 1.0f / std::sqrt(static_cast<float>(d_y)));
  w.w_k = rng.normal_mat(d_x, d_k, 1.0f / std::sqrt(static_cast<float>(d_x)));
  w.w_v = rng.normal_mat(d_x, d_v, 1.0f / std::sqrt(static_cast<float>(d_x)));
  return w;
}

CrossAttentionTrace cross_attention(const Mat& y, const Mat& x, const CrossAttentionWeights& w, const Mat& mask,
                                    float scale) {
  // y: (T, d_y), x: (S, d_x) -> q: (T, d_k), k: (S, d_k), v: (S, d_v), weights: (T, S), output: (T, d_v)
  const char* fn = "cross_attention";
  expect_shape(fn, "W_Q", shape_of(w.w_q), {y.shape(1), 0});
  expect_shape(fn, "W_K", shape_of(w.w_k), {x.shape(1), w.w_q.shape(1)});
  expect_shape(fn, "W_V", shape_of(w.w_v), {x.shape(1), 0});
  CrossAttentionTrace t;
  t.q = matmul(y, w.w_q);  // the asking sequence supplies the queries …
  t.k = matmul(x, w.w_k);  // … the other one the keys
  t.v = matmul(x, w.w_v);  // … and the values
  t.attn = scaled_dot_product_attention(t.q, t.k, t.v, mask, scale);
  return t;
}

}  // namespace attn
