// BLAS layer (see attn/tensor/blas.hpp): shape checks, then straight to cblas_sgemm. Transposes are
// passed as flags with the original leading dimension, so no transposed copy is ever made.
#include "attn/tensor/blas.hpp"

#include <cblas.h>

namespace attn {

namespace {

CBLAS_TRANSPOSE to_cblas(Op op) { return op == Op::T ? CblasTrans : CblasNoTrans; }

// Rows and columns of op(x) for a (r, c) matrix x.
std::size_t op_rows(const Shape& s, Op op) { return op == Op::N ? s[0] : s[1]; }
std::size_t op_cols(const Shape& s, Op op) { return op == Op::N ? s[1] : s[0]; }

}  // namespace

void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, to_cblas(op_a), to_cblas(op_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(Mat& c, const Mat& a, const Mat& b, Op op_a, Op op_b, float alpha, float beta) {
  // op(a): (M, K), op(b): (K, N) -> c: (M, N)
  const Shape sa = shape_of(a), sb = shape_of(b);
  const std::size_t m = op_rows(sa, op_a), k = op_cols(sa, op_a), n = op_cols(sb, op_b);
  if (op_rows(sb, op_b) != k) shape_mismatch("gemm", "op(a)", {m, k}, "op(b)", {op_rows(sb, op_b), n}, "have different inner sizes");
  if (beta == 0.0f) {
    if (c.shape(0) != m || c.shape(1) != n) c.resize({m, n});
  } else {
    expect_shape("gemm", "c (beta != 0)", shape_of(c), {m, n});
  }
  if (k == 0) {  // BLAS with k = 0 scales c by beta only.
    c *= beta;
    return;
  }
  sgemm(op_a, op_b, int(m), int(n), int(k), alpha, a.data(), int(sa[1]), b.data(), int(sb[1]), beta,
        c.data(), int(n));
}

Mat matmul(const Mat& a, const Mat& b, Op op_a, Op op_b, float alpha) {
  Mat c;
  gemm(c, a, b, op_a, op_b, alpha, 0.0f);
  return c;
}

void gemm_batched(Tensor3& c, const Tensor3& a, const Tensor3& b, Op op_a, Op op_b, float alpha, float beta) {
  // a: (H, ·, ·), b: (H, ·, ·) -> c: (H, M, N)
  const Shape sa = shape_of(a), sb = shape_of(b);
  if (sa[0] != sb[0]) shape_mismatch("gemm_batched", "a", sa, "b", sb, "have different batch sizes");
  const Shape a2{sa[1], sa[2]}, b2{sb[1], sb[2]};
  const std::size_t h = sa[0], m = op_rows(a2, op_a), k = op_cols(a2, op_a), n = op_cols(b2, op_b);
  if (op_rows(b2, op_b) != k) shape_mismatch("gemm_batched", "a", sa, "b", sb, "have different inner sizes");
  if (beta == 0.0f) {
    if (shape_of(c) != Shape{h, m, n}) c.resize({h, m, n});
  } else {
    expect_shape("gemm_batched", "c (beta != 0)", shape_of(c), {h, m, n});
  }
  if (k == 0) {
    c *= beta;
    return;
  }
  for (std::size_t i = 0; i < h; ++i) {
    sgemm(op_a, op_b, int(m), int(n), int(k), alpha, a.data() + i * sa[1] * sa[2], int(sa[2]),
          b.data() + i * sb[1] * sb[2], int(sb[2]), beta, c.data() + i * m * n, int(n));
  }
}

Tensor3 matmul_batched(const Tensor3& a, const Tensor3& b, Op op_a, Op op_b, float alpha) {
  Tensor3 c;
  gemm_batched(c, a, b, op_a, op_b, alpha, 0.0f);
  return c;
}

MatD gemm_reference(const Mat& a, const Mat& b, Op op_a, Op op_b) {
  const Shape sa = shape_of(a), sb = shape_of(b);
  const std::size_t m = op_rows(sa, op_a), k = op_cols(sa, op_a), n = op_cols(sb, op_b);
  if (op_rows(sb, op_b) != k) shape_mismatch("gemm_reference", "a", sa, "b", sb, "have different inner sizes");
  MatD c = xt::zeros<double>({m, n});
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (std::size_t p = 0; p < k; ++p) {
        double x = op_a == Op::N ? a(i, p) : a(p, i);
        double y = op_b == Op::N ? b(p, j) : b(j, p);
        acc += x * y;
      }
      c(i, j) = acc;
    }
  return c;
}

}  // namespace attn
