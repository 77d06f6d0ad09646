// The tensor-core building blocks shared by rung 3 (03_flash_bf16_mma.cu) and the BF16 backward
// (06_flash_bf16_backward.cu): thin wrappers over the PTX instructions cp.async, ldmatrix and
// mma.sync.m16n8k16 (PTX ISA, "Warp-level matrix instructions"), the bf16 packing of an
// accumulator into an A fragment, and the cooperative cp.async load of a tile of rows.
//
// Fragment layouts (per warp; g = lane / 4 "groupID", t = lane % 4 "threadID_in_group"; two bf16
// per 32-bit register, the lower column in the low half):
//   A (16×16, row-major):  a[0] = A[g][2t..2t+1]   a[1] = A[g+8][2t..]   a[2] = A[g][2t+8..]
//                          a[3] = A[g+8][2t+8..]
//   B (16×8, "col"):       b0 = B[2t..2t+1][g]     b1 = B[2t+8..2t+9][g]
//   C (16×8, FP32):        c[0], c[1] = C[g][2t], C[g][2t+1]     c[2], c[3] = C[g+8][2t], C[g+8][2t+1]
// The C layout of two neighbouring 8-column tiles is the A layout of one 16-wide k-step, which
// is why a product's result can feed the next product from registers (P in P·V, dSᵀ in dSᵀ·Q).
//
// Shared-memory tiles are rows of D bf16 padded by 8 (16 bytes): ldmatrix reads 8 rows of 16
// bytes per phase, and with a row stride of 2·D + 16 bytes those 8 rows start 4 banks apart and
// cover all 32 banks, so neither ldmatrix nor the 16-byte cp.async stores conflict.
//
// The host emulator (common/cuda/emulate) replaces the section between the two markers below
// with its own versions of these instructions; everything after the second marker runs as is.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

namespace attn::cuda::mma {

using bf16 = __nv_bfloat16;

// ---- thin wrappers over the PTX instructions (begin) ----

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy global → shared. src_bytes = 0 copies nothing and zero-fills the 16
// bytes: that is how rows past the end of the sequence become zeros.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// Closes the current group of this thread's copies (an empty group is legal: the pipelines
// commit one per step even when there is nothing left to load, so the wait counts stay constant).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8×8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i. Afterwards lane
// (g, t) holds, in r[i], elements [g][2t] and [g][2t+1] of matrix i (.trans: [2t][g], [2t+1][g]).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address)
               : "memory");
}

// c (16×8, FP32) += a (16×16, BF16) · b (16×8, BF16), layouts as in the table at the top.
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                  std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- thin wrappers over the PTX instructions (end) ----

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low 16 bits) = lo
  std::uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

// The A fragment of k-step j from the FP32 accumulators of n-tiles 2j and 2j + 1 (see the top).
__device__ __forceinline__ void accumulators_to_a(std::uint32_t (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
  a[0] = pack_bf16x2(c0[0], c0[1]);
  a[1] = pack_bf16x2(c0[2], c0[3]);
  a[2] = pack_bf16x2(c1[0], c1[1]);
  a[3] = pack_bf16x2(c1[2], c1[3]);
}

// Issue the cp.async copies of a ROWS × D bf16 tile from global memory (row stride D) into shared
// memory (row stride D + 8), THREADS threads sharing the 16-byte chunks; rows ≥ rows_valid are
// zero-filled. The caller commits the group.
template <int D, int ROWS, int THREADS>
__device__ __forceinline__ void load_rows_async(bf16* dst, const bf16* __restrict__ src, int rows_valid) {
  constexpr int kChunksPerRow = D / 8;
  for (int idx = threadIdx.x; idx < ROWS * kChunksPerRow; idx += THREADS) {
    const int r = idx / kChunksPerRow;
    const int c = idx % kChunksPerRow;
    const bool valid = r < rows_valid;
    // An invalid row still needs a legal address; it is never read (src_bytes = 0).
    const bf16* from = valid ? src + static_cast<long long>(r) * D + 8 * c : src;
    cp_async_16(smem_address(dst + r * (D + 8) + 8 * c), from, valid);
  }
}

// A fragments of a warp's 16 rows (row0 … row0 + 15) of a row-major shared tile with row stride
// `stride`, for the 16-wide k-step at column col0. Matrices 0–3 of the ldmatrix are (rows 0–7,
// cols 0–7), (rows 8–15, cols 0–7), (rows 0–7, cols 8–15), (rows 8–15, cols 8–15): lane gives
// row lane % 16 and column 8·(lane / 16).
__device__ __forceinline__ void load_a_rows(std::uint32_t (&a)[4], const bf16* tile, int stride, int row0, int col0,
                                            int lane) {
  ldmatrix_x4(a, smem_address(tile + (row0 + lane % 16) * stride + col0 + (lane / 16) * 8));
}

// A fragments of the 16 × 16 block A[m][k] = T[k0 + k][m0 + m] of a tile stored transposed
// (dS read out of a stored dSᵀ): ldmatrix .trans of T's rows k0 … k0 + 15. Matrices: (rows +0–7,
// cols +0–7), (rows +0–7, cols +8–15), (rows +8–15, cols +0–7), (rows +8–15, cols +8–15), which
// transposed are A's (m 0–7, k 0–7), (m 8–15, k 0–7), (m 0–7, k 8–15), (m 8–15, k 8–15).
__device__ __forceinline__ void load_a_cols(std::uint32_t (&a)[4], const bf16* tile, int stride, int k0, int m0,
                                            int lane) {
  ldmatrix_x4_trans(a, smem_address(tile + (k0 + lane % 8 + 8 * (lane / 16)) * stride + m0 + 8 * ((lane / 8) % 2)));
}

// B fragments of two 8-wide n-tiles for B[k][n] = T[n0 + n][k0 + k] (the tile read as its own
// transpose: Kᵀ in Q·Kᵀ): a plain ldmatrix of T's rows n0 … n0 + 15. Matrices: (rows +0–7,
// cols +0–7), (rows +0–7, cols +8–15), (rows +8–15, cols +0–7), (rows +8–15, cols +8–15):
// b[0], b[1] feed n-tile n0 / 8, b[2], b[3] n-tile n0 / 8 + 1.
__device__ __forceinline__ void load_b_rows(std::uint32_t (&b)[4], const bf16* tile, int stride, int n0, int k0,
                                            int lane) {
  ldmatrix_x4(b, smem_address(tile + (n0 + lane % 8 + 8 * (lane / 16)) * stride + k0 + 8 * ((lane / 8) % 2)));
}

// B fragments of two 8-wide n-tiles for B[k][n] = T[k0 + k][n0 + n] (the tile as it is stored:
// V in P·V), which needs two consecutive *rows* per register: ldmatrix .trans. Matrices:
// (rows +0–7, cols +0–7), (rows +8–15, cols +0–7), (rows +0–7, cols +8–15), (rows +8–15,
// cols +8–15): b[0], b[1] feed n-tile n0 / 8, b[2], b[3] n-tile n0 / 8 + 1.
__device__ __forceinline__ void load_b_cols(std::uint32_t (&b)[4], const bf16* tile, int stride, int k0, int n0,
                                            int lane) {
  ldmatrix_x4_trans(b, smem_address(tile + (k0 + lane % 8 + 8 * ((lane / 8) % 2)) * stride + n0 + 8 * (lane / 16)));
}

}  // namespace attn::cuda::mma
