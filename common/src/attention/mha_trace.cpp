// Multi-head attention with every intermediate kept (see attn/attention/mha_trace.hpp).
#include "attn/attention/mha_trace.hpp"

#include <string>

#include "attn/tensor/blas.hpp"
#include "attn/attention/gqa.hpp"

namespace attn {

Tensor3 split_heads(const Mat& x, std::size_t n_heads) {
  // x: (T, H·dh) -> (H, T, dh)
  if (n_heads == 0 || x.shape(1) % n_heads != 0)
    throw ShapeError("split_heads: x " + shape_str(shape_of(x)) + " has " + std::to_string(x.shape(1)) +
                     " columns, not divisible into " + std::to_string(n_heads) + " heads");
  const std::size_t T = x.shape(0), dh = x.shape(1) / n_heads;
  Tensor3 out = xt::zeros<float>({n_heads, T, dh});
  for (std::size_t h = 0; h < n_heads; ++h)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < dh; ++c) out(h, t, c) = x(t, h * dh + c);
  return out;
}

Mat merge_heads(const Tensor3& x) {
  // x: (H, T, dh) -> (T, H·dh)
  const std::size_t H = x.shape(0), T = x.shape(1), dh = x.shape(2);
  Mat out = xt::zeros<float>({T, H * dh});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < dh; ++c) out(t, h * dh + c) = x(h, t, c);
  return out;
}

namespace {
Mat project(const Mat& x, const Mat& w, const Vec& b) {
  Mat y = matmul(x, w);
  if (b.size() > 0) y += xt::view(b, xt::newaxis(), xt::all());
  return y;
}
}  // namespace

MhaTrace multi_head_trace(const Mat& x, const MultiHead& p, const Mat& mask) {
  // x: (T, d_model) -> output: (T, d_model)
  const std::size_t d_model = x.shape(1), H = p.n_heads, G = p.n_kv_heads, dh = p.d_head();
  expect_shape("multi_head_trace", "W_Q", shape_of(p.w_q), {d_model, H * dh});
  expect_shape("multi_head_trace", "W_K", shape_of(p.w_k), {d_model, G * dh});
  expect_shape("multi_head_trace", "W_V", shape_of(p.w_v), {d_model, G * dh});
  expect_shape("multi_head_trace", "W_O", shape_of(p.w_o), {H * dh, d_model});
  MhaTrace t;
  t.q = project(x, p.w_q, p.b_q);
  t.k = project(x, p.w_k, p.b_k);
  t.v = project(x, p.w_v, p.b_v);
  t.q_heads = split_heads(t.q, H);
  t.k_heads = split_heads(t.k, G);
  t.v_heads = split_heads(t.v, G);
  AttentionResult3 a = grouped_query_attention(t.q_heads, t.k_heads, t.v_heads, mask);
  t.scores = std::move(a.scores);
  t.weights = std::move(a.weights);
  t.heads_out = std::move(a.output);
  t.concat = merge_heads(t.heads_out);
  t.output = project(t.concat, p.w_o, p.b_o);
  return t;
}

}  // namespace attn
