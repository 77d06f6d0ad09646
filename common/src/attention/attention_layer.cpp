// Scaled dot-product attention, forward and backward, in float and double (see attn/attention/attention_layer.hpp).
#include "attn/attention/attention_layer.hpp"

#include <cmath>
#include <vector>

#include "tensor/layer_kernels.hpp"

namespace attn {

namespace detail {

template <class T>
void sdpa_forward_raw(T* out, std::size_t ldo, T* weights, const T* q, std::size_t ldq, const T* k,
                      std::size_t ldk, const T* v, std::size_t ldv, const T* mask, std::size_t t, std::size_t s,
                      std::size_t dk, std::size_t dv, T scale) {
  gemm_raw(Op::N, Op::T, t, s, dk, scale, q, ldq, k, ldk, T(0), weights, s);  // S = scale · Q·Kᵀ
  for (std::size_t i = 0; i < t; ++i)
    softmax_row(weights + i * s, weights + i * s, mask ? mask + i * s : nullptr, s);  // P = softmax(S + M)
  gemm_raw(Op::N, Op::N, t, dv, s, T(1), weights, s, v, ldv, T(0), out, ldo);  // O = P·V
}

template <class T>
void sdpa_backward_raw(T* dq, std::size_t ldq, T* dk_out, std::size_t ldk, T* dv_out, std::size_t ldv,
                       const T* dout, std::size_t ldo, const T* weights, const T* q, const T* k, const T* v,
                       std::size_t t, std::size_t s, std::size_t dk, std::size_t dv, T scale) {
  std::vector<T> dp(t * s), ds(t * s, T(0));
  // forward: O = P·V  ->  dP = dO·Vᵀ,  dV += Pᵀ·dO
  gemm_raw(Op::N, Op::T, t, s, dv, T(1), dout, ldo, v, ldv, T(0), dp.data(), s);
  gemm_raw(Op::T, Op::N, s, dv, t, T(1), weights, s, dout, ldo, T(1), dv_out, ldv);
  // forward: P = softmax(S + M)  ->  dS = P ⊙ (dP − rowsum(dP ⊙ P))
  for (std::size_t i = 0; i < t; ++i) softmax_row_backward(ds.data() + i * s, weights + i * s, dp.data() + i * s, s);
  // forward: S = scale · Q·Kᵀ  ->  dQ += scale · dS·K,  dK += scale · dSᵀ·Q
  gemm_raw(Op::N, Op::N, t, dk, s, scale, ds.data(), s, k, ldk, T(1), dq, ldq);
  gemm_raw(Op::T, Op::N, s, dk, t, scale, ds.data(), s, q, ldq, T(1), dk_out, ldk);
}

template void sdpa_forward_raw(float*, std::size_t, float*, const float*, std::size_t, const float*, std::size_t,
                               const float*, std::size_t, const float*, std::size_t, std::size_t, std::size_t,
                               std::size_t, float);
template void sdpa_forward_raw(double*, std::size_t, double*, const double*, std::size_t, const double*,
                               std::size_t, const double*, std::size_t, const double*, std::size_t, std::size_t,
                               std::size_t, std::size_t, double);
template void sdpa_backward_raw(float*, std::size_t, float*, std::size_t, float*, std::size_t, const float*,
                                std::size_t, const float*, const float*, const float*, const float*, std::size_t,
                                std::size_t, std::size_t, std::size_t, float);
template void sdpa_backward_raw(double*, std::size_t, double*, std::size_t, double*, std::size_t, const double*,
                                std::size_t, const double*, const double*, const double*, const double*,
                                std::size_t, std::size_t, std::size_t, std::size_t, double);

}  // namespace detail

using namespace detail;

namespace {
template <class T>
void check_sdpa(const char* fn, const MatT<T>& q, const MatT<T>& k, const MatT<T>& v) {
  if (q.shape(1) != k.shape(1)) shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need the same d_k");
  if (k.shape(0) != v.shape(0)) shape_mismatch(fn, "k", shape_of(k), "v", shape_of(v), "need the same number of rows (keys)");
}
template <class T> T resolve_scale(T scale, std::size_t dk) { return scale > T(0) ? scale : T(1) / std::sqrt(T(dk)); }
}  // namespace

template <class T>
void sdpa_forward(MatT<T>& out, MatT<T>& weights, const MatT<T>& q, const MatT<T>& k, const MatT<T>& v,
                  const MatT<T>& mask, T scale) {
  // q: (T, d_k), k: (S, d_k), v: (S, d_v), mask: (T, S) or empty -> out: (T, d_v), weights: (T, S)
  const char* fn = "sdpa_forward";
  check_sdpa(fn, q, k, v);
  const std::size_t t = q.shape(0), s = k.shape(0), dk = q.shape(1), dv = v.shape(1);
  if (mask.size() > 0) expect_shape(fn, "mask", shape_of(mask), {t, s});
  ensure_shape(out, {t, dv});
  ensure_shape(weights, {t, s});
  sdpa_forward_raw(out.data(), dv, weights.data(), q.data(), dk, k.data(), dk, v.data(), dv,
                   mask.size() > 0 ? mask.data() : nullptr, t, s, dk, dv, resolve_scale(scale, dk));
}

template <class T>
void sdpa_backward(MatT<T>& dq, MatT<T>& dk, MatT<T>& dv, const MatT<T>& dout, const MatT<T>& weights,
                   const MatT<T>& q, const MatT<T>& k, const MatT<T>& v, T scale) {
  // dout: (T, d_v) -> dq: (T, d_k), dk: (S, d_k), dv: (S, d_v)
  const char* fn = "sdpa_backward";
  check_sdpa(fn, q, k, v);
  const std::size_t t = q.shape(0), s = k.shape(0), d_k = q.shape(1), d_v = v.shape(1);
  expect_shape(fn, "dout", shape_of(dout), {t, d_v});
  expect_shape(fn, "weights", shape_of(weights), {t, s});
  expect_same_shape(fn, "dq", dq, "q", q);
  expect_same_shape(fn, "dk", dk, "k", k);
  expect_same_shape(fn, "dv", dv, "v", v);
  sdpa_backward_raw(dq.data(), d_k, dk.data(), d_k, dv.data(), d_v, dout.data(), d_v, weights.data(), q.data(),
                    k.data(), v.data(), t, s, d_k, d_v, resolve_scale(scale, d_k));
}

template void sdpa_forward(MatT<float>&, MatT<float>&, const MatT<float>&, const MatT<float>&, const MatT<float>&,
                           const MatT<float>&, float);
template void sdpa_forward(MatT<double>&, MatT<double>&, const MatT<double>&, const MatT<double>&,
                           const MatT<double>&, const MatT<double>&, double);
template void sdpa_backward(MatT<float>&, MatT<float>&, MatT<float>&, const MatT<float>&, const MatT<float>&,
                            const MatT<float>&, const MatT<float>&, const MatT<float>&, float);
template void sdpa_backward(MatT<double>&, MatT<double>&, MatT<double>&, const MatT<double>&, const MatT<double>&,
                            const MatT<double>&, const MatT<double>&, const MatT<double>&, double);

}  // namespace attn
