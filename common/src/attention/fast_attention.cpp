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
// The AVX-512 micro-kernels live in fast_attention_avx512.cpp; this file holds the driver, the
// portable path (OpenBLAS per tile) and the three-pass baseline.
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

#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/openblas.hpp"
#include "attention/fast_attention_detail.hpp"

extern "C" int openblas_get_num_threads(void);

namespace attn {

using namespace fast_detail;

namespace {

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

bool use_avx512(const FastAttentionConfig& cfg, std::size_t d) {
  if (cfg.isa == FastIsa::Portable) return false;
  const bool ok = cpu_has_avx512() && d <= 256;
  if (cfg.isa == FastIsa::Avx512 && !ok)
    throw std::runtime_error(
        "fast_attention: the AVX-512 path needs a CPU with AVX-512 F, DQ, VL, BW and FMA, and d <= 256");
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
    floats = avx512_workspace_floats(g);
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
    run_threads(threads, [&](int) { avx512_worker(out, q, k, v, g, blocks, items, next); });
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
      softmax_row(row, row, nullptr, lim);
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
