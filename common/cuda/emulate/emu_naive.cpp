// Emulated rung 1 (naive): the generated 01_naive.emu.cpp with cuBLAS's strided-batched SGEMM
// replaced by a float64 loop of the same column-major semantics and the softmax kernel launched
// on emulated threads. Its functions are renamed emu_* so they do not clash with libattn_cuda's.
#include "emu.hpp"
#include <cublas_v2.h>
// Column-major BLAS semantics: C(m×n) = alpha·op(A)(m×k)·op(B)(k×n) + beta·C, per batch.
inline cublasStatus_t emu_sgemm_strided_batched(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long sA, const float* B, int ldb, long long sB, const float* beta,
    float* C, int ldc, long long sC, int batch) {
  for (int b = 0; b < batch; ++b) {
    const float* a = A + b * sA; const float* bb = B + b * sB; float* c = C + b * sC;
    for (int i = 0; i < m; ++i) for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        double av = ta == CUBLAS_OP_N ? a[i + (long long)p * lda] : a[p + (long long)i * lda];
        double bv = tb == CUBLAS_OP_N ? bb[p + (long long)j * ldb] : bb[j + (long long)p * ldb];
        acc += av * bv;
      }
      c[i + (long long)j * ldc] = (float)(*alpha * acc + (*beta == 0 ? 0.0 : *beta * c[i + (long long)j * ldc]));
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}
#define attention_naive emu_attention_naive
#define attention_naive_workspace_floats emu_attention_naive_workspace_floats
#include "01_naive.emu.cpp"
