// Rung 5 — Hopper (sm_90a only): the forward of rung 3 rebuilt the FlashAttention-3 way (Shah et
// al. 2024). UNTESTED ON HARDWARE: this file compiles for sm_90a, but no GPU has run it yet, and
// the host emulator cannot run it (TMA, mbarrier transactions and wgmma are beyond it); until
// `scripts/cuda-check` passes on an H100/H200 treat every line below as a design, not a result.
//
// What changes against rung 3:
//   - Copies: the Tensor Memory Accelerator. One thread issues cp.async.bulk.tensor for a whole
//     K or V tile (described by a CUtensorMap made on the host); the copy engine writes it into
//     shared memory in the 128-byte swizzle wgmma reads, and signals an mbarrier with the byte
//     count when it lands. Rows past the end of a head are zero-filled by the copy engine (the
//     maps are 3-D: d, rows, heads), so no thread computes an address or a bound.
//   - Products: wgmma.mma_async, issued by a warpgroup (4 warps, 128 threads) for a 64-row slab:
//     S = Q·Kᵀ reads both operands from shared memory through matrix descriptors
//     (m64n128k16, K-major); O += P·V takes P from registers (the accumulator layout of S is
//     the A-register layout, as with mma.sync) and V from shared memory, transposed by the
//     instruction (imm-trans-b = 1: V is stored key-major, "MN-major" for B).
//   - Warp specialisation: warpgroup 0 is the producer (one thread issues every TMA copy, the
//     other warps leave; setmaxnreg gives its registers to the consumers), warpgroups 1 and 2
//     are consumers, 64 query rows each. Stages hand over through mbarriers: full_k/full_v
//     (the copy engine's transaction count completes them) and empty (256 consumer arrivals
//     free a stage for the next copy). Two stages of K and V.
//   - Ping-pong: the consumers take turns issuing their Q·Kᵀ through two named barriers (ids 1
//     and 2), so one warpgroup's softmax runs while the other's product occupies the tensor
//     cores.
//
// ptxas (CUDA 13.0, sm_90a): 168 registers at launch (the cap of 384 threads), no spills; the
// consumers run under setmaxnreg 240, the producer under 24.
//
// Tiling: Br = 128 query rows per block (2 consumer warpgroups × 64), Bc = 128 keys per tile.
// Grid (⌈n_q / 128⌉, BH), 384 threads. Causal masking, the −∞ rows and lse as in rung 3.
//
// Shared memory (1024-byte aligned, each tile stored as D/64 panels of rows × 64 bf16 = 128-byte
// rows, 128-byte swizzle — the TMA box's inner extent is one panel): Q 128 × D, K and V 2 stages
// × 128 × D, 7 mbarriers; 80 KB + 1 KB alignment slack at D = 64, 160 KB + 1 KB at D = 128.
//
// Descriptors (PTX ISA "Matrix Descriptor Format"): start address >> 4 (bits 0–13), leading
// byte offset >> 4 (16–29), stride byte offset >> 4 (32–45), swizzle mode (62–63, 1 = 128 B).
//   Q, K (K-major): SBO = 1024 (8 rows × 128 B), LBO unused (1); the 16-wide k-step kk of a panel
//   starts 32·(kk mod 4) bytes into the panel's rows, panel kk / 4.
//   V (MN-major):   SBO = 1024 (8 keys × 128 B), LBO = one panel (Bc × 128 B): the next 64
//   columns of d; the k-step kk (16 keys) starts 16·128·kk bytes in.
// Fragments (per warp w of a warpgroup, g = lane / 4, t = lane % 4): accumulator register 4i + c
// of an m64nN result is row 16w + g + 8·(c / 2), column 8i + 2t + c % 2; the A registers of k-step
// kk are the packed accumulator registers 8kk … 8kk + 7 (mma_bf16.cuh's table, per 16 rows).
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>

#include "attn/cuda/attention.hpp"
#include "attn/cuda/buffer.hpp"
#include "launch_checks.hpp"

namespace attn::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kConsumers = 2;                      // consumer warpgroups
constexpr int kHopperThreads = 128 * (1 + kConsumers);
constexpr int kHopperQueryTile = 64 * kConsumers;  // Br = 128
constexpr int kHopperKeyTile = 128;                // Bc = 128
constexpr int kHopperStages = 2;
constexpr int kPanelCols = 64;                     // bf16 per 128-byte swizzled row

template <int D>
struct HopperDims {
  static constexpr int kPanels = D / kPanelCols;
  static constexpr int kQPanelBytes = kHopperQueryTile * 128;
  static constexpr int kKvPanelBytes = kHopperKeyTile * 128;
  static constexpr int kQBytes = kPanels * kQPanelBytes;
  static constexpr int kKvBytes = kPanels * kKvPanelBytes;  // one K or V tile
  static constexpr int kBarrierOffset = kQBytes + 2 * kHopperStages * kKvBytes;
  static constexpr int kBarriers = 1 + 3 * kHopperStages;    // full_q, full_k[2], full_v[2], empty[2]
  static constexpr int kSmemBytes = kBarrierOffset + 8 * kBarriers + 1024;  // + alignment slack
};

// Tells the host whether this binary holds sm_90a code for the device it runs on: compiled for
// plain sm_90 (or anything else) the kernel below is empty, and the launcher must refuse.
__global__ void hopper_probe_kernel(int* has_sm90a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *has_sm90a = 1;
#else
  *has_sm90a = 0;
#endif
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (PTX ISA "Parallel Synchronization and Communication Instructions: mbarrier") ----
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// One arrival that also announces `bytes` of copy-engine transactions for the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spin until the phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// ---- TMA: one 3-D box (d panel, rows, head) into shared memory, completing on `bar` ----
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

// ---- named barriers (ids 1, 2: the consumers' turns; id 0 is __syncthreads) ----
// Immediate ids, so that ptxas reserves only barriers 0–2 (a register id makes it reserve all 16).
template <int Id>
__device__ __forceinline__ void named_sync_n() {
  asm volatile("bar.sync %0, 256;\n" ::"n"(Id) : "memory");
}
template <int Id>
__device__ __forceinline__ void named_arrive_n() {
  asm volatile("bar.arrive %0, 256;\n" ::"n"(Id) : "memory");
}
// Consumer cw's turn (barrier 1 + cw): wait for it, or hand it over.
__device__ __forceinline__ void wait_turn(int cw) { cw == 0 ? named_sync_n<1>() : named_sync_n<2>(); }
__device__ __forceinline__ void give_turn(int cw) { cw == 0 ? named_arrive_n<1>() : named_arrive_n<2>(); }

// ---- wgmma ----
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of accumulator registers across the wgmma
// issue and wait (it cannot see that the asynchronous instruction owns them until the wait).
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// Matrix descriptor of a 128-byte-swizzled operand in shared memory (format at the top).
__device__ __forceinline__ std::uint64_t smem_descriptor(std::uint32_t address, std::uint32_t lbo_bytes,
                                                         std::uint32_t sbo_bytes) {
  std::uint64_t desc = (address & 0x3FFFFu) >> 4;
  desc |= static_cast<std::uint64_t>((lbo_bytes >> 4) & 0x3FFFu) << 16;
  desc |= static_cast<std::uint64_t>((sbo_bytes >> 4) & 0x3FFFu) << 32;
  desc |= static_cast<std::uint64_t>(1) << 62;  // 128-byte swizzle
  return desc;
}

// d (64 × N FP32, accumulated) += A (64 × 16) · B (16 × N). "ss": A and B from shared memory,
// both K-major. "rs": A from registers (4 per thread), B from shared memory, MN-major (transposed
// by the instruction). scale-d = 1 always: the caller zeroes d when it wants a fresh product.
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[64], const std::uint32_t (&a)[4], std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  std::uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// Shape contract as rung 3 (q, k, v through the tensor maps): out (n_q, D) bf16, lse (n_q).
template <int D>
__global__ void __launch_bounds__(kHopperThreads, 1)
flash_hopper_forward_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                            const __grid_constant__ CUtensorMap tm_v, bf16* __restrict__ out, float* __restrict__ lse,
                            int n_q, int n_k, bool causal, float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Dm = HopperDims<D>;
  constexpr int kChunks = kHopperKeyTile / 8;  // 8-column chunks of S: 16
  constexpr int kOutChunks = D / 8;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;  // swizzled tiles need 1024-byte alignment
  const std::uint32_t q_s = base;
  const std::uint32_t k_s = base + Dm::kQBytes;                               // + stage · kKvBytes
  const std::uint32_t v_s = base + Dm::kQBytes + kHopperStages * Dm::kKvBytes;  // + stage · kKvBytes
  const std::uint32_t bars = base + Dm::kBarrierOffset;
  const std::uint32_t full_q = bars;
  auto full_k = [&](int st) { return bars + 8u * (1 + st); };
  auto full_v = [&](int st) { return bars + 8u * (1 + kHopperStages + st); };
  auto empty = [&](int st) { return bars + 8u * (1 + 2 * kHopperStages + st); };

  const int wg = threadIdx.x / 128;  // 0: producer, 1 and 2: consumers
  const int head = blockIdx.y;
  const int q0 = (gridDim.x - 1 - blockIdx.x) * kHopperQueryTile;  // longest causal blocks first
  const int causal_offset = n_k - n_q;
  const int kv_end = causal ? min(n_k, q0 + kHopperQueryTile + causal_offset) : n_k;
  const int n_tiles = kv_end > 0 ? (kv_end + kHopperKeyTile - 1) / kHopperKeyTile : 0;

  if (threadIdx.x == 0) {
    mbar_init(full_q, 1);
    for (int st = 0; st < kHopperStages; ++st) {
      mbar_init(full_k(st), 1);
      mbar_init(full_v(st), 1);
      mbar_init(empty(st), 128 * kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    // Producer: 24 registers are plenty for one thread's loop of copies.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
    if (threadIdx.x == 0) {
      mbar_arrive_expect_tx(full_q, Dm::kQBytes);
      for (int p = 0; p < Dm::kPanels; ++p) tma_load_3d(q_s + p * Dm::kQPanelBytes, &tm_q, p * kPanelCols, q0, head, full_q);
      for (int j = 0; j < n_tiles; ++j) {
        const int st = j % kHopperStages;
        // Stage st last held tile j − 2: wait until all 256 consumer threads released it.
        if (j >= kHopperStages) mbar_wait(empty(st), ((j / kHopperStages) - 1) & 1);
        mbar_arrive_expect_tx(full_k(st), Dm::kKvBytes);
        for (int p = 0; p < Dm::kPanels; ++p)
          tma_load_3d(k_s + st * Dm::kKvBytes + p * Dm::kKvPanelBytes, &tm_k, p * kPanelCols, j * kHopperKeyTile, head,
                      full_k(st));
        mbar_arrive_expect_tx(full_v(st), Dm::kKvBytes);
        for (int p = 0; p < Dm::kPanels; ++p)
          tma_load_3d(v_s + st * Dm::kKvBytes + p * Dm::kKvPanelBytes, &tm_v, p * kPanelCols, j * kHopperKeyTile, head,
                      full_v(st));
      }
    }
    return;
  }

  // Consumers.
  asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
  const int cw = wg - 1;                      // consumer 0 or 1: query rows q0 + 64·cw …
  const int warp_in_wg = (threadIdx.x / 32) % 4;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int row0 = q0 + 64 * cw + 16 * warp_in_wg + g;  // this thread's rows: row0 and row0 + 8

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY};  // raw running max (no scale), as rung 3
  float l[2] = {0.0f, 0.0f};

  if (cw == 1) give_turn(0);  // consumer 0 issues first
  mbar_wait(full_q, 0);

  for (int j = 0; j < n_tiles; ++j) {
    const int st = j % kHopperStages;
    const std::uint32_t parity = (j / kHopperStages) & 1;
    const int kv0 = j * kHopperKeyTile;
    mbar_wait(full_k(st), parity);

    // S = Q_cw · K_jᵀ (64 × 128), issued in turn with the other consumer.
    float s[kHopperKeyTile / 2];
#pragma unroll
    for (int i = 0; i < kHopperKeyTile / 2; ++i) s[i] = 0.0f;
    wait_turn(cw);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint32_t in_panel = 32u * (kk % 4);
      const std::uint64_t da = smem_descriptor(q_s + (kk / 4) * Dm::kQPanelBytes + cw * 64 * 128 + in_panel, 16, 1024);
      const std::uint64_t db = smem_descriptor(k_s + st * Dm::kKvBytes + (kk / 4) * Dm::kKvPanelBytes + in_panel, 16, 1024);
      wgmma_m64n128k16_ss(s, da, db);
    }
    wgmma_commit();
    give_turn(1 - cw);  // the other consumer's turn
    wgmma_wait<0>();
    fence_registers(s);

    // Mask and online softmax (rows row0 and row0 + 8; a row's 128 scores live in one quad).
    const bool needs_mask = (kv0 + kHopperKeyTile > n_k) || (causal && kv0 + kHopperKeyTile - 1 > q0 + causal_offset);
    if (needs_mask) {
#pragma unroll
      for (int i = 0; i < kChunks; ++i)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          const int row = row0 + 8 * (c / 2);
          const int col = kv0 + 8 * i + 2 * t + (c % 2);
          if (col >= n_k || (causal && col > row + causal_offset)) s[4 * i + c] = -INFINITY;
        }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int i = 0; i < kChunks; ++i) tile_max = fmaxf(tile_max, fmaxf(s[4 * i + 2 * r], s[4 * i + 2 * r + 1]));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 2));
      const float m_new = fmaxf(m[r], tile_max);
      const float base_r = m_new == -INFINITY ? 0.0f : m_new * scale_log2;
      const float alpha = exp2f(m[r] * scale_log2 - base_r);
      float tile_sum = 0.0f;
#pragma unroll
      for (int i = 0; i < kChunks; ++i)
#pragma unroll
        for (int c = 2 * r; c < 2 * r + 2; ++c) {
          s[4 * i + c] = exp2f(fmaf(s[4 * i + c], scale_log2, -base_r));
          tile_sum += s[4 * i + c];
        }
      tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
      tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 2);
      l[r] = l[r] * alpha + tile_sum;
      m[r] = m_new;
#pragma unroll
      for (int i = 0; i < kOutChunks; ++i) {
        o[4 * i + 2 * r] *= alpha;
        o[4 * i + 2 * r + 1] *= alpha;
      }
    }

    // O += P · V_j: P from registers, 8 k-steps of 16 keys.
    std::uint32_t p[kHopperKeyTile / 16][4];
#pragma unroll
    for (int kk = 0; kk < kHopperKeyTile / 16; ++kk)
#pragma unroll
      for (int a = 0; a < 4; ++a) p[kk][a] = pack_bf16x2(s[8 * kk + 2 * a], s[8 * kk + 2 * a + 1]);
    mbar_wait(full_v(st), parity);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kHopperKeyTile / 16; ++kk) {
      const std::uint64_t dv = smem_descriptor(v_s + st * Dm::kKvBytes + kk * 16 * 128, Dm::kKvPanelBytes, 1024);
      if constexpr (D == 128)
        wgmma_m64n128k16_rs(o, p[kk], dv);
      else
        wgmma_m64n64k16_rs(o, p[kk], dv);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(o);
    mbar_arrive(empty(st));  // this thread is done with stage st
  }
  if (cw == 0) wait_turn(0);  // consumer 1's last hand-over, so no arrival is left pending

  // Output and lse, as rung 3 (O / ℓ in bf16, zeros for rows that saw no key).
  out += static_cast<long long>(head) * n_q * D;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = row0 + 8 * r;
    if (row >= n_q) continue;
    const float inv_l = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
#pragma unroll
    for (int i = 0; i < kOutChunks; ++i) {
      const std::uint32_t packed = pack_bf16x2(o[4 * i + 2 * r] * inv_l, o[4 * i + 2 * r + 1] * inv_l);
      *reinterpret_cast<std::uint32_t*>(out + static_cast<long long>(row) * D + 8 * i + 2 * t) = packed;
    }
    if (lse != nullptr && t == 0)
      lse[static_cast<long long>(head) * n_q + row] =
          l[r] > 0.0f ? (m[r] * scale_log2 + log2f(l[r])) * 0.6931471805599453f : -INFINITY;
  }
#else
  (void)tm_q, (void)tm_k, (void)tm_v, (void)out, (void)lse, (void)n_q, (void)n_k, (void)causal, (void)scale_log2;
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// ---- host side ----

// cuTensorMapEncodeTiled is a driver API function; the runtime hands out its address, so the
// library needs no link against libcuda.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    ATTN_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw std::runtime_error("attention_flash_hopper: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A 3-D map over a (BH, rows, d) bf16 tensor: dims innermost first (d, rows, heads); boxes of
// 64 columns (one 128-byte swizzled panel) × box_rows rows × 1 head; out-of-range rows read as 0.
CUtensorMap make_tensor_map(const bf16* base, int bh, int rows, int d, int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(bh)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * sizeof(bf16),
                                 static_cast<cuuint64_t>(rows) * d * sizeof(bf16)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kPanelCols), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult rc = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<bf16*>(base), dims,
                                           strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS)
    throw std::runtime_error("attention_flash_hopper: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(rc) +
                             ")");
  return map;
}

template <int D>
void launch_flash_hopper_forward(bf16* out, float* lse, const bf16* q, const bf16* k, const bf16* v, int bh, int n_q,
                                 int n_k, bool causal, float scale, cudaStream_t stream) {
  constexpr int kSmemBytes = HopperDims<D>::kSmemBytes;
  const CUtensorMap tm_q = make_tensor_map(q, bh, n_q, D, kHopperQueryTile);
  const CUtensorMap tm_k = make_tensor_map(k, bh, n_k, D, kHopperKeyTile);
  const CUtensorMap tm_v = make_tensor_map(v, bh, n_k, D, kHopperKeyTile);
  ATTN_CUDA_CHECK(cudaFuncSetAttribute(flash_hopper_forward_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       kSmemBytes));
  const dim3 grid(detail::ceil_div(n_q, kHopperQueryTile), bh);
  flash_hopper_forward_kernel<D><<<grid, kHopperThreads, kSmemBytes, stream>>>(tm_q, tm_k, tm_v, out, lse, n_q, n_k,
                                                                               causal, scale * detail::kLog2e);
  ATTN_CUDA_CHECK_LAUNCH("flash_hopper_forward_kernel");
}

}  // namespace

std::string attention_flash_hopper_unavailable() {
  static std::once_flag once;
  static std::string reason;
  std::call_once(once, [] {
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
      cudaGetLastError();
      reason = "no CUDA device";
      return;
    }
    if (prop.major != 9 || prop.minor != 0) {
      reason = std::string("needs compute capability 9.0 (Hopper), the device is ") + prop.name + " (sm_" +
               std::to_string(prop.major * 10 + prop.minor) + ")";
      return;
    }
    DeviceBuffer<int> flag(1);
    hopper_probe_kernel<<<1, 1>>>(flag.get());
    if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
      reason = "the probe kernel did not run (no code for this device in the binary?)";
      return;
    }
    if (flag.download()[0] != 1) reason = "this build has no sm_90a code (configure with -DCMAKE_CUDA_ARCHITECTURES=90a)";
  });
  return reason;
}

void attention_flash_hopper(__nv_bfloat16* out, float* lse, const __nv_bfloat16* q, const __nv_bfloat16* k,
                            const __nv_bfloat16* v, int bh, int n_q, int n_k, int d, bool causal, float scale,
                            cudaStream_t stream) {
  constexpr const char* fn = "attention_flash_hopper";
  detail::require_sizes(fn, bh, n_q, n_k, d);
  detail::require_tiled_d(fn, d);
  detail::require_positive_scale(fn, scale);
  for (auto [name, p] : {std::pair<const char*, const void*>{"out", out}, {"q", q}, {"k", k}, {"v", v}})
    detail::require_device_pointer(fn, name, p);
  const std::string why = attention_flash_hopper_unavailable();
  if (!why.empty()) throw std::runtime_error(std::string(fn) + ": " + why);
  if (d == 64)
    launch_flash_hopper_forward<64>(out, lse, q, k, v, bh, n_q, n_k, causal, scale, stream);
  else
    launch_flash_hopper_forward<128>(out, lse, q, k, v, bh, n_q, n_k, causal, scale, stream);
}

}  // namespace attn::cuda
