// Rung 2 — flash-style fused attention forward in FP32 (Dao et al. 2022, FlashAttention).
// One block owns 64 query rows and walks the keys in tiles of 64: S = Q·Kᵀ for the tile, an
// *online softmax* (running max m, running sum ℓ, rescale what was accumulated so far by
// exp(m_old − m_new)), then O += P·V — one pass, the n_q × n_k scores never leave the chip.
// The arithmetic is plain FFMA; tile_fp32.cuh explains the 4 × 4 register tiling that feeds it.
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "attn/cuda/attention.hpp"
#include "launch_checks.hpp"
#include "tile_fp32.cuh"

namespace attn::cuda {
namespace {

using tile::kThreads;
using tile::kTile;

// Shape contract (per head; the head is blockIdx.y):
//   q: (n_q, D), k: (n_k, D), v: (n_k, D) -> out: (n_q, D), lse: (n_q) or nullptr
// Grid: (⌈n_q / 64⌉, BH), 256 threads. scale_log2 = scale · log2 e, so exp(scale·s) = exp2(s·scale_log2).
// Shared memory: Q, K, V tiles (64 × (D+4) floats each) + the P tile (64 × 68) — 68 KB at D = 64,
// 116 KB at D = 128. __launch_bounds__(256, 2): the compiler keeps ≤ 128 registers per thread so
// that two blocks (16 warps) fit on one multiprocessor.
template <int D>
__global__ void __launch_bounds__(kThreads, 2)
flash_fp32_forward_kernel(float* __restrict__ out, float* __restrict__ lse, const float* __restrict__ q,
                          const float* __restrict__ k, const float* __restrict__ v, int n_q, int n_k, bool causal,
                          float scale_log2) {
  using Dm = tile::Dims<D>;
  extern __shared__ float4 smem_f4[];  // declared as float4 so the base is 16-byte aligned
  float* q_s = reinterpret_cast<float*>(smem_f4);
  float* k_s = q_s + Dm::kTileFloats;
  float* v_s = k_s + Dm::kTileFloats;
  float* p_s = v_s + Dm::kTileFloats;

  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int head = blockIdx.y;
  // Launch the last query tile first: with a causal mask it has the most key tiles, and starting
  // the longest blocks first evens out the tail of the grid.
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kTile;
  const int causal_offset = n_k - n_q;  // query i sees key j iff j <= i + causal_offset

  q += static_cast<long long>(head) * n_q * D;
  k += static_cast<long long>(head) * n_k * D;
  v += static_cast<long long>(head) * n_k * D;
  out += static_cast<long long>(head) * n_q * D;

  tile::load_tile<D>(q_s, q + static_cast<long long>(q0) * D, min(kTile, n_q - q0));

  float o[4][Dm::kOut];  // unnormalised output rows ty·4+i, columns 64g + 4tx + c
  float m[4];            // running max of the row's logits, in log2 units
  float l[4];            // running Σ exp2(logit − m) of the row
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.0f;
#pragma unroll
    for (int c = 0; c < Dm::kOut; ++c) o[i][c] = 0.0f;
  }

  // Keys past kv_end are masked for every row of this tile, so their tiles are skipped.
  const int kv_end = causal ? min(n_k, q0 + kTile + causal_offset) : n_k;
  for (int kv0 = 0; kv0 < kv_end; kv0 += kTile) {
    __syncthreads();  // everyone is done with the previous K, V and P tiles
    tile::load_tile<D>(k_s, k + static_cast<long long>(kv0) * D, min(kTile, n_k - kv0));
    tile::load_tile<D>(v_s, v + static_cast<long long>(kv0) * D, min(kTile, n_k - kv0));
    __syncthreads();

    float s[4][4];
    tile::dot_rows<D>(s, q_s, k_s, ty, tx);  // s[i][j] = q[q0+ty·4+i] · k[kv0+tx+16j]

    // Only the last key tile and tiles that cross the causal diagonal need the mask.
    const bool needs_mask = (kv0 + kTile > n_k) || (causal && kv0 + kTile - 1 > q0 + causal_offset);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float x = s[i][j] * scale_log2;
        if (needs_mask) {
          const int row = q0 + ty * 4 + i;
          const int col = kv0 + tx + 16 * j;
          if (col >= n_k || (causal && col > row + causal_offset)) x = -INFINITY;
        }
        s[i][j] = x;
      }

    // Online softmax, row by row (online_softmax_tile in the CPU chapter 06):
    //   m_new = max(m, max_j s_j);  α = exp2(m − m_new);  ℓ = α·ℓ + Σ_j exp2(s_j − m_new);  O = α·O
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float tile_max = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));
      tile_max = tile::row_max16(tile_max);
      const float m_new = fmaxf(m[i], tile_max);
      // A row that has seen only masked keys has m_new = −∞; subtracting 0 instead keeps
      // exp2(−∞ − (−∞)) = NaN out: every p is exp2(−∞) = 0 and α = 0.
      const float base = m_new == -INFINITY ? 0.0f : m_new;
      const float alpha = exp2f(m[i] - base);
      float tile_sum = 0.0f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[i][j] = exp2f(s[i][j] - base);
        tile_sum += s[i][j];
      }
      tile_sum = tile::row_sum16(tile_sum);
      l[i] = l[i] * alpha + tile_sum;
      m[i] = m_new;
#pragma unroll
      for (int c = 0; c < Dm::kOut; ++c) o[i][c] *= alpha;
    }

    tile::store_scores(p_s, s, ty, tx);
    __syncthreads();  // the whole P tile is written before anyone multiplies by it
    tile::accumulate_pv<D>(o, p_s, v_s, ty, tx);  // O[rows] += P·V
  }

  // O = O / ℓ. A fully masked row has ℓ = 0: write zeros and lse = −∞.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = q0 + ty * 4 + i;
    if (row >= n_q) continue;
    const float inv_l = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
#pragma unroll
    for (int g = 0; g < Dm::kGroups; ++g) {
      const float4 value = make_float4(o[i][4 * g] * inv_l, o[i][4 * g + 1] * inv_l, o[i][4 * g + 2] * inv_l,
                                       o[i][4 * g + 3] * inv_l);
      *reinterpret_cast<float4*>(out + static_cast<long long>(row) * D + 64 * g + 4 * tx) = value;
    }
    // lse = ln Σ_j exp(scale·s_j) = (m + log2 ℓ) / log2 e, since m and ℓ live in base 2.
    if (lse != nullptr && tx == 0)
      lse[static_cast<long long>(head) * n_q + row] = l[i] > 0.0f ? (m[i] + log2f(l[i])) / detail::kLog2e : -INFINITY;
  }
}

template <int D>
void launch_flash_fp32_forward(float* out, float* lse, const float* q, const float* k, const float* v, int bh,
                               int n_q, int n_k, bool causal, float scale, cudaStream_t stream) {
  using Dm = tile::Dims<D>;
  constexpr int kSmemBytes = (3 * Dm::kTileFloats + kTile * tile::kScoreStride) * static_cast<int>(sizeof(float));
  // Above 48 KB a block's dynamic shared memory must be allowed explicitly.
  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_fp32_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       kSmemBytes));
  const dim3 grid(detail::ceil_div(n_q, kTile), bh);
  flash_fp32_forward_kernel<D><<<grid, kThreads, kSmemBytes, stream>>>(out, lse, q, k, v, n_q, n_k, causal,
                                                                        scale * detail::kLog2e);
  ATTN_CUDA_CHECK_LAUNCH("flash_fp32_forward_kernel");
}

}  // namespace

void attention_flash_fp32(float* out, float* lse, const float* q, const float* k, const float* v, int bh, int n_q,
                          int n_k, int d, bool causal, float scale, cudaStream_t stream) {
  constexpr const char* fn = "attention_flash_fp32";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  detail::require_tiled_d(fn, d);
  for (auto [name, p] : {std::pair<const char*, const void*>{"out", out}, {"q", q}, {"k", k}, {"v", v}})
    detail::require_device_pointer(fn, name, p);
  if (d == 64)
    launch_flash_fp32_forward<64>(out, lse, q, k, v, bh, n_q, n_k, causal, scale, stream);
  else
    launch_flash_fp32_forward<128>(out, lse, q, k, v, bh, n_q, n_k, causal, scale, stream);
}

}  // namespace attn::cuda
