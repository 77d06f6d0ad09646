// Scaled dot-product attention on OpenBLAS (see attn/attention/attention.hpp).
#include "attn/attention/attention.hpp"

#include <cmath>
#include <limits>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"

namespace attn {

float default_attention_scale(std::size_t d_k) { return 1.0f / std::sqrt(static_cast<float>(d_k)); }

AttentionResult scaled_dot_product_attention(const Mat& q, const Mat& k, const Mat& v, const Mat& mask,
                                             float scale) {
  // q: (T, d_k), k: (S, d_k), v: (S, d_v) -> output: (T, d_v)
  const char* fn = "scaled_dot_product_attention";
  if (q.shape(1) != k.shape(1)) shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need the same d_k");
  if (k.shape(0) != v.shape(0)) shape_mismatch(fn, "k", shape_of(k), "v", shape_of(v), "need the same number of rows (keys)");
  if (mask.size() > 0) expect_shape(fn, "mask", shape_of(mask), {q.shape(0), k.shape(0)});
  if (scale <= 0.0f) scale = default_attention_scale(q.shape(1));
  AttentionResult r;
  gemm(r.scores, q, k, Op::N, Op::T, scale);  // S = scale · Q Kᵀ, Kᵀ by flag (no copy)
  r.weights = softmax(r.scores, mask);
  gemm(r.output, r.weights, v);               // O = P V
  return r;
}

AttentionResult3 scaled_dot_product_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                              const Mat& mask, float scale) {
  // q: (H, T, d_k), k: (H, S, d_k), v: (H, S, d_v) -> output: (H, T, d_v)
  const char* fn = "scaled_dot_product_attention";
  if (q.shape(0) != k.shape(0) || q.shape(2) != k.shape(2))
    shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need the same heads and d_k");
  if (k.shape(0) != v.shape(0) || k.shape(1) != v.shape(1))
    shape_mismatch(fn, "k", shape_of(k), "v", shape_of(v), "need the same heads and keys");
  if (mask.size() > 0) expect_shape(fn, "mask", shape_of(mask), {q.shape(1), k.shape(1)});
  if (scale <= 0.0f) scale = default_attention_scale(q.shape(2));
  AttentionResult3 r;
  gemm_batched(r.scores, q, k, Op::N, Op::T, scale);
  r.weights = softmax(r.scores, mask);
  gemm_batched(r.output, r.weights, v);
  return r;
}

MatD attention_reference(const Mat& q, const Mat& k, const Mat& v, const Mat& mask, double scale) {
  const std::size_t t = q.shape(0), s = k.shape(0), dk = q.shape(1), dv = v.shape(1);
  if (k.shape(1) != dk || v.shape(0) != s) shape_mismatch("attention_reference", "k", shape_of(k), "v", shape_of(v), "do not fit q");
  if (scale <= 0.0) scale = 1.0 / std::sqrt(double(dk));
  MatD out = xt::zeros<double>({t, dv});
  std::vector<double> w(s);
  for (std::size_t i = 0; i < t; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < s; ++j) {
      double acc = 0.0;
      for (std::size_t c = 0; c < dk; ++c) acc += double(q(i, c)) * double(k(j, c));
      w[j] = acc * scale + (mask.size() > 0 ? double(mask(i, j)) : 0.0);
      m = std::max(m, w[j]);
    }
    if (std::isinf(m) && m < 0) continue;  // fully masked: output row stays zero
    double sum = 0.0;
    for (std::size_t j = 0; j < s; ++j) sum += (w[j] = std::exp(w[j] - m));
    for (std::size_t j = 0; j < s; ++j)
      for (std::size_t c = 0; c < dv; ++c) out(i, c) += w[j] / sum * double(v(j, c));
  }
  return out;
}

}  // namespace attn
