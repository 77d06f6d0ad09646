// Register-tiled building blocks shared by the FP32 forward (02) and backward (04) kernels.
//
// A block of 256 threads works on 64 × 64 tiles. Thread (ty, tx) = (tid / 16, tid % 16) owns
//   rows      ty·4 + i          i < 4   (4 consecutive rows of the tile)
//   columns   tx + 16·j         j < 4   of a 64-wide score tile (strided: conflict-free reads)
//   columns   64·g + 4·tx + c   c < 4   of a d-wide output tile (a float4 per 64 columns)
// so each thread computes 16 scores and 4·(d/16) outputs, and every value it loads from shared
// memory is used 4 times: that reuse is what lifts the kernel from memory- to FMA-bound.
//
// Shared-memory tiles of d-wide rows use a row stride of d + 4 floats. Without the padding the
// 16 rows tx + 16·j that a warp reads at one k would all start in bank 0 (d is a multiple of 32
// banks); with 4 floats (16 bytes) of padding, row r starts at bank 4r mod 32, so the 8 threads
// of each quarter-warp's float4 load hit 8 different 16-byte bank groups.
#pragma once

namespace attn::cuda::tile {

constexpr int kTile = 64;                // Br = Bc = 64 rows per query tile and per key tile
constexpr int kThreads = 256;            // 16 × 16 threads, each 4 × 4 of a 64 × 64 tile
constexpr int kScoreStride = kTile + 4;  // 64-wide score tile rows, padded like the d-wide ones

template <int D>
struct Dims {
  static constexpr int kStride = D + 4;     // padded row stride (floats) of a d-wide tile
  static constexpr int kGroups = D / 64;    // float4 groups per thread per output row
  static constexpr int kOut = 4 * kGroups;  // output columns per thread per row (d/16)
  static constexpr int kTileFloats = kTile * kStride;
};

// Copy rows [0, 64) of a d-wide tile from global (row-major, stride D) into shared memory
// (stride D + 4). Rows ≥ rows_valid are written as zeros, so a partial last tile behaves like a
// tile of zero vectors (the kernels mask those positions anyway; zeros keep 0·x from being NaN).
template <int D>
__device__ __forceinline__ void load_tile(float* dst, const float* __restrict__ src, int rows_valid) {
  constexpr int kVecPerRow = D / 4;
  for (int idx = threadIdx.x; idx < kTile * kVecPerRow; idx += kThreads) {
    const int r = idx / kVecPerRow;
    const int c4 = idx % kVecPerRow;
    float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows_valid) value = *reinterpret_cast<const float4*>(src + static_cast<long long>(r) * D + 4 * c4);
    *reinterpret_cast<float4*>(dst + r * Dims<D>::kStride + 4 * c4) = value;
  }
}

// acc[i][j] = Σ_k a[ty·4+i][k] · b[tx+16·j][k]     a, b: 64 × D tiles in shared memory.
// "A times B transposed" on two row-major tiles: Q·Kᵀ in the forward, K·Qᵀ, V·dOᵀ … in the
// backward. k advances 4 at a time so that every load is a float4.
template <int D>
__device__ __forceinline__ void dot_rows(float (&acc)[4][4], const float* a, const float* b, int ty, int tx) {
  constexpr int S = Dims<D>::kStride;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
#pragma unroll 4
  for (int k = 0; k < D; k += 4) {
    float4 av[4], bv[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) av[i] = *reinterpret_cast<const float4*>(a + (ty * 4 + i) * S + k);
#pragma unroll
    for (int j = 0; j < 4; ++j) bv[j] = *reinterpret_cast<const float4*>(b + (tx + 16 * j) * S + k);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        acc[i][j] = fmaf(av[i].x, bv[j].x, acc[i][j]);
        acc[i][j] = fmaf(av[i].y, bv[j].y, acc[i][j]);
        acc[i][j] = fmaf(av[i].z, bv[j].z, acc[i][j]);
        acc[i][j] = fmaf(av[i].w, bv[j].w, acc[i][j]);
      }
  }
}

// Store the 16 score-tile values this thread owns into a 64 × 64 shared tile (stride 68).
__device__ __forceinline__ void store_scores(float* dst, const float (&vals)[4][4], int ty, int tx) {
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) dst[(ty * 4 + i) * kScoreStride + tx + 16 * j] = vals[i][j];
}

// acc[i][4g+c] += Σ_k p[ty·4+i][k] · b[k][64g + 4tx + c]
//   p: 64 × 64 score tile (stride 68), b: 64 × D tile (stride D + 4), k over the 64 keys.
// "Scores times values": P·V in the forward, Pᵀ·dO, dSᵀ·Q, dS·K in the backward.
template <int D>
__device__ __forceinline__ void accumulate_pv(float (&acc)[4][Dims<D>::kOut], const float* p, const float* b, int ty,
                                              int tx) {
  constexpr int S = Dims<D>::kStride;
#pragma unroll 2
  for (int k = 0; k < kTile; k += 4) {
    float pv[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float4 row = *reinterpret_cast<const float4*>(p + (ty * 4 + i) * kScoreStride + k);
      pv[i][0] = row.x;
      pv[i][1] = row.y;
      pv[i][2] = row.z;
      pv[i][3] = row.w;
    }
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int g = 0; g < Dims<D>::kGroups; ++g) {
        const float4 bv = *reinterpret_cast<const float4*>(b + (k + kk) * S + 64 * g + 4 * tx);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          acc[i][4 * g + 0] = fmaf(pv[i][kk], bv.x, acc[i][4 * g + 0]);
          acc[i][4 * g + 1] = fmaf(pv[i][kk], bv.y, acc[i][4 * g + 1]);
          acc[i][4 * g + 2] = fmaf(pv[i][kk], bv.z, acc[i][4 * g + 2]);
          acc[i][4 * g + 3] = fmaf(pv[i][kk], bv.w, acc[i][4 * g + 3]);
        }
      }
  }
}

// Reductions across the 16 threads that share a row (same ty, tx = 0..15). They are 16
// consecutive lanes of one warp (lanes 0–15 or 16–31), and xor-offsets below 16 never leave them.
__device__ __forceinline__ float row_max16(float v) {
#pragma unroll
  for (int offset = 8; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ __forceinline__ float row_sum16(float v) {
#pragma unroll
  for (int offset = 8; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace attn::cuda::tile
