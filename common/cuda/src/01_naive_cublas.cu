// Rung 1 — naive attention: materialise every score.
//   S = scale·Q·Kᵀ   one cuBLAS strided-batched SGEMM over all BH heads
//   P = softmax(S+M) one block per row, in place, subtracting the row max first
//   O = P·V          a second strided-batched SGEMM
// It is correct and easy to read, but S costs BH·n_q·n_k floats of device memory and three
// round trips through it; rungs 2–3 exist to remove exactly that traffic.
#include <cmath>
#include <initializer_list>
#include <utility>

#include "attn/cuda/attention.hpp"
#include "launch_checks.hpp"

namespace attn::cuda {
namespace {

// 256 threads = 8 warps per row: enough to stream a row of n_k = 32768 floats with coalesced
// loads, small enough that a row of 7 does not waste a huge block.
constexpr int kSoftmaxThreads = 256;
constexpr int kWarps = kSoftmaxThreads / 32;
constexpr unsigned kFullWarp = 0xffffffffu;

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullWarp, v, offset));
  return v;
}
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

// Reduce over the block: each warp reduces with shuffles, then every thread combines the
// kWarps partial results from shared memory. The second barrier lets `scratch` be reused.
__device__ float block_max(float v, float* scratch) {
  v = warp_max(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = scratch[0];
  for (int w = 1; w < kWarps; ++w) r = fmaxf(r, scratch[w]);
  __syncthreads();
  return r;
}
__device__ float block_sum(float v, float* scratch) {
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float r = 0.0f;
  for (int w = 0; w < kWarps; ++w) r += scratch[w];
  __syncthreads();
  return r;
}

// scores: (BH·n_q rows, n_k), already scaled. One block per row; row = blockIdx.x.
// Query i = row mod n_q sees keys j < visible, visible = min(n_k, i + (n_k − n_q) + 1) when
// causal. Masked entries become exactly 0; a row with no visible key becomes all zeros.
__global__ void __launch_bounds__(kSoftmaxThreads)
softmax_rows_kernel(float* scores, int n_q, int n_k, bool causal) {
  __shared__ float scratch[kWarps];
  const long long row = blockIdx.x;
  const int i = static_cast<int>(row % n_q);
  float* s = scores + row * n_k;

  int visible = n_k;
  if (causal) visible = max(0, min(n_k, i + (n_k - n_q) + 1));

  // Subtract the row max before exp: exp(s − m) ≤ 1 never overflows, and the ratio is unchanged.
  float m = -INFINITY;
  for (int j = threadIdx.x; j < visible; j += kSoftmaxThreads) m = fmaxf(m, s[j]);
  m = block_max(m, scratch);

  float sum = 0.0f;
  for (int j = threadIdx.x; j < visible; j += kSoftmaxThreads) sum += expf(s[j] - m);
  sum = block_sum(sum, scratch);

  const float inv_sum = visible > 0 ? 1.0f / sum : 0.0f;
  for (int j = threadIdx.x; j < n_k; j += kSoftmaxThreads) s[j] = j < visible ? expf(s[j] - m) * inv_sum : 0.0f;
}

}  // namespace

std::size_t attention_naive_workspace_floats(int bh, int n_q, int n_k) {
  return static_cast<std::size_t>(bh) * static_cast<std::size_t>(n_q) * static_cast<std::size_t>(n_k);
}

void attention_naive(float* out, float* scores, const float* q, const float* k, const float* v, int bh, int n_q,
                     int n_k, int d, bool causal, float scale, cublasHandle_t cublas, cudaStream_t stream) {
  constexpr const char* fn = "attention_naive";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  for (auto [name, p] : {std::pair<const char*, const void*>{"out", out}, {"scores", scores}, {"q", q}, {"k", k}, {"v", v}})
    detail::require_device_pointer(fn, name, p);
  detail::require(cublas != nullptr, fn, "cublas handle is null");

  ATTN_CUBLAS_CHECK(cublasSetStream(cublas, stream));
  const long long stride_q = static_cast<long long>(n_q) * d;
  const long long stride_kv = static_cast<long long>(n_k) * d;
  const long long stride_s = static_cast<long long>(n_q) * n_k;

  // cuBLAS is column-major; a row-major (r × c) matrix is a column-major (c × r) one. So the
  // row-major S (n_q × n_k) = Q·Kᵀ is the column-major Sᶜ (n_k × n_q) = Kᶜᵀ·Qᶜ, where
  // Kᶜ (d × n_k, ld = d) and Qᶜ (d × n_q, ld = d) are K and Q read as stored.
  const float alpha_scores = scale;
  const float zero = 0.0f;
  ATTN_CUBLAS_CHECK(cublasSgemmStridedBatched(cublas, CUBLAS_OP_T, CUBLAS_OP_N, n_k, n_q, d, &alpha_scores, k, d,
                                              stride_kv, q, d, stride_q, &zero, scores, n_k, stride_s, bh));

  const long long rows = static_cast<long long>(bh) * n_q;
  detail::require(rows <= 0x7fffffffLL, fn, "bh·n_q must fit in gridDim.x (2^31 − 1)");
  softmax_rows_kernel<<<static_cast<unsigned>(rows), kSoftmaxThreads, 0, stream>>>(scores, n_q, n_k, causal);
  ATTN_CUDA_CHECK_LAUNCH("softmax_rows_kernel");

  // Row-major O (n_q × d) = P·V is column-major Oᶜ (d × n_q) = Vᶜ (d × n_k) · Pᶜ (n_k × n_q).
  const float one = 1.0f;
  ATTN_CUBLAS_CHECK(cublasSgemmStridedBatched(cublas, CUBLAS_OP_N, CUBLAS_OP_N, d, n_q, n_k, &one, v, d, stride_kv,
                                              scores, n_k, stride_s, &zero, out, d, stride_q, bh));
}

}  // namespace attn::cuda
