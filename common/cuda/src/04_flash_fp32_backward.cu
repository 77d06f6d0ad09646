// Rung 4 — the backward pass of rung 2 (FlashAttention-2, Dao 2023, Algorithm 2), in FP32.
// The forward kept one number per query row, lse = log Σ_j exp(s_j); from it any P_ij can be
// rebuilt as exp(s_ij − lse_i), so the n_q × n_k attention matrix is recomputed tile by tile
// instead of stored. Three kernels: D_i = dO_i·O_i; then dK, dV (each block owns 64 keys and
// walks the queries); then dQ (each block owns 64 queries and walks the keys) — two passes that
// recompute S instead of fighting over dQ with atomics, so the result is deterministic.
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

// In the forward pass this was (per row i, with s_ij = scale·q_i·k_j):
//   P_ij = exp(s_ij − lse_i),   O_i = Σ_j P_ij v_j
// so now we have:
//   dV_j  = Σ_i P_ij dO_i                          (dV = Pᵀ·dO)
//   dP_ij = dO_i · v_j                             (dP = dO·Vᵀ)
//   dS_ij = P_ij (dP_ij − D_i),  D_i = Σ_j P_ij dP_ij = dO_i · O_i   (softmax backward)
//   dQ_i  = scale Σ_j dS_ij k_j                    (dQ = scale·dS·K)
//   dK_j  = scale Σ_i dS_ij q_i                    (dK = scale·dSᵀ·Q)

// delta: (BH·n_q) ← D_i = Σ_c dO[i][c]·O[i][c]. One warp per row, 8 rows per block.
__global__ void __launch_bounds__(256)
attention_backward_delta_kernel(float* __restrict__ delta, const float* __restrict__ dout,
                                const float* __restrict__ out, long long rows, int d) {
  const long long row = static_cast<long long>(blockIdx.x) * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // a whole warp leaves together, so the shuffles below stay full
  float sum = 0.0f;
  for (int c = lane; c < d; c += 32) sum += dout[row * d + c] * out[row * d + c];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) delta[row] = sum;
}

// dK, dV for one tile of 64 keys (kv0 = blockIdx.x·64) of head blockIdx.y:
//   q, dout: (n_q, D)  k, v: (n_k, D)  lse, delta: (n_q)  ->  dk, dv: (n_k, D), accumulated (+=)
// The thread layout of tile_fp32.cuh with the roles of rows and columns swapped: a thread owns
// key rows ty·4+i and query columns tx+16j of the transposed tiles Sᵀ, Pᵀ, dPᵀ, dSᵀ.
// Shared memory: K, V, Q, dO (64 × (D+4) each) + Pᵀ, dSᵀ (64 × 68 each) + lse, D of 64 queries:
// 104 KB at D = 64, 168 KB at D = 128.
template <int D>
__global__ void __launch_bounds__(kThreads, 1)
flash_fp32_backward_dkdv_kernel(float* __restrict__ dk, float* __restrict__ dv, const float* __restrict__ dout,
                                const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                const float* __restrict__ lse, const float* __restrict__ delta, int n_q, int n_k,
                                bool causal, float scale) {
  using Dm = tile::Dims<D>;
  extern __shared__ float4 smem_f4[];
  float* k_s = reinterpret_cast<float*>(smem_f4);
  float* v_s = k_s + Dm::kTileFloats;
  float* q_s = v_s + Dm::kTileFloats;
  float* do_s = q_s + Dm::kTileFloats;
  float* pt_s = do_s + Dm::kTileFloats;             // Pᵀ tile: keys × queries
  float* dst_s = pt_s + kTile * tile::kScoreStride;  // dSᵀ tile
  float* lse2_s = dst_s + kTile * tile::kScoreStride;  // lse · log2 e of the 64 queries
  float* delta_s = lse2_s + kTile;

  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int head = blockIdx.y;
  const int kv0 = blockIdx.x * kTile;
  const int causal_offset = n_k - n_q;
  const float scale_log2 = scale * detail::kLog2e;

  const long long q_base = static_cast<long long>(head) * n_q;
  const long long kv_base = static_cast<long long>(head) * n_k;
  q += q_base * D;
  dout += q_base * D;
  lse += q_base;
  delta += q_base;
  k += kv_base * D;
  v += kv_base * D;
  dk += kv_base * D;
  dv += kv_base * D;

  const int keys_valid = min(kTile, n_k - kv0);
  tile::load_tile<D>(k_s, k + static_cast<long long>(kv0) * D, keys_valid);
  tile::load_tile<D>(v_s, v + static_cast<long long>(kv0) * D, keys_valid);

  float dk_acc[4][Dm::kOut];
  float dv_acc[4][Dm::kOut];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int c = 0; c < Dm::kOut; ++c) {
      dk_acc[i][c] = 0.0f;
      dv_acc[i][c] = 0.0f;
    }

  // With a causal mask, query i sees key kv0 only if i >= kv0 − causal_offset: start there.
  int q_start = 0;
  if (causal) q_start = max(0, kv0 - causal_offset) / kTile * kTile;
  for (int q0 = q_start; q0 < n_q; q0 += kTile) {
    __syncthreads();  // previous Q, dO, Pᵀ, dSᵀ tiles are no longer read
    tile::load_tile<D>(q_s, q + static_cast<long long>(q0) * D, min(kTile, n_q - q0));
    tile::load_tile<D>(do_s, dout + static_cast<long long>(q0) * D, min(kTile, n_q - q0));
    if (threadIdx.x < kTile) {
      const int row = q0 + threadIdx.x;
      // Rows past n_q are masked below; 0 keeps their arithmetic finite.
      lse2_s[threadIdx.x] = row < n_q ? lse[row] * detail::kLog2e : 0.0f;
      delta_s[threadIdx.x] = row < n_q ? delta[row] : 0.0f;
    }
    __syncthreads();

    float st[4][4], dpt[4][4];
    tile::dot_rows<D>(st, k_s, q_s, ty, tx);    // Sᵀ[key][query] = k·q (unscaled)
    tile::dot_rows<D>(dpt, v_s, do_s, ty, tx);  // dPᵀ[key][query] = v·dO
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int key = kv0 + ty * 4 + i;
        const int query = q0 + tx + 16 * j;
        // A fully masked query row has lse = −∞, but then every key fails this test, so the
        // −∞ is never used.
        const bool visible = key < n_k && query < n_q && (!causal || key <= query + causal_offset);
        const float p = visible ? exp2f(st[i][j] * scale_log2 - lse2_s[tx + 16 * j]) : 0.0f;
        st[i][j] = p;
        dpt[i][j] = p * (dpt[i][j] - delta_s[tx + 16 * j]);  // dSᵀ
      }
    tile::store_scores(pt_s, st, ty, tx);
    tile::store_scores(dst_s, dpt, ty, tx);
    __syncthreads();
    tile::accumulate_pv<D>(dv_acc, pt_s, do_s, ty, tx);  // dV += Pᵀ · dO
    tile::accumulate_pv<D>(dk_acc, dst_s, q_s, ty, tx);  // dK += dSᵀ · Q   (× scale at the end)
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int key = kv0 + ty * 4 + i;
    if (key >= n_k) continue;
#pragma unroll
    for (int g = 0; g < Dm::kGroups; ++g) {
      float4* dk4 = reinterpret_cast<float4*>(dk + static_cast<long long>(key) * D + 64 * g + 4 * tx);
      float4* dv4 = reinterpret_cast<float4*>(dv + static_cast<long long>(key) * D + 64 * g + 4 * tx);
      float4 a = *dk4;
      a.x += scale * dk_acc[i][4 * g];
      a.y += scale * dk_acc[i][4 * g + 1];
      a.z += scale * dk_acc[i][4 * g + 2];
      a.w += scale * dk_acc[i][4 * g + 3];
      *dk4 = a;
      float4 b = *dv4;
      b.x += dv_acc[i][4 * g];
      b.y += dv_acc[i][4 * g + 1];
      b.z += dv_acc[i][4 * g + 2];
      b.w += dv_acc[i][4 * g + 3];
      *dv4 = b;
    }
  }
}

// dQ for one tile of 64 queries (q0 = blockIdx.x·64) of head blockIdx.y:
//   q, dout: (n_q, D)  k, v: (n_k, D)  lse, delta: (n_q)  ->  dq: (n_q, D), accumulated (+=)
// The forward's layout: a thread owns query rows ty·4+i and key columns tx+16j.
// Shared memory: Q, dO, K, V (64 × (D+4) each) + the dS tile (64 × 68): 86 KB / 150 KB.
template <int D>
__global__ void __launch_bounds__(kThreads, 1)
flash_fp32_backward_dq_kernel(float* __restrict__ dq, const float* __restrict__ dout, const float* __restrict__ q,
                              const float* __restrict__ k, const float* __restrict__ v, const float* __restrict__ lse,
                              const float* __restrict__ delta, int n_q, int n_k, bool causal, float scale) {
  using Dm = tile::Dims<D>;
  extern __shared__ float4 smem_f4[];
  float* q_s = reinterpret_cast<float*>(smem_f4);
  float* do_s = q_s + Dm::kTileFloats;
  float* k_s = do_s + Dm::kTileFloats;
  float* v_s = k_s + Dm::kTileFloats;
  float* ds_s = v_s + Dm::kTileFloats;

  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int head = blockIdx.y;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kTile;  // longest causal blocks first
  const int causal_offset = n_k - n_q;
  const float scale_log2 = scale * detail::kLog2e;

  const long long q_base = static_cast<long long>(head) * n_q;
  const long long kv_base = static_cast<long long>(head) * n_k;
  q += q_base * D;
  dout += q_base * D;
  dq += q_base * D;
  lse += q_base;
  delta += q_base;
  k += kv_base * D;
  v += kv_base * D;

  tile::load_tile<D>(q_s, q + static_cast<long long>(q0) * D, min(kTile, n_q - q0));
  tile::load_tile<D>(do_s, dout + static_cast<long long>(q0) * D, min(kTile, n_q - q0));
  float lse2[4], delta_row[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = q0 + ty * 4 + i;
    lse2[i] = row < n_q ? lse[row] * detail::kLog2e : 0.0f;
    delta_row[i] = row < n_q ? delta[row] : 0.0f;
  }

  float dq_acc[4][Dm::kOut];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int c = 0; c < Dm::kOut; ++c) dq_acc[i][c] = 0.0f;

  const int kv_end = causal ? min(n_k, q0 + kTile + causal_offset) : n_k;
  for (int kv0 = 0; kv0 < kv_end; kv0 += kTile) {
    __syncthreads();
    tile::load_tile<D>(k_s, k + static_cast<long long>(kv0) * D, min(kTile, n_k - kv0));
    tile::load_tile<D>(v_s, v + static_cast<long long>(kv0) * D, min(kTile, n_k - kv0));
    __syncthreads();

    float s[4][4], dp[4][4];
    tile::dot_rows<D>(s, q_s, k_s, ty, tx);    // S[query][key] = q·k (unscaled)
    tile::dot_rows<D>(dp, do_s, v_s, ty, tx);  // dP[query][key] = dO·v
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int query = q0 + ty * 4 + i;
        const int key = kv0 + tx + 16 * j;
        const bool visible = key < n_k && (!causal || key <= query + causal_offset);
        const float p = visible ? exp2f(s[i][j] * scale_log2 - lse2[i]) : 0.0f;
        s[i][j] = p * (dp[i][j] - delta_row[i]);  // dS
      }
    tile::store_scores(ds_s, s, ty, tx);
    __syncthreads();
    tile::accumulate_pv<D>(dq_acc, ds_s, k_s, ty, tx);  // dQ += dS · K   (× scale at the end)
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = q0 + ty * 4 + i;
    if (row >= n_q) continue;
#pragma unroll
    for (int g = 0; g < Dm::kGroups; ++g) {
      float4* dq4 = reinterpret_cast<float4*>(dq + static_cast<long long>(row) * D + 64 * g + 4 * tx);
      float4 a = *dq4;
      a.x += scale * dq_acc[i][4 * g];
      a.y += scale * dq_acc[i][4 * g + 1];
      a.z += scale * dq_acc[i][4 * g + 2];
      a.w += scale * dq_acc[i][4 * g + 3];
      *dq4 = a;
    }
  }
}

template <int D>
void launch_flash_fp32_backward(float* dq, float* dk, float* dv, const float* delta, const float* dout,
                                const float* q, const float* k, const float* v, const float* lse, int bh, int n_q,
                                int n_k, bool causal, float scale, cudaStream_t stream) {
  using Dm = tile::Dims<D>;
  constexpr int kScoreFloats = kTile * tile::kScoreStride;
  constexpr int kDkdvSmem = (4 * Dm::kTileFloats + 2 * kScoreFloats + 2 * kTile) * static_cast<int>(sizeof(float));
  constexpr int kDqSmem = (4 * Dm::kTileFloats + kScoreFloats) * static_cast<int>(sizeof(float));

  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_fp32_backward_dkdv_kernel<D>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, kDkdvSmem));
  const dim3 grid_kv(detail::ceil_div(n_k, kTile), bh);
  flash_fp32_backward_dkdv_kernel<D><<<grid_kv, kThreads, kDkdvSmem, stream>>>(dk, dv, dout, q, k, v, lse, delta,
                                                                               n_q, n_k, causal, scale);
  ATTN_CUDA_CHECK_LAUNCH("flash_fp32_backward_dkdv_kernel");

  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_fp32_backward_dq_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       kDqSmem));
  const dim3 grid_q(detail::ceil_div(n_q, kTile), bh);
  flash_fp32_backward_dq_kernel<D><<<grid_q, kThreads, kDqSmem, stream>>>(dq, dout, q, k, v, lse, delta, n_q, n_k,
                                                                          causal, scale);
  ATTN_CUDA_CHECK_LAUNCH("flash_fp32_backward_dq_kernel");
}

}  // namespace

void attention_flash_fp32_backward(float* dq, float* dk, float* dv, float* delta, const float* dout, const float* q,
                                   const float* k, const float* v, const float* out, const float* lse, int bh, int n_q,
                                   int n_k, int d, bool causal, float scale, cudaStream_t stream) {
  constexpr const char* fn = "attention_flash_fp32_backward";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  detail::require_tiled_d(fn, d);
  for (auto [name, p] : {std::pair<const char*, const void*>{"dq", dq}, {"dk", dk}, {"dv", dv}, {"delta", delta},
                         {"dout", dout}, {"q", q}, {"k", k}, {"v", v}, {"out", out}, {"lse", lse}})
    detail::require_device_pointer(fn, name, p);

  const long long rows = static_cast<long long>(bh) * n_q;
  const long long delta_blocks = (rows + 7) / 8;
  detail::require(delta_blocks <= 0x7fffffffLL, fn, "bh·n_q too large for one grid");
  attention_backward_delta_kernel<<<static_cast<unsigned>(delta_blocks), 256, 0, stream>>>(delta, dout, out, rows, d);
  ATTN_CUDA_CHECK_LAUNCH("attention_backward_delta_kernel");

  if (d == 64)
    launch_flash_fp32_backward<64>(dq, dk, dv, delta, dout, q, k, v, lse, bh, n_q, n_k, causal, scale, stream);
  else
    launch_flash_fp32_backward<128>(dq, dk, dv, delta, dout, q, k, v, lse, bh, n_q, n_k, causal, scale, stream);
}

}  // namespace attn::cuda
