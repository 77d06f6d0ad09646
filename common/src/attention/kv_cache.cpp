// Decoding with and without a KV cache, grouped K/V heads (see attn/attention/kv_cache.hpp).
#include "attn/attention/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

namespace {

// Attention of the query rows q: (T, heads·hd) over k, v: (len, kv_heads·hd), causal with the
// queries being the last T positions; -> (T, heads·hd). Query head h reads K/V head h / group.
Mat grouped_causal_attention(const DecoderAttention& l, const float* q, std::size_t t, const float* k,
                             const float* v, std::size_t len) {
  const std::size_t hd = l.head_dim, group = l.heads / l.kv_heads, qw = l.heads * hd, kw = l.kv_heads * hd;
  const float scale = 1.0f / std::sqrt(float(hd));
  Mat out = xt::zeros<float>({t, qw});
  std::vector<float> w(len);
  for (std::size_t i = 0; i < t; ++i) {
    const std::size_t visible = len - t + i + 1;  // keys 0 … (len − t + i)
    for (std::size_t h = 0; h < l.heads; ++h) {
      const std::size_t kh = h / group;
      const float* qi = q + i * qw + h * hd;
      for (std::size_t j = 0; j < visible; ++j) {
        const float* kj = k + j * kw + kh * hd;
        float acc = 0.0f;
        for (std::size_t c = 0; c < hd; ++c) acc += qi[c] * kj[c];
        w[j] = acc * scale;
      }
      softmax_row(w.data(), w.data(), nullptr, visible);
      float* oi = out.data() + i * qw + h * hd;
      for (std::size_t j = 0; j < visible; ++j) {
        const float* vj = v + j * kw + kh * hd;
        for (std::size_t c = 0; c < hd; ++c) oi[c] += w[j] * vj[c];
      }
    }
  }
  return out;
}

Mat rms_normalise(const Mat& x) {
  Mat y = x;
  for (std::size_t i = 0; i < x.shape(0); ++i) {
    double ss = 0;
    for (std::size_t c = 0; c < x.shape(1); ++c) ss += double(x(i, c)) * x(i, c);
    const float inv = float(1.0 / std::sqrt(ss / double(x.shape(1)) + 1e-6));
    for (std::size_t c = 0; c < x.shape(1); ++c) y(i, c) *= inv;
  }
  return y;
}

}  // namespace

DecoderAttention decoder_attention_init(std::size_t d_model, std::size_t heads, std::size_t kv_heads,
                                        std::size_t head_dim, Rng& rng) {
  if (heads == 0 || kv_heads == 0 || heads % kv_heads != 0)
    throw ShapeError("decoder_attention_init: kv_heads (" + std::to_string(kv_heads) + ") must divide heads (" +
                     std::to_string(heads) + ")");
  DecoderAttention l{d_model, heads, kv_heads, head_dim, {}, {}, {}, {}};
  const float sd = 1.0f / std::sqrt(float(d_model));
  l.wq = rng.normal_mat(d_model, heads * head_dim, sd);
  l.wk = rng.normal_mat(d_model, kv_heads * head_dim, sd);
  l.wv = rng.normal_mat(d_model, kv_heads * head_dim, sd);
  l.wo = rng.normal_mat(heads * head_dim, d_model, 1.0f / std::sqrt(float(heads * head_dim)));
  return l;
}

KVCache kv_cache_make(const DecoderAttention& l, std::size_t capacity) {
  KVCache c;
  c.k = xt::zeros<float>({capacity, l.kv_heads * l.head_dim});
  c.v = xt::zeros<float>({capacity, l.kv_heads * l.head_dim});
  return c;
}

Mat decoder_attention_forward(const DecoderAttention& l, const Mat& x) {
  expect_shape("decoder_attention_forward", "x", shape_of(x), {0, l.d_model});
  const Mat q = matmul(x, l.wq), k = matmul(x, l.wk), v = matmul(x, l.wv);  // every token's q, k, v
  return matmul(grouped_causal_attention(l, q.data(), x.shape(0), k.data(), v.data(), x.shape(0)), l.wo);
}

Mat decoder_attention_step(const DecoderAttention& l, KVCache& cache, const Mat& x_t) {
  expect_shape("decoder_attention_step", "x_t", shape_of(x_t), {1, l.d_model});
  if (cache.len >= cache.k.shape(0))
    throw ShapeError("decoder_attention_step: the cache is full (" + std::to_string(cache.len) + " tokens)");
  const Mat q = matmul(x_t, l.wq), k = matmul(x_t, l.wk), v = matmul(x_t, l.wv);  // only the new token
  std::copy(k.begin(), k.end(), cache.k.data() + cache.len * k.size());         // append k_t, v_t
  std::copy(v.begin(), v.end(), cache.v.data() + cache.len * v.size());
  ++cache.len;
  return matmul(grouped_causal_attention(l, q.data(), 1, cache.k.data(), cache.v.data(), cache.len), l.wo);
}

Mat generate(const DecoderAttention& l, const Mat& x0, std::size_t steps, bool use_cache) {
  expect_shape("generate", "x0", shape_of(x0), {1, l.d_model});
  Mat xs = xt::zeros<float>({steps, l.d_model});  // the inputs so far, one row per token
  if (steps == 0) return xs;
  std::copy(x0.begin(), x0.end(), xs.data());
  KVCache cache = kv_cache_make(l, use_cache ? steps : 0);
  for (std::size_t t = 0; t + 1 < steps; ++t) {
    Mat x_t = xt::view(xs, xt::range(t, t + 1), xt::all());
    Mat y_t;
    if (use_cache) {
      y_t = decoder_attention_step(l, cache, x_t);
    } else {  // recompute the whole prefix 0 … t and keep only its last row
      Mat prefix = xt::view(xs, xt::range(0, t + 1), xt::all());
      Mat all = decoder_attention_forward(l, prefix);
      y_t = xt::view(all, xt::range(t, t + 1), xt::all());
    }
    Mat next = rms_normalise(Mat(x_t + y_t));
    std::copy(next.begin(), next.end(), xs.data() + (t + 1) * l.d_model);
  }
  return xs;
}

}  // namespace attn
