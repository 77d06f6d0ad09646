// Rung 6 — the backward of rung 3 on tensor cores (FlashAttention-2's backward, Dao 2023,
// Algorithm 2): BF16 operands, FP32 accumulation, FP32 gradients. The equations are rung 4's
// (04_flash_fp32_backward.cu); what changes is where each product runs and how dQ is reduced.
//
// Tiling. A block owns Bc = 64 keys of one head (4 warps × 16 keys) and walks the query tiles of
// Br = 64 that can see them (causal: from the first query that sees key k0 on). Per query tile,
// each warp computes, for its 16 keys, the transposed tiles
//   Sᵀ  = K_w·Qᵀ          (A: K rows from shared memory, B: Q rows, plain ldmatrix)
//   dPᵀ = V_w·dOᵀ         (A: V rows, B: dO rows)
//   Pᵀ  = exp2(c·Sᵀ − lse·log2 e),  dSᵀ = scale·Pᵀ∘(dPᵀ − D)     (FP32, in registers)
//   dV_w += Pᵀ·dO,  dK_w += dSᵀ·Q   (A: Pᵀ, dSᵀ repacked from accumulators, B: ldmatrix .trans)
// so dK and dV (16 keys × D per warp) live in registers for the whole walk and are added to
// global memory once at the end. dSᵀ also goes to shared memory (bf16) and, after a barrier,
// each warp computes 16 query rows of dQ_tile = dS·K (A: dS through ldmatrix .trans of the
// stored dSᵀ, B: K through .trans) and adds them to dq with FP32 atomics.
//
// Why atomics for dQ. dQ_i sums over every key block. Rung 4 gives dQ its own kernel (blocks
// own queries), which recomputes S and dP: 7 matrix products instead of 5, 40% more tensor work.
// Here dQ is reduced in place with red.global.add.f32 straight into the caller's FP32 dq: one
// pass, 5 products, and the atomic traffic is one D-vector per query row per key block — n_k / 64
// adds per element of dq, against 2·D·64 FLOPs of products per row and block. The price is
// determinism: the order in which blocks add differs from run to run, so dQ's last bits do too
// (dK and dV are written by their one owning block and are deterministic). dq is FP32 anyway, so
// no separate accumulator buffer and conversion pass are needed (FlashAttention-2 needs them
// because its dq is bf16).
//
// Pipeline: K, V of the block are loaded once; Q, dO of the next query tile are fetched with
// cp.async (two stages) while this one is computed; lse (in log2 units) and D of the 64 query
// rows go through shared memory too.
//
// Shared memory: K, V, 2 × Q, 2 × dO (64 × (D + 8) bf16 each), dSᵀ (64 × 72 bf16), lse and D of
// two stages (4 × 64 floats): 64 KiB at D = 64, 112 KiB at D = 128 (two blocks fit in an SM's
// 228 KiB).
// Registers per thread: dK and dV accumulators (2 × D/8 × 4 floats), Sᵀ and dPᵀ (2 × 8 × 4).
// ptxas (CUDA 13.0, sm_90a): 236 registers at D = 64; at D = 128 255 and a 28-byte spill — the
// 128 accumulator floats of dK and dV are the price of keeping them on chip for the whole walk.
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

constexpr int kBwdWarps = 4;
constexpr int kBwdThreads = kBwdWarps * 32;
constexpr int kBwdKeyTile = kBwdWarps * 16;  // Bc = 64 keys per block, 16 per warp
constexpr int kBwdQueryTile = 64;            // Br = 64 queries per step
constexpr int kDsStride = kBwdQueryTile + 8;

template <int D>
struct BwdDims {
  static constexpr int kStride = D + 8;
  static constexpr int kSlotElems = 64 * kStride;
  static constexpr int kBf16Elems = 6 * kSlotElems + kBwdKeyTile * kDsStride;  // K, V, Q×2, dO×2, dSᵀ
  static constexpr int kSmemBytes = kBf16Elems * static_cast<int>(sizeof(bf16)) + 4 * kBwdQueryTile * 4;
};

// delta: (BH·n_q) ← D_i = Σ_c dO[i][c]·O[i][c] in FP32 from the bf16 tensors. One warp per row.
__global__ void __launch_bounds__(256)
bf16_backward_delta_kernel(float* __restrict__ delta, const bf16* __restrict__ dout, const bf16* __restrict__ out,
                           long long rows, int d) {
  const long long row = static_cast<long long>(blockIdx.x) * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;  // a whole warp leaves together, so the shuffles below stay full
  float sum = 0.0f;
  for (int c = lane; c < d; c += 32) sum += __bfloat162float(dout[row * d + c]) * __bfloat162float(out[row * d + c]);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) delta[row] = sum;
}

// Shape contract (per head; the head is blockIdx.y, the key block k0 = 64·blockIdx.x):
//   q, dout: (n_q, D) bf16   k, v: (n_k, D) bf16   lse, delta: (n_q) FP32
//   -> dq (n_q, D) += (atomics), dk, dv (n_k, D) += (rows k0 … k0 + 63 only)
// Grid: (⌈n_k / 64⌉, BH), 128 threads; warp w owns keys k0 + 16w … k0 + 16w + 15.
template <int D>
__global__ void __launch_bounds__(kBwdThreads, 1)
flash_bf16_backward_kernel(float* __restrict__ dq, float* __restrict__ dk, float* __restrict__ dv,
                           const bf16* __restrict__ dout, const bf16* __restrict__ q, const bf16* __restrict__ k,
                           const bf16* __restrict__ v, const float* __restrict__ lse,
                           const float* __restrict__ delta, int n_q, int n_k, bool causal, float scale,
                           float scale_log2) {
  constexpr int S = BwdDims<D>::kStride;
  constexpr int kSlot = BwdDims<D>::kSlotElems;
  constexpr int kDimSteps = D / 16;
  constexpr int kOutTiles = D / 8;

  extern __shared__ uint4 smem_u4[];
  bf16* smem = reinterpret_cast<bf16*>(smem_u4);
  bf16* k_s = smem;
  bf16* v_s = smem + kSlot;
  bf16* q_s = smem + 2 * kSlot;   // stages 0, 1
  bf16* do_s = smem + 4 * kSlot;  // stages 0, 1
  bf16* ds_s = smem + 6 * kSlot;  // dSᵀ: 64 keys × 64 queries
  float* lse_s = reinterpret_cast<float*>(smem + BwdDims<D>::kBf16Elems);  // [2][64], log2 units
  float* delta_s = lse_s + 2 * kBwdQueryTile;                             // [2][64]

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int head = blockIdx.y;
  const int k0 = blockIdx.x * kBwdKeyTile;
  const int causal_offset = n_k - n_q;

  q += static_cast<long long>(head) * n_q * D;
  dout += static_cast<long long>(head) * n_q * D;
  dq += static_cast<long long>(head) * n_q * D;
  k += static_cast<long long>(head) * n_k * D;
  v += static_cast<long long>(head) * n_k * D;
  dk += static_cast<long long>(head) * n_k * D;
  dv += static_cast<long long>(head) * n_k * D;
  lse += static_cast<long long>(head) * n_q;
  delta += static_cast<long long>(head) * n_q;

  const int n_qtiles = (n_q + kBwdQueryTile - 1) / kBwdQueryTile;
  // Causal: query i sees key k0 only from i = k0 − offset on; earlier tiles contribute nothing.
  const int first = causal ? max(0, k0 - causal_offset) / kBwdQueryTile : 0;
  if (first >= n_qtiles) return;  // no query sees these keys: their gradients gain nothing

  auto issue_q = [&](int tile, int stage) {
    if (tile < n_qtiles) {
      const int i0 = tile * kBwdQueryTile;
      const int rows = min(kBwdQueryTile, n_q - i0);
      load_rows_async<D, kBwdQueryTile, kBwdThreads>(q_s + stage * kSlot, q + static_cast<long long>(i0) * D, rows);
      load_rows_async<D, kBwdQueryTile, kBwdThreads>(do_s + stage * kSlot, dout + static_cast<long long>(i0) * D, rows);
    }
    cp_async_commit();
  };
  // Threads 0–63 fetch lse (as log2 units; a row that saw no key, or a row past n_q, becomes +∞
  // so that every P of it is exp2(−∞) = 0), threads 64–127 fetch D.
  auto load_row_stats = [&](int tile, int stage) {
    if (tile >= n_qtiles) return;
    const int r = threadIdx.x % kBwdQueryTile;
    const int i = tile * kBwdQueryTile + r;
    if (threadIdx.x < kBwdQueryTile) {
      const float x = i < n_q ? lse[i] : -INFINITY;
      lse_s[stage * kBwdQueryTile + r] = x == -INFINITY ? INFINITY : x * 1.4426950408889634f;
    } else {
      delta_s[stage * kBwdQueryTile + r] = i < n_q ? delta[i] : 0.0f;
    }
  };

  // Prologue: K, V and the first query tile in one group.
  load_rows_async<D, kBwdKeyTile, kBwdThreads>(k_s, k + static_cast<long long>(k0) * D, min(kBwdKeyTile, n_k - k0));
  load_rows_async<D, kBwdKeyTile, kBwdThreads>(v_s, v + static_cast<long long>(k0) * D, min(kBwdKeyTile, n_k - k0));
  issue_q(first, 0);
  load_row_stats(first, 0);

  float dk_acc[kOutTiles][4], dv_acc[kOutTiles][4];
#pragma unroll
  for (int dt = 0; dt < kOutTiles; ++dt)
#pragma unroll
    for (int c = 0; c < 4; ++c) dk_acc[dt][c] = dv_acc[dt][c] = 0.0f;

  for (int it = first; it < n_qtiles; ++it) {
    const int stage = (it - first) & 1;
    // The other stage was last read in the previous step, which ended with a barrier.
    issue_q(it + 1, stage ^ 1);
    load_row_stats(it + 1, stage ^ 1);
    cp_async_wait<1>();  // this step's Q, dO (and, the first time, K and V)
    __syncthreads();

    const int i0 = it * kBwdQueryTile;
    const bf16* qs = q_s + stage * kSlot;
    const bf16* dos = do_s + stage * kSlot;
    const float* lse2 = lse_s + stage * kBwdQueryTile;
    const float* dl = delta_s + stage * kBwdQueryTile;

    // Sᵀ and dPᵀ for the warp's 16 keys × 64 queries. st[nt][c]: key k0 + 16w + g + 8·(c/2),
    // query i0 + 8·nt + 2t + c%2 (the C layout with keys as rows).
    float st[8][4], dpt[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) st[nt][c] = dpt[nt][c] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kDimSteps; ++kk) {
      std::uint32_t ka[4], va[4];
      load_a_rows(ka, k_s, S, warp * 16, kk * 16, lane);
      load_a_rows(va, v_s, S, warp * 16, kk * 16, lane);
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        std::uint32_t b[4];
        load_b_rows(b, qs, S, np * 16, kk * 16, lane);
        mma_bf16_m16n8k16(st[2 * np], ka, b[0], b[1]);
        mma_bf16_m16n8k16(st[2 * np + 1], ka, b[2], b[3]);
        load_b_rows(b, dos, S, np * 16, kk * 16, lane);
        mma_bf16_m16n8k16(dpt[2 * np], va, b[0], b[1]);
        mma_bf16_m16n8k16(dpt[2 * np + 1], va, b[2], b[3]);
      }
    }

    // Pᵀ (in st) and dSᵀ = scale·Pᵀ∘(dPᵀ − D) (in dpt). Keys past n_k and causal future pairs
    // get P = 0; queries past n_q already do (lse = +∞ there).
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int key = k0 + warp * 16 + g + 8 * (c / 2);
        const int qi = 8 * nt + 2 * t + (c % 2);
        const bool visible = key < n_k && (!causal || key <= i0 + qi + causal_offset);
        const float p = visible ? exp2f(fmaf(st[nt][c], scale_log2, -lse2[qi])) : 0.0f;
        st[nt][c] = p;
        dpt[nt][c] = scale * p * (dpt[nt][c] - dl[qi]);
      }

    // dV += Pᵀ·dO and dK += dSᵀ·Q over the 64 queries (4 k-steps of 16).
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      std::uint32_t pa[4], dsa[4];
      accumulators_to_a(pa, st[2 * kk], st[2 * kk + 1]);
      accumulators_to_a(dsa, dpt[2 * kk], dpt[2 * kk + 1]);
#pragma unroll
      for (int dp = 0; dp < kDimSteps; ++dp) {
        std::uint32_t b[4];
        load_b_cols(b, dos, S, kk * 16, dp * 16, lane);
        mma_bf16_m16n8k16(dv_acc[2 * dp], pa, b[0], b[1]);
        mma_bf16_m16n8k16(dv_acc[2 * dp + 1], pa, b[2], b[3]);
        load_b_cols(b, qs, S, kk * 16, dp * 16, lane);
        mma_bf16_m16n8k16(dk_acc[2 * dp], dsa, b[0], b[1]);
        mma_bf16_m16n8k16(dk_acc[2 * dp + 1], dsa, b[2], b[3]);
      }
    }

    // dSᵀ to shared memory (bf16, the same rounding the dK product saw).
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const std::uint32_t packed = pack_bf16x2(dpt[nt][2 * r], dpt[nt][2 * r + 1]);
        memcpy(ds_s + (warp * 16 + g + 8 * r) * kDsStride + 8 * nt + 2 * t, &packed, sizeof packed);
      }
    __syncthreads();

    // dQ rows i0 + 16w … +15 += dS·K over the block's 64 keys, 16 columns at a time, added to dq
    // with atomics (other key blocks add to the same rows).
    std::uint32_t ds_a[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) load_a_cols(ds_a[kk], ds_s, kDsStride, kk * 16, warp * 16, lane);
#pragma unroll
    for (int dp = 0; dp < kDimSteps; ++dp) {
      float acc[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        std::uint32_t b[4];
        load_b_cols(b, k_s, S, kk * 16, dp * 16, lane);
        mma_bf16_m16n8k16(acc[0], ds_a[kk], b[0], b[1]);
        mma_bf16_m16n8k16(acc[1], ds_a[kk], b[2], b[3]);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int row = i0 + warp * 16 + g + 8 * (c / 2);
          if (row < n_q) atomicAdd(dq + static_cast<long long>(row) * D + dp * 16 + 8 * h + 2 * t + (c % 2), acc[h][c]);
        }
    }
    __syncthreads();  // dSᵀ and this stage's Q, dO are overwritten next step
  }

  // dK, dV: this block is the only writer of its 64 key rows.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int key = k0 + warp * 16 + g + 8 * r;
    if (key >= n_k) continue;
#pragma unroll
    for (int dt = 0; dt < kOutTiles; ++dt) {
      const long long idx = static_cast<long long>(key) * D + 8 * dt + 2 * t;
      dk[idx] += dk_acc[dt][2 * r];
      dk[idx + 1] += dk_acc[dt][2 * r + 1];
      dv[idx] += dv_acc[dt][2 * r];
      dv[idx + 1] += dv_acc[dt][2 * r + 1];
    }
  }
}

template <int D>
void launch_flash_bf16_backward(float* dq, float* dk, float* dv, const bf16* dout, const bf16* q, const bf16* k,
                                const bf16* v, const float* lse, const float* delta, int bh, int n_q, int n_k,
                                bool causal, float scale, cudaStream_t stream) {
  constexpr int kSmemBytes = BwdDims<D>::kSmemBytes;
  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_bf16_backward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       kSmemBytes));
  const dim3 grid(detail::ceil_div(n_k, kBwdKeyTile), bh);
  flash_bf16_backward_kernel<D><<<grid, kBwdThreads, kSmemBytes, stream>>>(dq, dk, dv, dout, q, k, v, lse, delta, n_q,
                                                                            n_k, causal, scale, scale * detail::kLog2e);
  ATTN_CUDA_CHECK_LAUNCH("flash_bf16_backward_kernel");
}

}  // namespace

void attention_flash_bf16_backward(float* dq, float* dk, float* dv, float* delta, const __nv_bfloat16* dout,
                                   const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* out, const float* lse, int bh, int n_q, int n_k, int d,
                                   bool causal, float scale, cudaStream_t stream) {
  constexpr const char* fn = "attention_flash_bf16_backward";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  detail::require_tiled_d(fn, d);
  detail::require_positive_scale(fn, scale);
  for (auto [name, p] : {std::pair<const char*, const void*>{"dq", dq}, {"dk", dk}, {"dv", dv}, {"delta", delta},
                         {"dout", dout}, {"q", q}, {"k", k}, {"v", v}, {"out", out}, {"lse", lse}})
    detail::require_device_pointer(fn, name, p);

  const long long rows = static_cast<long long>(bh) * n_q;
  const long long delta_blocks = (rows + 7) / 8;
  detail::require(delta_blocks <= 0x7fffffffLL, fn, "bh·n_q too large for one grid");
  bf16_backward_delta_kernel<<<static_cast<unsigned>(delta_blocks), 256, 0, stream>>>(delta, dout, out, rows, d);
  ATTN_CUDA_CHECK_LAUNCH("bf16_backward_delta_kernel");

  if (d == 64)
    launch_flash_bf16_backward<64>(dq, dk, dv, dout, q, k, v, lse, delta, bh, n_q, n_k, causal, scale, stream);
  else
    launch_flash_bf16_backward<128>(dq, dk, dv, dout, q, k, v, lse, delta, bh, n_q, n_k, causal, scale, stream);
}

}  // namespace attn::cuda
