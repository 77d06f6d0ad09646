// Private helpers shared by the trainable layers (not installed, not included by chapters):
// a matrix product templated on the scalar type (float -> OpenBLAS sgemm, double -> dgemm, so the
// double gradient checks run the very same code path) and small shape helpers. The softmax row
// they share is the one in attn/tensor/softmax.hpp (float and double). Every layer kernel is a
// template compiled for float and double.
#pragma once

#include <cblas.h>

#include <cmath>
#include <limits>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn::detail {

// Row-major C = alpha · op(A) · op(B) + beta · C with leading dimensions (as cblas_?gemm).
inline void gemm_raw(Op oa, Op ob, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                     std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  sgemm(oa, ob, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
inline void gemm_raw(Op oa, Op ob, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
                     std::size_t lda, const double* b, std::size_t ldb, double beta, double* c,
                     std::size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  cblas_dgemm(CblasRowMajor, oa == Op::T ? CblasTrans : CblasNoTrans, ob == Op::T ? CblasTrans : CblasNoTrans,
              int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// Whole-matrix form: c (+)= op(a)·op(b); c must already have its shape.
template <class T>
void gemm_t(MatT<T>& c, const MatT<T>& a, const MatT<T>& b, Op oa, Op ob, T alpha, T beta) {
  const std::size_t m = oa == Op::N ? a.shape(0) : a.shape(1);
  const std::size_t k = oa == Op::N ? a.shape(1) : a.shape(0);
  const std::size_t n = ob == Op::N ? b.shape(1) : b.shape(0);
  gemm_raw(oa, ob, m, n, k, alpha, a.data(), a.shape(1), b.data(), b.shape(1), beta, c.data(), n);
}

template <class T> T sigmoid_t(T x) { return T(1) / (T(1) + std::exp(-x)); }

// Resize a container to `shape` unless it already has it (contents are then overwritten).
template <class C>
void ensure_shape(C& c, const Shape& shape) {
  if (shape_of(c) == shape) return;
  typename C::shape_type s{};
  std::copy(shape.begin(), shape.end(), s.begin());
  c.resize(s);
}
// Fill with zeros, keeping the shape.
template <class C> void fill_zero(C& c) { std::fill(c.begin(), c.end(), typename C::value_type(0)); }

// An accumulated gradient must either be empty (skip) or have the input's shape.
template <class C>
bool wants_grad(const char* fn, const char* what, const C& grad, const Shape& expected) {
  if (grad.size() == 0) return false;
  expect_shape(fn, what, shape_of(grad), expected);
  return true;
}

}  // namespace attn::detail

namespace attn::detail {

// Scaled dot-product attention on raw row-major blocks with leading dimensions, so that one head
// of a (T, H·dh) projection is used in place. Defined in attention_layer.cpp (float, double).
// q: (T, dk) ld ldq, k: (S, dk) ld ldk, v: (S, dv) ld ldv, mask: (T, S) or nullptr
//   -> out: (T, dv) ld ldo, weights: (T, S) contiguous.
template <class T>
void sdpa_forward_raw(T* out, std::size_t ldo, T* weights, const T* q, std::size_t ldq, const T* k,
                      std::size_t ldk, const T* v, std::size_t ldv, const T* mask, std::size_t t, std::size_t s,
                      std::size_t dk, std::size_t dv, T scale);
// dout: (T, dv) ld ldo -> dq (+=), dk (+=), dv (+=) with the same leading dimensions as the forward.
template <class T>
void sdpa_backward_raw(T* dq, std::size_t ldq, T* dk_out, std::size_t ldk, T* dv_out, std::size_t ldv,
                       const T* dout, std::size_t ldo, const T* weights, const T* q, const T* k, const T* v,
                       std::size_t t, std::size_t s, std::size_t dk, std::size_t dv, T scale);

}  // namespace attn::detail
