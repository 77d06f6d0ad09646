// Rung 3 — the flash forward on tensor cores: BF16 Q, K, V, FP32 accumulation and softmax.
// Same algorithm as rung 2, but the two products run as mma.sync.m16n8k16 (a warp multiplies a
// 16×16 by a 16×8 BF16 tile into 16×8 FP32 in one instruction). FlashAttention-2's split: each
// of 4 warps owns 16 query rows, so the softmax statistics of a row stay inside one warp; the
// scores come out of the first mma in exactly the register layout the second mma wants as its
// A operand, so P never touches shared memory. K/V tiles stream in with cp.async, double-buffered.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "attn/cuda/attention.hpp"
#include "launch_checks.hpp"

namespace attn::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = 16;                 // the M of m16n8k16
constexpr int kQueryTile = kWarps * kRowsPerWarp;  // Br = 64 query rows per block
constexpr int kKeyTile = 64;                     // Bc = 64 keys per step = 8 n-tiles of 8 columns

// Shared-memory tiles are 64 rows of D bf16, each row padded by 8 bf16 (16 bytes): ldmatrix
// reads 8 rows of 16 bytes per phase, and with a row stride of D·2 + 16 bytes those 8 rows start
// 4 banks apart and cover all 32 banks — no conflicts.
template <int D>
struct Bf16Dims {
  static constexpr int kStride = D + 8;
  static constexpr int kTileElems = 64 * kStride;
  static constexpr int kSmemBytes = 5 * kTileElems * static_cast<int>(sizeof(bf16));  // Q + 2×K + 2×V
};

// ---- thin wrappers over the PTX instructions (PTX ISA, "Warp-level matrix instructions") ----

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte asynchronous copy global → shared. src_bytes = 0 copies nothing and zero-fills the 16
// bytes: that is how rows past the end of the sequence become zeros.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8×8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i. Afterwards lane
// (g = lane/4, t = lane%4) holds, in r[i], elements [g][2t] and [g][2t+1] of matrix i
// (.trans: elements [2t][g] and [2t+1][g]).
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

// c (16×8, FP32) += a (16×16, BF16, row-major) · b (16×8, BF16, "col": k-major per column).
// Fragments, with g = lane/4, t = lane%4 (two bf16 per 32-bit register, lower column in the low half):
//   a[0]: A[g][2t..2t+1]   a[1]: A[g+8][2t..]   a[2]: A[g][2t+8..]   a[3]: A[g+8][2t+8..]
//   b0:   B[2t..2t+1][g]   b1:   B[2t+8..2t+9][g]
//   c[0], c[1]: C[g][2t], C[g][2t+1]            c[2], c[3]: C[g+8][2t], C[g+8][2t+1]
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                                  std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low 16 bits) = lo
  std::uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

// Issue the cp.async copies of a 64 × D tile (rows ≥ rows_valid zero-filled) into shared memory.
template <int D>
__device__ __forceinline__ void load_tile_async(bf16* dst, const bf16* __restrict__ src, int rows_valid) {
  constexpr int kChunksPerRow = D / 8;  // 16-byte chunks
  for (int idx = threadIdx.x; idx < 64 * kChunksPerRow; idx += kThreads) {
    const int r = idx / kChunksPerRow;
    const int c = idx % kChunksPerRow;
    const bool valid = r < rows_valid;
    // An invalid row still needs a legal address; it is never read (src_bytes = 0).
    const bf16* from = valid ? src + static_cast<long long>(r) * D + 8 * c : src;
    cp_async_16(smem_address(dst + r * Bf16Dims<D>::kStride + 8 * c), from, valid);
  }
}

// Shape contract (per head; the head is blockIdx.y):
//   q: (n_q, D), k: (n_k, D), v: (n_k, D) bf16 -> out: (n_q, D) bf16
// Grid: (⌈n_q / 64⌉, BH), 128 threads = 4 warps; warp w owns query rows q0 + 16w … q0 + 16w + 15.
// Per thread: Q fragments (D/16 × 4 registers), O accumulators (D/8 n-tiles × 4 floats), the
// 16 × 64 score tile of its warp (8 n-tiles × 4 floats), and m, ℓ for its two rows g and g + 8.
template <int D>
__global__ void __launch_bounds__(kThreads)
flash_bf16_forward_kernel(bf16* __restrict__ out, const bf16* __restrict__ q, const bf16* __restrict__ k,
                          const bf16* __restrict__ v, int n_q, int n_k, bool causal, float scale_log2) {
  constexpr int S = Bf16Dims<D>::kStride;
  constexpr int kTileElems = Bf16Dims<D>::kTileElems;
  constexpr int kDimSteps = D / 16;  // k-steps of the Q·Kᵀ product, and pairs of 8-wide O tiles
  constexpr int kOutTiles = D / 8;   // 8-column n-tiles of O

  extern __shared__ uint4 smem_u4[];  // uint4: 16-byte aligned base for cp.async and ldmatrix
  bf16* q_s = reinterpret_cast<bf16*>(smem_u4);
  bf16* k_s = q_s + kTileElems;      // stages 0 and 1
  bf16* v_s = k_s + 2 * kTileElems;  // stages 0 and 1

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;  // "groupID" in the PTX fragment tables: row within the 8-row half
  const int t = lane % 4;  // "threadID_in_group": column pair within an 8-wide n-tile
  const int head = blockIdx.y;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kQueryTile;  // longest causal blocks first
  const int causal_offset = n_k - n_q;                       // query i sees key j iff j <= i + offset

  q += static_cast<long long>(head) * n_q * D;
  k += static_cast<long long>(head) * n_k * D;
  v += static_cast<long long>(head) * n_k * D;
  out += static_cast<long long>(head) * n_q * D;

  const int kv_end = causal ? min(n_k, q0 + kQueryTile + causal_offset) : n_k;
  const int n_tiles = kv_end > 0 ? (kv_end + kKeyTile - 1) / kKeyTile : 0;

  // Prologue: Q and the first K/V tile in one cp.async group.
  load_tile_async<D>(q_s, q + static_cast<long long>(q0) * D, min(kQueryTile, n_q - q0));
  if (n_tiles > 0) {
    load_tile_async<D>(k_s, k, min(kKeyTile, n_k));
    load_tile_async<D>(v_s, v, min(kKeyTile, n_k));
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  // Q stays in registers as A fragments for the whole kernel. For k-step kk, matrices 0–3 of the
  // ldmatrix are (rows 0–7, cols 0–7), (rows 8–15, cols 0–7), (rows 0–7, cols 8–15),
  // (rows 8–15, cols 8–15) of the warp's 16 × 16 block: lane gives row lane%16, column 8·(lane/16).
  std::uint32_t q_frag[kDimSteps][4];
#pragma unroll
  for (int kk = 0; kk < kDimSteps; ++kk)
    ldmatrix_x4(q_frag[kk], smem_address(q_s + (warp * kRowsPerWarp + lane % 16) * S + kk * 16 + (lane / 16) * 8));

  float o[kOutTiles][4];
#pragma unroll
  for (int dt = 0; dt < kOutTiles; ++dt)
#pragma unroll
    for (int c = 0; c < 4; ++c) o[dt][c] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY};  // rows g and g + 8 of this warp, log2 units
  float l[2] = {0.0f, 0.0f};

  for (int tile_idx = 0; tile_idx < n_tiles; ++tile_idx) {
    const int stage = tile_idx & 1;
    const int kv0 = tile_idx * kKeyTile;
    // Start copying the next tile into the other stage, then wait for this one only. The other
    // stage was last read in iteration tile_idx − 1, which ended with a barrier.
    if (tile_idx + 1 < n_tiles) {
      const int next = kv0 + kKeyTile;
      load_tile_async<D>(k_s + (stage ^ 1) * kTileElems, k + static_cast<long long>(next) * D, min(kKeyTile, n_k - next));
      load_tile_async<D>(v_s + (stage ^ 1) * kTileElems, v + static_cast<long long>(next) * D, min(kKeyTile, n_k - next));
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const bf16* ks = k_s + stage * kTileElems;
    const bf16* vs = v_s + stage * kTileElems;

    // S (16 × 64 per warp) = Q · Kᵀ. B[k][n] = K[n][k]: a B fragment holds two consecutive dims
    // of one key, which is a plain (non-transposed) ldmatrix of K's rows. One x4 loads the
    // B fragments of two n-tiles: matrices (keys +0–7, dims +0–7), (keys +0–7, dims +8–15),
    // (keys +8–15, dims +0–7), (keys +8–15, dims +8–15).
    float s[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) s[nt][c] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < kDimSteps; ++kk)
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        std::uint32_t b[4];
        ldmatrix_x4(b, smem_address(ks + (np * 16 + lane % 8 + 8 * (lane / 16)) * S + kk * 16 + 8 * ((lane / 8) % 2)));
        mma_bf16_m16n8k16(s[2 * np], q_frag[kk], b[0], b[1]);
        mma_bf16_m16n8k16(s[2 * np + 1], q_frag[kk], b[2], b[3]);
      }

    // s[nt][c] is the score of row q0 + 16·warp + g + 8·(c/2) and key kv0 + 8·nt + 2t + c%2.
    const bool needs_mask = (kv0 + kKeyTile > n_k) || (causal && kv0 + kKeyTile - 1 > q0 + causal_offset);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float x = s[nt][c] * scale_log2;
        if (needs_mask) {
          const int row = q0 + warp * kRowsPerWarp + g + 8 * (c / 2);
          const int col = kv0 + 8 * nt + 2 * t + (c % 2);
          if (col >= n_k || (causal && col > row + causal_offset)) x = -INFINITY;
        }
        s[nt][c] = x;
      }

    // Online softmax for the two rows this thread touches. A row's 64 scores are spread over the
    // 4 lanes of a quad (same g), so the reductions are two xor-shuffles (1, 2).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) tile_max = fmaxf(tile_max, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float m_new = fmaxf(m[r], tile_max);
      const float base = m_new == -INFINITY ? 0.0f : m_new;  // fully masked so far: avoid −∞ − (−∞)
      const float alpha = exp2f(m[r] - base);
      float tile_sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int c = 2 * r; c < 2 * r + 2; ++c) {
          s[nt][c] = exp2f(s[nt][c] - base);
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

    // O += P · V over the 64 keys = 4 k-steps of 16. The accumulator layout of n-tiles 2j and
    // 2j + 1 is the A-fragment layout of k-step j (see mma_bf16_m16n8k16), so P is only packed
    // to bf16 pairs. B[k][n] = V[key k][dim n] needs two consecutive *keys* per register: that is
    // ldmatrix .trans of V's rows. Matrices: (keys +0–7, dims +0–7), (keys +8–15, dims +0–7),
    // (keys +0–7, dims +8–15), (keys +8–15, dims +8–15) → b0, b1 of d-tile 2dp, then of 2dp + 1.
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t p_frag[4] = {pack_bf16x2(s[2 * j][0], s[2 * j][1]), pack_bf16x2(s[2 * j][2], s[2 * j][3]),
                                       pack_bf16x2(s[2 * j + 1][0], s[2 * j + 1][1]),
                                       pack_bf16x2(s[2 * j + 1][2], s[2 * j + 1][3])};
#pragma unroll
      for (int dp = 0; dp < kDimSteps; ++dp) {
        std::uint32_t b[4];
        ldmatrix_x4_trans(b, smem_address(vs + (j * 16 + lane % 8 + 8 * ((lane / 8) % 2)) * S + dp * 16 + 8 * (lane / 16)));
        mma_bf16_m16n8k16(o[2 * dp], p_frag, b[0], b[1]);
        mma_bf16_m16n8k16(o[2 * dp + 1], p_frag, b[2], b[3]);
      }
    }
    __syncthreads();  // this stage is free for the copy issued at the top of the next-but-one step
  }

  // O / ℓ, rounded to bf16; a fully masked row (ℓ = 0) is written as zeros.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = q0 + warp * kRowsPerWarp + g + 8 * r;
    if (row >= n_q) continue;
    const float inv_l = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
#pragma unroll
    for (int dt = 0; dt < kOutTiles; ++dt) {
      const std::uint32_t packed = pack_bf16x2(o[dt][2 * r] * inv_l, o[dt][2 * r + 1] * inv_l);
      *reinterpret_cast<std::uint32_t*>(out + static_cast<long long>(row) * D + 8 * dt + 2 * t) = packed;
    }
  }
}

template <int D>
void launch_flash_bf16_forward(bf16* out, const bf16* q, const bf16* k, const bf16* v, int bh, int n_q, int n_k,
                               bool causal, float scale, cudaStream_t stream) {
  constexpr int kSmemBytes = Bf16Dims<D>::kSmemBytes;  // 45 KB at D = 64, 85 KB at D = 128
  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_bf16_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       kSmemBytes));
  const dim3 grid(detail::ceil_div(n_q, kQueryTile), bh);
  flash_bf16_forward_kernel<D><<<grid, kThreads, kSmemBytes, stream>>>(out, q, k, v, n_q, n_k, causal,
                                                                        scale * detail::kLog2e);
  ATTN_CUDA_CHECK_LAUNCH("flash_bf16_forward_kernel");
}

}  // namespace

void attention_flash_bf16(__nv_bfloat16* out, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                          int bh, int n_q, int n_k, int d, bool causal, float scale, cudaStream_t stream) {
  constexpr const char* fn = "attention_flash_bf16";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  detail::require_tiled_d(fn, d);
  for (auto [name, p] : {std::pair<const char*, const void*>{"out", out}, {"q", q}, {"k", k}, {"v", v}})
    detail::require_device_pointer(fn, name, p);
  if (d == 64)
    launch_flash_bf16_forward<64>(out, q, k, v, bh, n_q, n_k, causal, scale, stream);
  else
    launch_flash_bf16_forward<128>(out, q, k, v, bh, n_q, n_k, causal, scale, stream);
}

}  // namespace attn::cuda
