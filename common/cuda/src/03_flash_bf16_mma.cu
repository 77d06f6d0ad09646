// Rung 3 — the flash forward on tensor cores: BF16 Q, K, V, FP32 accumulation and softmax,
// FlashAttention-2's design (Dao 2023) with mma.sync (Ampere-style; Hopper runs it too).
//
// Tiling. A block owns Br = 128 query rows of one head and walks the keys in tiles of Bc = 64.
// 8 warps × 16 rows: each warp owns 16 query rows outright, so a row's softmax statistics
// (running max m, running sum ℓ) never leave the warp — the 4 lanes of a quad share a row and
// reduce it with two xor-shuffles. Q is read once into registers (A fragments) and stays there.
//
// Per key tile j, in this order (the loop body below):
//   1. cp.async the K tile j + 2 (three stages: j, j + 1 and j + 2 can be in flight at once);
//   2. S_{j+1} = Q·K_{j+1}ᵀ on the tensor cores — issued *before* the softmax of tile j, and
//      independent of it, so the warp's FP32 softmax instructions issue while the tensor cores
//      are still busy with the next tile's product (FlashAttention-2's intra-warp overlap);
//   3. online softmax of S_j in FP32, in base 2 with the scale folded in: with c = scale·log2 e
//      and m the raw running max, p = exp2(c·s − c·m) is one FFMA and one MUFU.EX2 per score;
//   4. O += P_j·V_j: the accumulators of S are repacked to bf16 A fragments in registers (P never
//      touches shared memory); V's B fragments come from ldmatrix .trans;
//   5. cp.async the V tile j + 2.
// K and V travel in separate cp.async groups, so the wait before step 2 needs only K_{j+1} and
// the wait before step 4 only V_j. Every step commits its group, empty or not, so the wait
// counts are constants: before step 2 the groups younger than K_{j+1} are V_{j+1} and K_{j+2}
// (wait_group 2); before step 4 those younger than V_j are K_{j+1}, V_{j+1}, K_{j+2} (wait 3).
//
// Shared memory: six slots of 64 rows × (D + 8) bf16 — slots 2s and 2s + 1 hold K and V of
// stage s. Q (128 rows = two slots) is loaded into stage 2's slots, which are first overwritten
// by the copy of K_2, issued after every warp holds Q in registers. At the end slots 0–1 stage
// the bf16 output for 16-byte coalesced stores. 54 KiB at D = 64, 102 KiB at D = 128.
//
// Registers per thread: Q fragments (D/16 × 4), O accumulators (D/8 × 4 floats), two score tiles
// S_j and S_{j+1} (2 × 8 n-tiles × 4 floats), m and ℓ for its two rows g and g + 8. ptxas (CUDA
// 13.0, sm_90a) gives 241 registers at D = 128 and 180 at D = 64, no spills: one block (8 warps)
// per SM either way — the overlap inside each warp, not occupancy, is what hides latency.
// Fragment layouts: mma_bf16.cuh.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "attn/cuda/attention.hpp"
#include "launch_checks.hpp"
#include "mma_bf16.cuh"

namespace attn::cuda {
namespace {

using namespace mma;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = 16;                   // the M of m16n8k16
constexpr int kQueryTile = kWarps * kRowsPerWarp;  // Br = 128 query rows per block
constexpr int kKeyTile = 64;                       // Bc = 64 keys per step = 8 n-tiles of 8 columns
constexpr int kStages = 3;                         // K/V tiles in flight

template <int D>
struct Bf16Dims {
  static constexpr int kStride = D + 8;                       // padded row (see mma_bf16.cuh)
  static constexpr int kSlotElems = kKeyTile * kStride;       // one 64-row tile
  static constexpr int kSlots = 2 * kStages;                  // K and V of each stage
  static constexpr int kSmemBytes = kSlots * kSlotElems * static_cast<int>(sizeof(bf16));
  static_assert(kQueryTile * kStride <= 2 * kSlotElems, "Q must fit in stage 2's two slots");
};

// S (the warp's 16 × 64 scores, raw: no scale) = Q · Kᵀ over D / 16 k-steps. B[k][n] = K[n][k],
// a plain ldmatrix of K's rows; one x4 covers two 8-key n-tiles.
template <int D>
__device__ __forceinline__ void scores_tile(float (&s)[8][4], const std::uint32_t (&q_frag)[D / 16][4], const bf16* ks,
                                            int lane) {
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int c = 0; c < 4; ++c) s[nt][c] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      std::uint32_t b[4];
      load_b_rows(b, ks, D + 8, np * 16, kk * 16, lane);
      mma_bf16_m16n8k16(s[2 * np], q_frag[kk], b[0], b[1]);
      mma_bf16_m16n8k16(s[2 * np + 1], q_frag[kk], b[2], b[3]);
    }
}

// Shape contract (per head; the head is blockIdx.y):
//   q: (n_q, D), k: (n_k, D), v: (n_k, D) bf16 -> out: (n_q, D) bf16, lse: (n_q) FP32 (optional)
// Grid: (⌈n_q / 128⌉, BH), 256 threads = 8 warps; warp w owns query rows q0 + 16w … q0 + 16w + 15.
// scale_log2 = scale · log2 e > 0.
template <int D>
__global__ void __launch_bounds__(kThreads, 1)
flash_bf16_forward_kernel(bf16* __restrict__ out, float* __restrict__ lse, const bf16* __restrict__ q,
                          const bf16* __restrict__ k, const bf16* __restrict__ v, int n_q, int n_k, bool causal,
                          float scale_log2) {
  constexpr int S = Bf16Dims<D>::kStride;
  constexpr int kSlot = Bf16Dims<D>::kSlotElems;
  constexpr int kDimSteps = D / 16;  // k-steps of Q·Kᵀ, and pairs of 8-wide O tiles
  constexpr int kOutTiles = D / 8;   // 8-column n-tiles of O

  extern __shared__ uint4 smem_u4[];  // uint4: 16-byte aligned base for cp.async and ldmatrix
  bf16* smem = reinterpret_cast<bf16*>(smem_u4);

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;  // row within the 8-row half of the fragment
  const int t = lane % 4;  // column pair within an 8-wide n-tile
  const int head = blockIdx.y;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kQueryTile;  // longest causal blocks first
  const int causal_offset = n_k - n_q;                       // query i sees key j iff j <= i + offset

  q += static_cast<long long>(head) * n_q * D;
  k += static_cast<long long>(head) * n_k * D;
  v += static_cast<long long>(head) * n_k * D;
  out += static_cast<long long>(head) * n_q * D;

  const int kv_end = causal ? min(n_k, q0 + kQueryTile + causal_offset) : n_k;
  const int n_tiles = kv_end > 0 ? (kv_end + kKeyTile - 1) / kKeyTile : 0;

  // One cp.async group per call, empty past the last tile (see the wait counts above).
  auto issue_k = [&](int tile) {
    if (tile < n_tiles)
      load_rows_async<D, kKeyTile, kThreads>(smem + (2 * (tile % kStages)) * kSlot,
                                             k + static_cast<long long>(tile) * kKeyTile * D,
                                             min(kKeyTile, n_k - tile * kKeyTile));
    cp_async_commit();
  };
  auto issue_v = [&](int tile) {
    if (tile < n_tiles)
      load_rows_async<D, kKeyTile, kThreads>(smem + (2 * (tile % kStages) + 1) * kSlot,
                                             v + static_cast<long long>(tile) * kKeyTile * D,
                                             min(kKeyTile, n_k - tile * kKeyTile));
    cp_async_commit();
  };

  // Prologue: Q (into stage 2's slots) with K_0, then V_0, K_1, V_1.
  bf16* q_s = smem + 2 * (kStages - 1) * kSlot;
  load_rows_async<D, kQueryTile, kThreads>(q_s, q + static_cast<long long>(q0) * D, min(kQueryTile, n_q - q0));
  issue_k(0);
  issue_v(0);
  issue_k(1);
  issue_v(1);
  cp_async_wait<3>();  // Q and K_0 have landed
  __syncthreads();

  std::uint32_t q_frag[kDimSteps][4];
#pragma unroll
  for (int kk = 0; kk < kDimSteps; ++kk) load_a_rows(q_frag[kk], q_s, S, warp * kRowsPerWarp, kk * 16, lane);
  __syncthreads();  // every warp holds Q: stage 2's slots are free for K_2

  float o[kOutTiles][4];
#pragma unroll
  for (int dt = 0; dt < kOutTiles; ++dt)
#pragma unroll
    for (int c = 0; c < 4; ++c) o[dt][c] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY};  // raw running max of rows g and g + 8 (no scale)
  float l[2] = {0.0f, 0.0f};

  float s[8][4];  // S_j: s[nt][c] is row q0 + 16·warp + g + 8·(c/2), key 64j + 8·nt + 2t + c%2
  if (n_tiles > 0) scores_tile<D>(s, q_frag, smem, lane);

  for (int j = 0; j < n_tiles; ++j) {
    const int kv0 = j * kKeyTile;
    // 1. K_{j+2} into stage (j+2) % 3 = (j−1) % 3: K_{j−1} was last read before ≥ 2 barriers.
    issue_k(j + 2);

    // 2. The next tile's scores, issued before this tile's softmax.
    float s_next[8][4];
    if (j + 1 < n_tiles) {
      cp_async_wait<2>();  // K_{j+1}
      __syncthreads();
      scores_tile<D>(s_next, q_frag, smem + 2 * ((j + 1) % kStages) * kSlot, lane);
    }

    // 3. Online softmax of S_j. Masked scores become −∞ (keys past n_k, causal future keys).
    const bool needs_mask = (kv0 + kKeyTile > n_k) || (causal && kv0 + kKeyTile - 1 > q0 + causal_offset);
    if (needs_mask) {
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int row = q0 + warp * kRowsPerWarp + g + 8 * (c / 2);
          const int col = kv0 + 8 * nt + 2 * t + (c % 2);
          if (col >= n_k || (causal && col > row + causal_offset)) s[nt][c] = -INFINITY;
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) tile_max = fmaxf(tile_max, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float m_new = fmaxf(m[r], tile_max);
      // Fully masked so far: subtract 0, not −∞ (−∞ − (−∞) would be NaN); every p is then 0.
      const float base = m_new == -INFINITY ? 0.0f : m_new * scale_log2;
      const float alpha = exp2f(m[r] * scale_log2 - base);
      float tile_sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int c = 2 * r; c < 2 * r + 2; ++c) {
          s[nt][c] = exp2f(fmaf(s[nt][c], scale_log2, -base));
          tile_sum += s[nt][c];
        }
      tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
      tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 2);
      l[r] = l[r] * alpha + tile_sum;
      m[r] = m_new;
#pragma unroll
      for (int dt = 0; dt < kOutTiles; ++dt) {
        o[dt][2 * r] *= alpha;
        o[dt][2 * r + 1] *= alpha;
      }
    }

    // 4. O += P_j · V_j over the 64 keys = 4 k-steps of 16.
    cp_async_wait<3>();  // V_j
    __syncthreads();
    const bf16* vs = smem + (2 * (j % kStages) + 1) * kSlot;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      std::uint32_t p_frag[4];
      accumulators_to_a(p_frag, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int dp = 0; dp < kDimSteps; ++dp) {
        std::uint32_t b[4];
        load_b_cols(b, vs, S, kk * 16, dp * 16, lane);
        mma_bf16_m16n8k16(o[2 * dp], p_frag, b[0], b[1]);
        mma_bf16_m16n8k16(o[2 * dp + 1], p_frag, b[2], b[3]);
      }
    }

    // 5. V_{j+2} into V_{j−1}'s stage, which every warp finished with before the barrier above.
    issue_v(j + 2);
    if (j + 1 < n_tiles) {
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int c = 0; c < 4; ++c) s[nt][c] = s_next[nt][c];
    }
  }

  // lse (natural log) = c·m·ln 2 + ln ℓ; a row that saw no key gets −∞.
  if (lse != nullptr && t == 0) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int row = q0 + warp * kRowsPerWarp + g + 8 * r;
      if (row < n_q)
        lse[static_cast<long long>(head) * n_q + row] =
            l[r] > 0.0f ? (m[r] * scale_log2 + log2f(l[r])) * 0.6931471805599453f : -INFINITY;
    }
  }

  // O / ℓ, rounded to bf16 (a fully masked row, ℓ = 0, is written as zeros), staged in slots 0–1
  // so that the stores to global memory are whole 16-byte chunks of consecutive rows.
  cp_async_wait<0>();  // only empty groups can remain; no copy may land after this point
  __syncthreads();     // every warp is done with the K/V slots
  bf16* o_s = smem;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float inv_l = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
    bf16* row_s = o_s + (warp * kRowsPerWarp + g + 8 * r) * S;
#pragma unroll
    for (int dt = 0; dt < kOutTiles; ++dt) {
      const std::uint32_t packed = pack_bf16x2(o[dt][2 * r] * inv_l, o[dt][2 * r + 1] * inv_l);
      memcpy(row_s + 8 * dt + 2 * t, &packed, sizeof packed);
    }
  }
  __syncthreads();
  constexpr int kChunksPerRow = D / 8;
  for (int idx = threadIdx.x; idx < kQueryTile * kChunksPerRow; idx += kThreads) {
    const int r = idx / kChunksPerRow;
    const int c = idx % kChunksPerRow;
    if (q0 + r < n_q)
      *reinterpret_cast<uint4*>(out + static_cast<long long>(q0 + r) * D + 8 * c) =
          *reinterpret_cast<const uint4*>(o_s + r * S + 8 * c);
  }
}

template <int D>
void launch_flash_bf16_forward(bf16* out, float* lse, const bf16* q, const bf16* k, const bf16* v, int bh, int n_q,
                               int n_k, bool causal, float scale, cudaStream_t stream) {
  constexpr int kSmemBytes = Bf16Dims<D>::kSmemBytes;  // 54 KB at D = 64, 102 KB at D = 128
  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_bf16_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       kSmemBytes));
  const dim3 grid(detail::ceil_div(n_q, kQueryTile), bh);
  flash_bf16_forward_kernel<D><<<grid, kThreads, kSmemBytes, stream>>>(out, lse, q, k, v, n_q, n_k, causal,
                                                                        scale * detail::kLog2e);
  ATTN_CUDA_CHECK_LAUNCH("flash_bf16_forward_kernel");
}

}  // namespace

void attention_flash_bf16(__nv_bfloat16* out, float* lse, const __nv_bfloat16* q, const __nv_bfloat16* k,
                          const __nv_bfloat16* v, int bh, int n_q, int n_k, int d, bool causal, float scale,
                          cudaStream_t stream) {
  constexpr const char* fn = "attention_flash_bf16";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  detail::require_tiled_d(fn, d);
  detail::require_positive_scale(fn, scale);
  for (auto [name, p] : {std::pair<const char*, const void*>{"out", out}, {"q", q}, {"k", k}, {"v", v}})
    detail::require_device_pointer(fn, name, p);
  if (d == 64)
    launch_flash_bf16_forward<64>(out, lse, q, k, v, bh, n_q, n_k, causal, scale, stream);
  else
    launch_flash_bf16_forward<128>(out, lse, q, k, v, bh, n_q, n_k, causal, scale, stream);
}

}  // namespace attn::cuda
