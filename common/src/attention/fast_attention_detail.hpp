// Private to common/src/attention: what the fused attention's two paths share (fast_attention.cpp
// drives them; fast_attention_avx512.cpp holds the AVX-512 micro-kernels): tile geometry, aligned
// buffers, thread helpers, and the entry points of the AVX-512 path.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>
#include <vector>

#include "attention/qkv_check.hpp"

namespace attn::fast_detail {

using attn::detail::kNegInf;  // one −∞ for every attention source (a unity build sees them together)
constexpr float kLog2e = 1.4426950408889634f;
constexpr int kPanel = 32;   // keys per packed Kᵀ panel: two 16-float zmm registers
constexpr int kRowsQK = 12;  // rows of micro-kernel 1: 12 rows × 2 zmm = 24 accumulators
constexpr int kRowsPV = 6;   // rows of micro-kernel 2: 6 rows × 4 zmm = 24 accumulators
constexpr int kRowPad = 12;  // query blocks are padded to a multiple of lcm(12, 6)

inline std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

// 64-byte aligned float buffer (one zmm register per cache line).
struct FloatBuffer {
  float* p = nullptr;
  std::size_t n = 0;
  explicit FloatBuffer(std::size_t count) : n(count) {
    p = static_cast<float*>(std::aligned_alloc(64, round_up(std::max<std::size_t>(count, 16) * sizeof(float), 64)));
    if (!p) throw std::bad_alloc();
  }
  ~FloatBuffer() { std::free(p); }
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
};

struct Geometry {
  std::size_t n, s, d;
  std::size_t br, bc;      // block rows (multiple of 12), tile keys (multiple of 32)
  std::ptrdiff_t offset;   // causal: query i sees key j <= i + offset, offset = S − N
  bool causal;
  float qscale;            // scale · log2(e)
};

inline int resolve_threads(int threads) {
  if (threads > 0) return threads;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : int(hw);
}

// Runs fn(thread_index) on `threads` threads (the caller is thread 0).
template <class Fn>
void run_threads(int threads, Fn fn) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(fn, t);
  fn(0);
  for (auto& th : pool) th.join();
}

// Number of keys query row i may see in tile [j0, j0 + kc): a prefix of the tile.
inline std::ptrdiff_t visible_in_tile(const Geometry& g, std::size_t i, std::size_t j0, std::size_t kc) {
  if (!g.causal) return std::ptrdiff_t(kc);
  std::ptrdiff_t lim = std::ptrdiff_t(i) + g.offset - std::ptrdiff_t(j0) + 1;
  return std::clamp<std::ptrdiff_t>(lim, 0, std::ptrdiff_t(kc));
}

// Keys [0, kend) that any row of block [i0, i0 + rows) may see.
inline std::size_t keys_for_block(const Geometry& g, std::size_t i0, std::size_t rows) {
  if (!g.causal) return g.s;
  std::ptrdiff_t last = std::ptrdiff_t(i0 + rows - 1) + g.offset + 1;
  return std::size_t(std::clamp<std::ptrdiff_t>(last, 0, std::ptrdiff_t(g.s)));
}

// ---- the AVX-512 path (fast_attention_avx512.cpp) ---------------------------------------------
// True when this CPU has every instruction subset the micro-kernels are compiled for (avx512f,
// avx512dq, avx512vl, avx512bw and fma), checked at run time; false on other architectures.
bool cpu_has_avx512();
// Floats of working memory one thread of the AVX-512 path allocates.
std::size_t avx512_workspace_floats(const Geometry& g);
// One thread's share of the AVX-512 path: takes work items (head, query block) from `next` until
// `items` are done; out, q: (BH, N, d), k, v: (BH, S, d); `blocks` query blocks per head.
void avx512_worker(float* out, const float* q, const float* k, const float* v, const Geometry& g, std::size_t blocks,
                   std::size_t items, std::atomic<std::size_t>& next);

}  // namespace attn::fast_detail
