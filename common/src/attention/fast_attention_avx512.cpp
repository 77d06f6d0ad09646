// The AVX-512 micro-kernels of the fused attention forward (see fast_attention.cpp for the loop
// they run in, and attn/attention/fast_attention.hpp). Each function is compiled for the subsets
// named in ATTN_AVX512 and only called when cpu_has_avx512() found all of them at run time.
//   qk_kernel        S = Qs · Kᵀ panel, 12 rows × 32 keys, keeping each row's running max
//   softmax_tile_row online-softmax update of one row of a tile, exp2 by a polynomial
//   pv_kernel        Oacc = α ⊙ Oacc + P · V, 6 rows × up to 64 columns
#include "attention/fast_attention_detail.hpp"

#include <cmath>
#include <stdexcept>

#if defined(__x86_64__)
#define ATTN_HAVE_X86 1
// GCC 12's _mm512_reduce_* and mask intrinsics trip -Wmaybe-uninitialized inside its own header;
// silenced for this file's kernels only (popped at the end of the AVX-512 section).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group (clang, used by the fuzz build, warns on the name)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#else
#define ATTN_HAVE_X86 0
#endif

namespace attn::fast_detail {

#if ATTN_HAVE_X86
namespace {
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
}  // namespace

std::size_t avx512_workspace_floats(const Geometry& g) {
  const std::size_t dp = round_up(g.d, 16);  // the floats Avx512Work allocates
  return round_up(g.s, kPanel) * g.d + g.br * g.d + g.br * g.bc + g.br * dp + g.br * 16 + 3 * g.br;
}

void avx512_worker(float* out, const float* q, const float* k, const float* v, const Geometry& g, std::size_t blocks,
                   std::size_t items, std::atomic<std::size_t>& next) {
  const std::size_t n = g.n, s = g.s, d = g.d;
  Avx512Work w(g);
  for (std::size_t it; (it = next.fetch_add(1)) < items;) {
    const std::size_t h = it / blocks, i0 = (it % blocks) * g.br;
    if (w.packed_head != h) {
      pack_kt(w.kt.p, k + h * s * d, s, d);
      w.packed_head = h;
    }
    avx512_block(out + h * n * d, q + h * n * d, v + h * s * d, g, i0, w);
  }
}

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma");
}
#pragma GCC diagnostic pop

#else  // not x86-64: the portable path runs instead

bool cpu_has_avx512() { return false; }
std::size_t avx512_workspace_floats(const Geometry&) { return 0; }
void avx512_worker(float*, const float*, const float*, const float*, const Geometry&, std::size_t, std::size_t,
                   std::atomic<std::size_t>&) {
  throw std::logic_error("fast_attention: the AVX-512 path was called on a CPU without it");
}

#endif  // ATTN_HAVE_X86

}  // namespace attn::fast_detail
