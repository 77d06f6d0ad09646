// The BLAS layer: matrix products through OpenBLAS, with transpose flags instead of copies.
//   C = alpha · op(A) · op(B) + beta · C,   op(X) = X or Xᵀ
// gemm works on whole matrices, gemm_batched on a stack of them (one per head), and sgemm on
// raw row-major pointers for kernels that tile their own memory. gemm_reference is the plain
// triple loop in double that every fast path is tested against.
#pragma once

#include "attn/tensor/tensor.hpp"

namespace attn {

enum class Op { N, T };  // op(X) = X (N) or Xᵀ (T)

// c: (M, N) <- alpha · op(a) · op(b) + beta · c, with op(a): (M, K), op(b): (K, N).
// With beta = 0, c is resized as needed; otherwise its shape must already be (M, N).
void gemm(Mat& c, const Mat& a, const Mat& b, Op op_a = Op::N, Op op_b = Op::N, float alpha = 1.0f,
          float beta = 0.0f);

// Allocating form: returns alpha · op(a) · op(b).
Mat matmul(const Mat& a, const Mat& b, Op op_a = Op::N, Op op_b = Op::N, float alpha = 1.0f);

// One gemm per leading index: c[h] <- alpha · op(a[h]) · op(b[h]) + beta · c[h].
// a: (H, ·, ·), b: (H, ·, ·) -> c: (H, M, N). Each slice goes to BLAS without a copy.
void gemm_batched(Tensor3& c, const Tensor3& a, const Tensor3& b, Op op_a = Op::N, Op op_b = Op::N,
                  float alpha = 1.0f, float beta = 0.0f);
Tensor3 matmul_batched(const Tensor3& a, const Tensor3& b, Op op_a = Op::N, Op op_b = Op::N,
                       float alpha = 1.0f);

// Raw row-major sgemm (cblas_sgemm with CblasRowMajor): for kernels working on tiles.
void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
           int ldb, float beta, float* c, int ldc);

// Naive reference: op(a) · op(b) accumulated in double, three plain loops.
MatD gemm_reference(const Mat& a, const Mat& b, Op op_a = Op::N, Op op_b = Op::N);

}  // namespace attn
