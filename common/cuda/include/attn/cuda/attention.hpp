// Attention on the GPU, as a ladder of six kernels (src/01_… to src/06_…), all on raw device
// pointers and sizes. Each rung computes the same thing as the CPU reference
//   O = softmax(Q·Kᵀ·scale + M) · V
// and the tests (tests/test_cuda_kernels.cpp) check every rung against float64 loops.
//
// Letters used throughout: BH = batch × heads (the heads are independent problems),
// n_q = queries per head, n_k = keys (and values) per head, d = head dimension.
//
// Layout contract, shared by every function below (row-major, contiguous, heads outermost):
//   q: (BH, n_q, d)   k: (BH, n_k, d)   v: (BH, n_k, d)   out: (BH, n_q, d)   lse: (BH, n_q)
// All pointers are device pointers, 16-byte aligned (cudaMalloc gives 256).
//
// Causal mask, bottom-right aligned like attn::causal_mask in the CPU core: query i may see key j
// when
//   j <= i + (n_k − n_q)
// i.e. the queries are the last n_q positions of the sequence (n_k == n_q gives the usual lower
// triangle; n_k > n_q is a KV cache). When n_q > n_k the first n_q − n_k rows see no key at all:
// such a fully masked row gives an output of zeros (never NaN) and lse = −∞. (attn::causal_mask
// refuses n_q > n_k with a ShapeError; the kernels accept it, and the tests check those rows.)
//
// Every launcher checks its sizes (throws std::invalid_argument naming the function and the
// values), checks every CUDA/cuBLAS call and cudaGetLastError() after every launch (throws
// std::runtime_error naming the call, file and line). Launches are asynchronous on `stream`.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "attn/cuda/check.hpp"

namespace attn::cuda {

// ---------------------------------------------------------------------------------------------
// 1. Naive: materialise the scores.  S = scale·Q·Kᵀ (cuBLAS), P = softmax(S + M) in place
//    (one block per row), O = P·V (cuBLAS). Memory O(BH·n_q·n_k): `scores` must hold
//    attention_naive_workspace_floats(bh, n_q, n_k) floats. Any d ≥ 1.
// ---------------------------------------------------------------------------------------------
std::size_t attention_naive_workspace_floats(int bh, int n_q, int n_k);

void attention_naive(float* out, float* scores, const float* q, const float* k, const float* v,
                     int bh, int n_q, int n_k, int d, bool causal, float scale,
                     cublasHandle_t cublas, cudaStream_t stream = nullptr);

// ---------------------------------------------------------------------------------------------
// 2. Flash-style fused forward in FP32: one pass over K/V tiles held in shared memory with an
//    online softmax, so the n_q × n_k scores never reach device memory. d ∈ {64, 128}.
//    lse (may be nullptr): per query row, log Σ_j exp(scale·q·k_j) over the visible keys — the
//    one number per row the backward needs to rebuild P without storing it.
// ---------------------------------------------------------------------------------------------
void attention_flash_fp32(float* out, float* lse, const float* q, const float* k, const float* v,
                          int bh, int n_q, int n_k, int d, bool causal, float scale,
                          cudaStream_t stream = nullptr);

// ---------------------------------------------------------------------------------------------
// 3. The same algorithm on tensor cores, FlashAttention-2's design: BF16 inputs and output,
//    FP32 accumulation and softmax, mma.sync m16n8k16; 128 query rows per block over 8 warps,
//    Q in registers, a 3-stage cp.async pipeline, the next tile's Q·Kᵀ issued before this
//    tile's softmax. d ∈ {64, 128}; scale > 0. lse (may be nullptr) as in rung 2, in FP32:
//    rung 6 (the BF16 backward) needs it.
// ---------------------------------------------------------------------------------------------
void attention_flash_bf16(__nv_bfloat16* out, float* lse, const __nv_bfloat16* q, const __nv_bfloat16* k,
                          const __nv_bfloat16* v, int bh, int n_q, int n_k, int d, bool causal, float scale,
                          cudaStream_t stream = nullptr);

// ---------------------------------------------------------------------------------------------
// 4. Backward of rung 2. Given dout = ∂L/∂O and the forward's out and lse, ACCUMULATES
//    (+=, like every gradient in this project; zero them first for a fresh gradient)
//      dq: (BH, n_q, d)   dk: (BH, n_k, d)   dv: (BH, n_k, d)
//    P is recomputed from lse, never stored. `delta` is a workspace of BH·n_q floats
//    (it receives D_i = Σ_c dout[i][c]·out[i][c]). d ∈ {64, 128}.
// ---------------------------------------------------------------------------------------------
void attention_flash_fp32_backward(float* dq, float* dk, float* dv, float* delta, const float* dout,
                                   const float* q, const float* k, const float* v, const float* out,
                                   const float* lse, int bh, int n_q, int n_k, int d, bool causal,
                                   float scale, cudaStream_t stream = nullptr);

// ---------------------------------------------------------------------------------------------
// 5. Hopper only (sm_90a): rung 3's forward the FlashAttention-3 way — TMA copies into swizzled
//    shared memory, wgmma for both products, a producer warpgroup and two consumer warpgroups
//    handing over through mbarriers, the consumers ping-ponging. Same contract as rung 3.
//    Untested on hardware so far (src/05_flash_hopper_wgmma.cu says what that means).
//    attention_flash_hopper_unavailable() returns "" when this device and this build can run
//    it, else the reason (not a Hopper GPU; built without sm_90a code); the launcher throws
//    std::runtime_error with that reason.
// ---------------------------------------------------------------------------------------------
std::string attention_flash_hopper_unavailable();

void attention_flash_hopper(__nv_bfloat16* out, float* lse, const __nv_bfloat16* q, const __nv_bfloat16* k,
                            const __nv_bfloat16* v, int bh, int n_q, int n_k, int d, bool causal, float scale,
                            cudaStream_t stream = nullptr);

// ---------------------------------------------------------------------------------------------
// 6. Backward of rung 3 (FlashAttention-2's backward on tensor cores): BF16 dout, q, k, v, out and
//    the forward's FP32 lse in; FP32 gradients ACCUMULATED (+=) into dq, dk, dv, with the shapes
//    of rung 4. Blocks own 64 keys and walk the queries; dK and dV stay in registers; dQ is
//    reduced across the key blocks with FP32 atomic adds straight into dq, so its last bits
//    depend on the order the blocks finish (dK, dV and the forward are deterministic).
//    `delta`: BH·n_q floats of workspace (D_i = Σ_c dout[i][c]·out[i][c]). d ∈ {64, 128}; scale > 0.
// ---------------------------------------------------------------------------------------------
void attention_flash_bf16_backward(float* dq, float* dk, float* dv, float* delta, const __nv_bfloat16* dout,
                                   const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* out, const float* lse, int bh, int n_q, int n_k, int d,
                                   bool causal, float scale, cudaStream_t stream = nullptr);

}  // namespace attn::cuda
