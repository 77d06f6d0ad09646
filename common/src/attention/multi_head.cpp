// Multi-head attention with grouped K/V heads, forward and backward (see attn/attention/multi_head.hpp).
#include "attn/attention/multi_head.hpp"

#include <cmath>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

MultiHead multi_head_init(std::size_t d_model, std::size_t n_heads, std::size_t n_kv_heads, Rng& rng, bool bias) {
  if (n_heads == 0 || d_model % n_heads != 0 || n_kv_heads == 0 || n_heads % n_kv_heads != 0)
    throw std::invalid_argument("multi_head_init: need n_heads | d_model and n_kv_heads | n_heads, got d_model " +
                                std::to_string(d_model) + ", n_heads " + std::to_string(n_heads) + ", n_kv_heads " +
                                std::to_string(n_kv_heads));
  const std::size_t dh = d_model / n_heads;
  const float bound = 1.0f / std::sqrt(float(d_model));
  MultiHead p;
  p.n_heads = n_heads;
  p.n_kv_heads = n_kv_heads;
  p.w_q = rng.uniform_mat(d_model, n_heads * dh, -bound, bound);
  p.w_k = rng.uniform_mat(d_model, n_kv_heads * dh, -bound, bound);
  p.w_v = rng.uniform_mat(d_model, n_kv_heads * dh, -bound, bound);
  p.w_o = rng.uniform_mat(n_heads * dh, d_model, -bound, bound);
  if (bias) {
    p.b_q = xt::zeros<float>({n_heads * dh});
    p.b_k = xt::zeros<float>({n_kv_heads * dh});
    p.b_v = xt::zeros<float>({n_kv_heads * dh});
    p.b_o = xt::zeros<float>({d_model});
  }
  return p;
}

template <class T>
MultiHeadT<T> zeros_like(const MultiHeadT<T>& p) {
  MultiHeadT<T> g = p;  // the head counts and every shape, then zeros
  for (auto* w : {&g.w_q, &g.w_k, &g.w_v, &g.w_o}) w->fill(T(0));
  for (auto* b : {&g.b_q, &g.b_k, &g.b_v, &g.b_o}) b->fill(T(0));
  return g;
}

MultiHeadD to_double(const MultiHead& p) {
  MultiHeadD d;
  d.n_heads = p.n_heads;
  d.n_kv_heads = p.n_kv_heads;
  d.w_q = xt::cast<double>(p.w_q);
  d.w_k = xt::cast<double>(p.w_k);
  d.w_v = xt::cast<double>(p.w_v);
  d.w_o = xt::cast<double>(p.w_o);
  d.b_q = xt::cast<double>(p.b_q);
  d.b_k = xt::cast<double>(p.b_k);
  d.b_v = xt::cast<double>(p.b_v);
  d.b_o = xt::cast<double>(p.b_o);
  return d;
}

void register_params(ParamRegistry& reg, const std::string& prefix, MultiHead& p, MultiHead& grad) {
  reg.add(prefix + ".w_q", p.w_q, grad.w_q);
  reg.add(prefix + ".w_k", p.w_k, grad.w_k);
  reg.add(prefix + ".w_v", p.w_v, grad.w_v);
  reg.add(prefix + ".w_o", p.w_o, grad.w_o);
  reg.add(prefix + ".b_q", p.b_q, grad.b_q);
  reg.add(prefix + ".b_k", p.b_k, grad.b_k);
  reg.add(prefix + ".b_v", p.b_v, grad.b_v);
  reg.add(prefix + ".b_o", p.b_o, grad.b_o);
}

namespace {

// y (rows, out) = x (rows, in)·W + b
template <class T>
void project(T* y, const T* x, std::size_t rows, const MatT<T>& w, const VecT<T>& b) {
  const std::size_t in = w.shape(0), out = w.shape(1);
  gemm_raw(Op::N, Op::N, rows, out, in, T(1), x, in, w.data(), out, T(0), y, out);
  if (b.size() > 0)
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < out; ++j) y[i * out + j] += b(j);
}

// forward: y = x·W + b  ->  dx += dy·Wᵀ, dW += xᵀ·dy, db += Σ dy
template <class T>
void project_backward(T* dx, MatT<T>& dw, VecT<T>& db, const T* dy, const T* x, std::size_t rows,
                      const MatT<T>& w) {
  const std::size_t in = w.shape(0), out = w.shape(1);
  gemm_raw(Op::N, Op::T, rows, in, out, T(1), dy, out, w.data(), out, T(1), dx, in);
  gemm_raw(Op::T, Op::N, in, out, rows, T(1), x, in, dy, out, T(1), dw.data(), out);
  if (db.size() > 0)
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < out; ++j) db(j) += dy[i * out + j];
}

template <class T>
void check_mha(const char* fn, const MultiHeadT<T>& p, const Tensor3T<T>& xq, const Tensor3T<T>& xkv) {
  const std::size_t c = p.w_q.shape(0), h = p.n_heads, hkv = p.n_kv_heads;
  if (h == 0 || hkv == 0 || h % hkv != 0 || p.w_q.shape(1) % h != 0)
    throw ShapeError(std::string(fn) + ": n_heads " + std::to_string(h) + " and n_kv_heads " + std::to_string(hkv) +
                     " must be positive, n_kv_heads must divide n_heads and n_heads the width of w_q " +
                     shape_str(shape_of(p.w_q)));
  const std::size_t dh = p.w_q.shape(1) / h;
  expect_shape(fn, "w_k", shape_of(p.w_k), {c, hkv * dh});
  expect_shape(fn, "w_v", shape_of(p.w_v), {c, hkv * dh});
  expect_shape(fn, "w_o", shape_of(p.w_o), {h * dh, c});
  expect_shape(fn, "xq", shape_of(xq), {0, 0, c});
  expect_shape(fn, "xkv", shape_of(xkv), {xq.shape(0), 0, c});
}

}  // namespace

template <class T>
void multi_head_forward(Tensor3T<T>& out, MultiHeadCacheT<T>& cache, const Tensor3T<T>& xq, const Tensor3T<T>& xkv,
                        const MultiHeadT<T>& p, const MatT<T>& mask) {
  // xq: (B, T, C), xkv: (B, S, C), mask: (T, S) or empty -> out: (B, T, C)
  const char* fn = "multi_head_forward";
  check_mha(fn, p, xq, xkv);
  const std::size_t b = xq.shape(0), t = xq.shape(1), s = xkv.shape(1), c = xq.shape(2);
  const std::size_t h = p.n_heads, hkv = p.n_kv_heads, dh = p.d_head(), group = h / hkv;
  if (mask.size() > 0) expect_shape(fn, "mask", shape_of(mask), {t, s});
  ensure_shape(cache.q, {b, t, h * dh});
  ensure_shape(cache.k, {b, s, hkv * dh});
  ensure_shape(cache.v, {b, s, hkv * dh});
  ensure_shape(cache.weights, {b, h, t, s});
  ensure_shape(cache.concat, {b, t, h * dh});
  ensure_shape(out, {b, t, c});
  project(cache.q.data(), xq.data(), b * t, p.w_q, p.b_q);   // Q = Xq·W_Q + b_Q
  project(cache.k.data(), xkv.data(), b * s, p.w_k, p.b_k);  // K = Xkv·W_K + b_K
  project(cache.v.data(), xkv.data(), b * s, p.w_v, p.b_v);  // V = Xkv·W_V + b_V
  const T scale = T(1) / std::sqrt(T(dh));
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t hh = 0; hh < h; ++hh) {
      const std::size_t g = hh / group;  // the K/V head this query head reads
      sdpa_forward_raw(cache.concat.data() + i * t * h * dh + hh * dh, h * dh,
                       cache.weights.data() + (i * h + hh) * t * s,
                       cache.q.data() + i * t * h * dh + hh * dh, h * dh,
                       cache.k.data() + i * s * hkv * dh + g * dh, hkv * dh,
                       cache.v.data() + i * s * hkv * dh + g * dh, hkv * dh,
                       mask.size() > 0 ? mask.data() : static_cast<const T*>(nullptr), t, s, dh, dh, scale);
    }
  project(out.data(), cache.concat.data(), b * t, p.w_o, p.b_o);  // out = concat·W_O + b_O
}

template <class T>
void multi_head_backward(Tensor3T<T>& dxq, Tensor3T<T>& dxkv, MultiHeadT<T>& dp, const Tensor3T<T>& dout,
                         const MultiHeadCacheT<T>& cache, const Tensor3T<T>& xq, const Tensor3T<T>& xkv,
                         const MultiHeadT<T>& p) {
  // dout: (B, T, C) -> dxq: (B, T, C), dxkv: (B, S, C), dp
  const char* fn = "multi_head_backward";
  check_mha(fn, p, xq, xkv);
  const std::size_t b = xq.shape(0), t = xq.shape(1), s = xkv.shape(1);
  const std::size_t h = p.n_heads, hkv = p.n_kv_heads, dh = p.d_head(), group = h / hkv;
  expect_same_shape(fn, "dout", dout, "xq", xq);
  expect_same_shape(fn, "dxq", dxq, "xq", xq);
  expect_same_shape(fn, "dxkv", dxkv, "xkv", xkv);
  expect_same_shape(fn, "dp.w_q", dp.w_q, "w_q", p.w_q);
  expect_same_shape(fn, "dp.w_k", dp.w_k, "w_k", p.w_k);
  expect_same_shape(fn, "dp.w_v", dp.w_v, "w_v", p.w_v);
  expect_same_shape(fn, "dp.w_o", dp.w_o, "w_o", p.w_o);
  // forward: out = concat·W_O + b_O
  Tensor3T<T> dconcat = xt::zeros<T>({b, t, h * dh});
  project_backward(dconcat.data(), dp.w_o, dp.b_o, dout.data(), cache.concat.data(), b * t, p.w_o);
  // forward: head hh: O_hh = softmax(Q_hh·K_gᵀ/√dh + M)·V_g
  Tensor3T<T> dq = xt::zeros<T>({b, t, h * dh}), dk = xt::zeros<T>({b, s, hkv * dh}),
              dv = xt::zeros<T>({b, s, hkv * dh});
  const T scale = T(1) / std::sqrt(T(dh));
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t hh = 0; hh < h; ++hh) {
      const std::size_t g = hh / group;
      const std::size_t qo = i * t * h * dh + hh * dh, ko = i * s * hkv * dh + g * dh;
      sdpa_backward_raw(dq.data() + qo, h * dh, dk.data() + ko, hkv * dh, dv.data() + ko, hkv * dh,
                        dconcat.data() + qo, h * dh, cache.weights.data() + (i * h + hh) * t * s,
                        cache.q.data() + qo, cache.k.data() + ko, cache.v.data() + ko, t, s, dh, dh, scale);
    }
  // forward: Q = Xq·W_Q + b_Q,  K = Xkv·W_K + b_K,  V = Xkv·W_V + b_V
  project_backward(dxq.data(), dp.w_q, dp.b_q, dq.data(), xq.data(), b * t, p.w_q);
  project_backward(dxkv.data(), dp.w_k, dp.b_k, dk.data(), xkv.data(), b * s, p.w_k);
  project_backward(dxkv.data(), dp.w_v, dp.b_v, dv.data(), xkv.data(), b * s, p.w_v);
}

#define ATTN_INSTANTIATE_MHA(T)                                                                             \
  template MultiHeadT<T> zeros_like(const MultiHeadT<T>&);                                                  \
  template void multi_head_forward(Tensor3T<T>&, MultiHeadCacheT<T>&, const Tensor3T<T>&, const Tensor3T<T>&, \
                                   const MultiHeadT<T>&, const MatT<T>&);                                   \
  template void multi_head_backward(Tensor3T<T>&, Tensor3T<T>&, MultiHeadT<T>&, const Tensor3T<T>&,         \
                                    const MultiHeadCacheT<T>&, const Tensor3T<T>&, const Tensor3T<T>&,      \
                                    const MultiHeadT<T>&);
ATTN_INSTANTIATE_MHA(float)
ATTN_INSTANTIATE_MHA(double)

}  // namespace attn
