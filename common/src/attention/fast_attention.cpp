// Fused, tiled, multi-threaded attention forward (see attn/attention/fast_attention.hpp).
//
// Per thread, per (head, query block of Br rows):
//   Qs  = Q_block · scale · log2(e)            (so scores are in base 2 and exp becomes exp2)
//   for each key tile j0 .. j0+Bc (causal: only tiles left of the diagonal):
//     S   = Qs · Kᵀ_tile                        (micro-kernel 1, keeps each row's max while storing)
//     m'  = max(m, rowmax S);  α = 2^(m − m');  P = 2^(S − m');  ℓ = α·ℓ + Σ P   (online softmax)
//     Oacc = α ⊙ Oacc + P · V_tile              (micro-kernel 2, the α rescale folded into its loads)
//   O_block = Oacc / ℓ
// Kᵀ is packed once per head into panels of 32 keys × d, the layout micro-kernel 1 streams.
#include "attn/attention/fast_attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__x86_64__)
// GCC 12's _mm512_reduce_* and mask intrinsics trip -Wmaybe-uninitialized inside its own header.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define ATTN_HAVE_X86 1
#else
#define ATTN_HAVE_X86 0
#endif

#include "attn/tensor/blas.hpp"
#include "attn/tensor/openblas.hpp"

extern "C" int openblas_get_num_threads(void);

namespace attn {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kLog2e = 1.4426950408889634f;
constexpr int kPanel = 32;   // keys per packed Kᵀ panel: two 16-float zmm registers
constexpr int kRowsQK = 12;  // rows of micro-kernel 1: 12 rows × 2 zmm = 24 accumulators
constexpr int kRowsPV = 6;   // rows of micro-kernel 2: 6 rows × 4 zmm = 24 accumulators
constexpr int kRowPad = 12;  // query blocks are padded to a multiple of lcm(12, 6)

std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

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

int resolve_threads(int threads) {
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

// ----------------------------------------------------------------------------------------------
// Portable path: the same loop with one single-threaded OpenBLAS call per tile product.

struct PortableWork {
  FloatBuffer qs, st, oacc, m, l;
  PortableWork(const Geometry& g)
      : qs(g.br * g.d), st(g.br * g.bc), oacc(g.br * g.d), m(g.br), l(g.br) {}
};

void portable_block(float* out, const float* q, const float* k, const float* v, const Geometry& g,
                    std::size_t i0, PortableWork& w) {
  const std::size_t d = g.d, rows = std::min(g.br, g.n - i0), kend = keys_for_block(g, i0, rows);
  for (std::size_t r = 0; r < rows * d; ++r) w.qs.p[r] = q[i0 * d + r] * g.qscale;
  std::fill(w.oacc.p, w.oacc.p + rows * d, 0.0f);
  std::fill(w.m.p, w.m.p + rows, kNegInf);
  std::fill(w.l.p, w.l.p + rows, 0.0f);
  for (std::size_t j0 = 0; j0 < kend; j0 += g.bc) {
    const std::size_t kc = std::min(g.bc, g.s - j0);
    // S = Qs · K_tileᵀ   (rows × kc), Kᵀ by flag
    sgemm(Op::N, Op::T, int(rows), int(kc), int(d), 1.0f, w.qs.p, int(d), k + j0 * d, int(d), 0.0f, w.st.p, int(g.bc));
    for (std::size_t r = 0; r < rows; ++r) {
      float* srow = w.st.p + r * g.bc;
      const std::ptrdiff_t lim = visible_in_tile(g, i0 + r, j0, kc);
      float tile_max = kNegInf;
      for (std::ptrdiff_t j = 0; j < lim; ++j) tile_max = std::max(tile_max, srow[j]);
      const float m_new = std::max(w.m.p[r], tile_max);
      const float m_use = m_new == kNegInf ? 0.0f : m_new;  // nothing visible yet: keep zeros
      const float alpha = w.m.p[r] == kNegInf ? 0.0f : std::exp2(w.m.p[r] - m_new);
      float sum = 0.0f;
      for (std::ptrdiff_t j = 0; j < lim; ++j) sum += (srow[j] = std::exp2(srow[j] - m_use));
      for (std::size_t j = std::size_t(lim); j < kc; ++j) srow[j] = 0.0f;
      w.l.p[r] = w.l.p[r] * alpha + sum;
      w.m.p[r] = m_new;
      float* orow = w.oacc.p + r * d;
      for (std::size_t c = 0; c < d; ++c) orow[c] *= alpha;
    }
    // Oacc += P · V_tile   (rows × d)
    sgemm(Op::N, Op::N, int(rows), int(d), int(kc), 1.0f, w.st.p, int(g.bc), v + j0 * d, int(d), 1.0f, w.oacc.p, int(d));
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const float inv = w.l.p[r] > 0.0f ? 1.0f / w.l.p[r] : 0.0f;  // a row that sees no key: zeros
    for (std::size_t c = 0; c < d; ++c) out[(i0 + r) * d + c] = w.oacc.p[r * d + c] * inv;
  }
}

// ----------------------------------------------------------------------------------------------
// AVX-512 path.

#if ATTN_HAVE_X86
#define ATTN_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))

// 2^x for x <= 0 (and -inf -> 0): x = n + f with n = round(x), |f| <= 1/2; 2^f by a degree-6
// polynomial (Cephes exp2f's coefficients, relative error ~2e-7); scalef multiplies by 2^n and
// flushes to 0 for n = -1000, which is where -inf (masked keys) is clamped to.
ATTN_AVX512 inline __m512 exp2_avx512(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-1000.0f));
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, n);
  __m512 p = _mm512_set1_ps(1.535336188319500e-4f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.339887440266574e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.618437357674640e-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550332471162809e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402264791363012e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931472028550421e-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// Pack Kᵀ of one head: panel t holds keys [32t, 32t + 32) as d rows of 32 floats (zeros past S).
ATTN_AVX512 void pack_kt(float* kt, const float* k, std::size_t s, std::size_t d) {
  const std::size_t panels = round_up(s, kPanel) / kPanel;
  for (std::size_t t = 0; t < panels; ++t) {
    float* dst = kt + t * d * kPanel;
    const std::size_t keys = std::min<std::size_t>(kPanel, s - t * kPanel);
    if (keys < std::size_t(kPanel)) std::fill(dst, dst + d * kPanel, 0.0f);
    for (std::size_t c = 0; c < keys; ++c) {
      const float* src = k + (t * kPanel + c) * d;
      for (std::size_t p = 0; p < d; ++p) dst[p * kPanel + c] = src[p];
    }
  }
}

// (The micro-kernels are noinline so that a profiler shows each one; a call does >= 6k FMAs.)
// Micro-kernel 1: S[0:12, 0:32] = Qs[0:12, :] · panel (d × 32), and vmax[r] = max(vmax[r], S row)
// as a 16-lane vector per row (reduced once per tile, in the softmax pass).
ATTN_AVX512 __attribute__((noinline)) void qk_kernel(float* s, std::size_t lds, const float* qs, std::size_t d, const float* panel,
                                  float* vmax) {
  __m512 acc[kRowsQK][2];
  #pragma GCC unroll 16
  for (int r = 0; r < kRowsQK; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (std::size_t p = 0; p < d; ++p) {
    const __m512 b0 = _mm512_load_ps(panel + p * kPanel), b1 = _mm512_load_ps(panel + p * kPanel + 16);
    #pragma GCC unroll 16
    for (int r = 0; r < kRowsQK; ++r) {
      const __m512 a = _mm512_set1_ps(qs[r * d + p]);
      acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
    }
  }
  #pragma GCC unroll 16
  for (int r = 0; r < kRowsQK; ++r) {
    _mm512_store_ps(s + r * lds, acc[r][0]);
    _mm512_store_ps(s + r * lds + 16, acc[r][1]);
    const __m512 mx = _mm512_max_ps(acc[r][0], acc[r][1]);
    _mm512_store_ps(vmax + r * 16, _mm512_max_ps(_mm512_load_ps(vmax + r * 16), mx));
  }
}

// Micro-kernel 2: Oacc[0:6, cols] = α ⊙ Oacc[0:6, cols] + P[0:6, 0:kc] · V[0:kc, cols], for C
// column chunks of 16 starting at `col`; the last chunk may be partial (lane mask `last`).
template <int C>
ATTN_AVX512 __attribute__((noinline)) void pv_kernel(float* oacc, std::size_t ldo, const float* alpha, const float* p,
                                  std::size_t ldp, const float* v, std::size_t ldv, std::size_t kc,
                                  __mmask16 last) {
  __m512 acc[kRowsPV][C];
  #pragma GCC unroll 16
  for (int r = 0; r < kRowsPV; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    #pragma GCC unroll 16
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_mul_ps(a, _mm512_load_ps(oacc + r * ldo + c * 16));
  }
  for (std::size_t j = 0; j < kc; ++j) {
    __m512 vv[C];
    #pragma GCC unroll 16
    for (int c = 0; c < C; ++c)
      vv[c] = c == C - 1 ? _mm512_maskz_loadu_ps(last, v + j * ldv + c * 16) : _mm512_loadu_ps(v + j * ldv + c * 16);
    #pragma GCC unroll 16
    for (int r = 0; r < kRowsPV; ++r) {
      const __m512 a = _mm512_set1_ps(p[r * ldp + j]);
      #pragma GCC unroll 16
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(a, vv[c], acc[r][c]);
    }
  }
  #pragma GCC unroll 16
  for (int r = 0; r < kRowsPV; ++r)
    #pragma GCC unroll 16
    for (int c = 0; c < C; ++c) _mm512_store_ps(oacc + r * ldo + c * 16, acc[r][c]);
}

// Softmax pass over one row of a tile: update m, ℓ; overwrite S with P (zeros past `lim`);
// return α = 2^(m_old − m_new). `vmax` is the row's 16-lane max from micro-kernel 1, valid only
// when every key of the tile is visible (full = true); otherwise the max is taken here.
ATTN_AVX512 __attribute__((noinline)) float softmax_tile_row(float* srow, std::size_t kc, std::ptrdiff_t lim, bool full,
                                          const float* vmax, float& m, float& l) {
  float tile_max;
  if (full) {
    tile_max = _mm512_reduce_max_ps(_mm512_load_ps(vmax));
  } else {
    __m512 mx = _mm512_set1_ps(kNegInf);
    for (std::ptrdiff_t j = 0; j < lim; j += 16) {
      const __mmask16 km = std::ptrdiff_t(lim - j) >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (lim - j)) - 1);
      mx = _mm512_mask_max_ps(mx, km, mx, _mm512_load_ps(srow + j));
    }
    tile_max = _mm512_reduce_max_ps(mx);
  }
  const float m_new = std::max(m, tile_max);
  const float m_use = m_new == kNegInf ? 0.0f : m_new;
  const float alpha = m == kNegInf ? 0.0f : std::exp2(m - m_new);
  const __m512 vm = _mm512_set1_ps(m_use);
  __m512 vsum = _mm512_setzero_ps();
  for (std::size_t j = 0; j < kc; j += 16) {
    const std::ptrdiff_t left = lim - std::ptrdiff_t(j);
    const __mmask16 km = left >= 16 ? __mmask16(0xFFFF) : left <= 0 ? __mmask16(0) : __mmask16((1u << left) - 1);
    const __m512 pj = _mm512_maskz_mov_ps(km, exp2_avx512(_mm512_sub_ps(_mm512_load_ps(srow + j), vm)));
    _mm512_store_ps(srow + j, pj);
    vsum = _mm512_add_ps(vsum, pj);
  }
  l = l * alpha + _mm512_reduce_add_ps(vsum);
  m = m_new;
  return alpha;
}

struct Avx512Work {
  std::size_t dp;  // d rounded up to 16
  FloatBuffer kt, qs, st, oacc, vmax, m, l, alpha;
  std::size_t packed_head = std::size_t(-1);
  Avx512Work(const Geometry& g)
      : dp(round_up(g.d, 16)),
        kt(round_up(g.s, kPanel) * g.d),
        qs(g.br * g.d),
        st(g.br * g.bc),
        oacc(g.br * round_up(g.d, 16)),
        vmax(g.br * 16),
        m(g.br),
        l(g.br),
        alpha(g.br) {}
};

ATTN_AVX512 void avx512_block(float* out, const float* q, const float* v, const Geometry& g, std::size_t i0,
                              Avx512Work& w) {
  const std::size_t d = g.d, dp = w.dp, rows = std::min(g.br, g.n - i0);
  const std::size_t rows_qk = round_up(rows, kRowsQK), rows_pv = round_up(rows, kRowsPV);
  const std::size_t kend = keys_for_block(g, i0, rows);
  // Qs = Q_block · scale · log2(e), padded with zero rows up to a multiple of 12.
  for (std::size_t r = 0; r < rows * d; ++r) w.qs.p[r] = q[i0 * d + r] * g.qscale;
  std::fill(w.qs.p + rows * d, w.qs.p + rows_qk * d, 0.0f);
  std::fill(w.oacc.p, w.oacc.p + rows_pv * dp, 0.0f);
  std::fill(w.m.p, w.m.p + rows_pv, kNegInf);
  std::fill(w.l.p, w.l.p + rows_pv, 0.0f);
  std::fill(w.alpha.p, w.alpha.p + rows_pv, 0.0f);
  const __mmask16 last = d % 16 == 0 ? __mmask16(0xFFFF) : __mmask16((1u << (d % 16)) - 1);
  for (std::size_t j0 = 0; j0 < kend; j0 += g.bc) {
    const std::size_t kc = std::min(g.bc, g.s - j0), panels = round_up(kc, kPanel) / kPanel;
    // 1. S = Qs · Kᵀ_tile, with each row's running max vector.
    for (std::size_t r = 0; r < rows_qk * 16; ++r) w.vmax.p[r] = kNegInf;
    for (std::size_t t = 0; t < panels; ++t) {
      const float* panel = w.kt.p + (j0 / kPanel + t) * d * kPanel;
      for (std::size_t r0 = 0; r0 < rows_qk; r0 += kRowsQK)
        qk_kernel(w.st.p + r0 * g.bc + t * kPanel, g.bc, w.qs.p + r0 * d, d, panel, w.vmax.p + r0 * 16);
    }
    // 2. Online softmax, row by row: P overwrites S in place (the layout micro-kernel 2 reads).
    const bool tile_full = kc == panels * kPanel && visible_in_tile(g, i0, j0, kc) == std::ptrdiff_t(kc);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::ptrdiff_t lim = visible_in_tile(g, i0 + r, j0, kc);
      w.alpha.p[r] = softmax_tile_row(w.st.p + r * g.bc, kc, lim, tile_full, w.vmax.p + r * 16, w.m.p[r], w.l.p[r]);
    }
    for (std::size_t r = rows; r < rows_pv; ++r) std::fill(w.st.p + r * g.bc, w.st.p + r * g.bc + kc, 0.0f);
    // 3. Oacc = α ⊙ Oacc + P · V_tile, four column chunks (64 floats) at a time.
    const float* vt = v + j0 * d;
    for (std::size_t r0 = 0; r0 < rows_pv; r0 += kRowsPV) {
      float* o = w.oacc.p + r0 * dp;
      const float* pr = w.st.p + r0 * g.bc;
      const float* al = w.alpha.p + r0;
      std::size_t c0 = 0;
      for (; c0 + 64 <= dp; c0 += 64)
        pv_kernel<4>(o + c0, dp, al, pr, g.bc, vt + c0, d, kc, c0 + 64 == dp ? last : __mmask16(0xFFFF));
      switch ((dp - c0) / 16) {
        case 3: pv_kernel<3>(o + c0, dp, al, pr, g.bc, vt + c0, d, kc, last); break;
        case 2: pv_kernel<2>(o + c0, dp, al, pr, g.bc, vt + c0, d, kc, last); break;
        case 1: pv_kernel<1>(o + c0, dp, al, pr, g.bc, vt + c0, d, kc, last); break;
        default: break;
      }
    }
  }
  // O = Oacc / ℓ (a row that sees no key has ℓ = 0 and gets zeros).
  for (std::size_t r = 0; r < rows; ++r) {
    const float inv = w.l.p[r] > 0.0f ? 1.0f / w.l.p[r] : 0.0f;
    for (std::size_t c = 0; c < d; ++c) out[(i0 + r) * d + c] = w.oacc.p[r * dp + c] * inv;
  }
}
#endif  // ATTN_HAVE_X86

bool cpu_has_avx512() {
#if ATTN_HAVE_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

bool use_avx512(const FastAttentionConfig& cfg, std::size_t d) {
  if (cfg.isa == FastIsa::Portable) return false;
  const bool ok = cpu_has_avx512() && d <= 256;
  if (cfg.isa == FastIsa::Avx512 && !ok)
    throw std::runtime_error("fast_attention: the AVX-512 path needs an AVX-512F/DQ/BW/VL CPU and d <= 256");
  return ok;
}

Geometry make_geometry(std::size_t n, std::size_t s, std::size_t d, const FastAttentionConfig& cfg) {
  Geometry g;
  g.n = n;
  g.s = s;
  g.d = d;
  g.br = cfg.block_q > 0 ? round_up(std::size_t(cfg.block_q), kRowPad) : 96;
  g.bc = cfg.block_k > 0 ? round_up(std::size_t(cfg.block_k), kPanel) : 256;
  g.offset = std::ptrdiff_t(s) - std::ptrdiff_t(n);
  g.causal = cfg.causal;
  const float scale = cfg.scale > 0.0f ? cfg.scale : 1.0f / std::sqrt(float(d));
  g.qscale = scale * kLog2e;
  return g;
}

}  // namespace

bool fast_attention_avx512_available() { return cpu_has_avx512(); }

std::string fast_attention_path(const FastAttentionConfig& cfg, std::size_t d) {
  return use_avx512(cfg, d) ? "avx512" : "portable";
}

std::size_t fast_attention_workspace_bytes(std::size_t n, std::size_t s, std::size_t d, const FastAttentionConfig& cfg) {
  const Geometry g = make_geometry(n, s, d, cfg);
  const std::size_t threads = std::size_t(resolve_threads(cfg.threads));
  std::size_t floats;
  if (use_avx512(cfg, d)) {
    const std::size_t dp = round_up(d, 16);
    floats = round_up(s, kPanel) * d + g.br * d + g.br * g.bc + g.br * dp + g.br * 16 + 3 * g.br;
  } else {
    floats = g.br * d + g.br * g.bc + g.br * d + 2 * g.br;
  }
  return threads * floats * sizeof(float);
}

void fast_attention_forward(float* out, const float* q, const float* k, const float* v, std::size_t bh,
                            std::size_t n, std::size_t s, std::size_t d, const FastAttentionConfig& cfg) {
  if (bh == 0 || n == 0 || d == 0) return;
  if (s == 0) {  // nothing to attend to
    std::fill(out, out + bh * n * d, 0.0f);
    return;
  }
  const Geometry g = make_geometry(n, s, d, cfg);
  const std::size_t blocks = (n + g.br - 1) / g.br, items = bh * blocks;
  const int threads = int(std::min<std::size_t>(std::size_t(resolve_threads(cfg.threads)), items));
  // Work items (head, block) in head-major order, taken one at a time: causal blocks differ in
  // cost, and a thread repacks Kᵀ only when its next item belongs to another head.
  std::atomic<std::size_t> next{0};
  if (use_avx512(cfg, d)) {
#if ATTN_HAVE_X86
    run_threads(threads, [&](int) {
      Avx512Work w(g);
      for (std::size_t it; (it = next.fetch_add(1)) < items;) {
        const std::size_t h = it / blocks, i0 = (it % blocks) * g.br;
        if (w.packed_head != h) {
          pack_kt(w.kt.p, k + h * s * d, s, d);
          w.packed_head = h;
        }
        avx512_block(out + h * n * d, q + h * n * d, v + h * s * d, g, i0, w);
      }
    });
#endif
  } else {
    // Our threads call OpenBLAS: it must not start its own threads inside them.
    const int before = openblas_get_num_threads();
    set_blas_threads(1);
    run_threads(threads, [&](int) {
      PortableWork w(g);
      for (std::size_t it; (it = next.fetch_add(1)) < items;) {
        const std::size_t h = it / blocks, i0 = (it % blocks) * g.br;
        portable_block(out + h * n * d, q + h * n * d, k + h * s * d, v + h * s * d, g, i0, w);
      }
    });
    set_blas_threads(before);
  }
}

Tensor3 fast_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, const FastAttentionConfig& cfg) {
  // q: (BH, N, d), k: (BH, S, d), v: (BH, S, d) -> (BH, N, d)
  const char* fn = "fast_attention";
  if (q.shape(0) != k.shape(0) || q.shape(2) != k.shape(2))
    shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need the same batch×heads and d");
  expect_shape(fn, "v", shape_of(v), {k.shape(0), k.shape(1), k.shape(2)});
  Tensor3 out = xt::zeros<float>({q.shape(0), q.shape(1), q.shape(2)});
  fast_attention_forward(out.data(), q.data(), k.data(), v.data(), q.shape(0), q.shape(1), k.shape(1), q.shape(2), cfg);
  return out;
}

// ----------------------------------------------------------------------------------------------
// The three-pass baseline.

std::size_t naive_attention_workspace_bytes(std::size_t bh, std::size_t n, std::size_t s) {
  return bh * n * s * sizeof(float);
}

void naive_attention_forward(float* out, float* ws, const float* q, const float* k, const float* v, std::size_t bh,
                             std::size_t n, std::size_t s, std::size_t d, bool causal, float scale, int threads) {
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  // 1. S = scale · Q Kᵀ for every head (OpenBLAS uses its own threads here).
  for (std::size_t h = 0; h < bh; ++h)
    sgemm(Op::N, Op::T, int(n), int(s), int(d), scale, q + h * n * d, int(d), k + h * s * d, int(d), 0.0f,
          ws + h * n * s, int(s));
  // 2. Softmax of every row, in place (causal: keys past the diagonal get weight 0).
  const std::ptrdiff_t offset = std::ptrdiff_t(s) - std::ptrdiff_t(n);
  const std::size_t rows = bh * n;
  const int nt = int(std::min<std::size_t>(std::size_t(resolve_threads(threads)), rows));
  run_threads(nt, [&](int t) {
    for (std::size_t r = rows * std::size_t(t) / nt; r < rows * std::size_t(t + 1) / nt; ++r) {
      float* row = ws + r * s;
      const std::size_t i = r % n;
      const std::size_t lim = causal ? std::size_t(std::clamp<std::ptrdiff_t>(std::ptrdiff_t(i) + offset + 1, 0, std::ptrdiff_t(s))) : s;
      float mx = kNegInf;
      for (std::size_t j = 0; j < lim; ++j) mx = std::max(mx, row[j]);
      float sum = 0.0f;
      for (std::size_t j = 0; j < lim; ++j) sum += (row[j] = std::exp(row[j] - mx));
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      for (std::size_t j = 0; j < lim; ++j) row[j] *= inv;
      for (std::size_t j = lim; j < s; ++j) row[j] = 0.0f;
    }
  });
  // 3. O = P V.
  for (std::size_t h = 0; h < bh; ++h)
    sgemm(Op::N, Op::N, int(n), int(d), int(s), 1.0f, ws + h * n * s, int(s), v + h * s * d, int(d), 0.0f,
          out + h * n * d, int(d));
}

Tensor3 naive_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, bool causal, float scale) {
  const char* fn = "naive_attention";
  if (q.shape(0) != k.shape(0) || q.shape(2) != k.shape(2))
    shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need the same batch×heads and d");
  expect_shape(fn, "v", shape_of(v), {k.shape(0), k.shape(1), k.shape(2)});
  const std::size_t bh = q.shape(0), n = q.shape(1), s = k.shape(1), d = q.shape(2);
  Tensor3 out = xt::zeros<float>({bh, n, d});
  std::vector<float> ws(bh * n * s);
  naive_attention_forward(out.data(), ws.data(), q.data(), k.data(), v.data(), bh, n, s, d, causal, scale);
  return out;
}

double attention_forward_flops(std::size_t bh, std::size_t n, std::size_t s, std::size_t d, bool causal) {
  double pairs = double(n) * double(s);
  if (causal) {  // query i sees min(S, max(0, i + S − N + 1)) keys
    pairs = 0.0;
    const std::ptrdiff_t offset = std::ptrdiff_t(s) - std::ptrdiff_t(n);
    for (std::size_t i = 0; i < n; ++i)
      pairs += double(std::clamp<std::ptrdiff_t>(std::ptrdiff_t(i) + offset + 1, 0, std::ptrdiff_t(s)));
  }
  return 4.0 * double(bh) * pairs * double(d);
}

}  // namespace attn
