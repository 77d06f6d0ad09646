// Chapter 06's sweep of efficient attention variants (see attn/studies/efficient_sweep.hpp).
#include "attn/studies/efficient_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/attention/attention.hpp"
#include "attn/studies/timing.hpp"
#include "attn/attention/kv_cache.hpp"
#include "attn/attention/linear_attention.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/attention/sparse_attention.hpp"
#include "attn/attention/tiled_attention.hpp"

namespace attn {

namespace {

double max_abs_diff(const Mat& a, const Mat& b) {
  double e = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, double(std::abs(a.data()[i] - b.data()[i])));
  return e;
}

struct Variant {
  std::string name, complexity;
  // Returns the output; `work` receives the counted working bytes.
  std::function<Mat(const Mat&, const Mat&, const Mat&, std::size_t& work)> run;
};

}  // namespace

std::vector<VariantSweep> sweep_efficient_variants(const std::vector<std::size_t>& sizes, const EfficientSweepConfig& cfg) {
  const std::size_t d = cfg.d, w = cfg.window, b = cfg.block;
  std::vector<Variant> variants = {
      {"full", "O(n²·d)",
       [](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         work = 2 * q.shape(0) * k.shape(0) * sizeof(float);  // scores and weights, n×n each
         return scaled_dot_product_attention(q, k, v).output;
       }},
      {"tiled (exact)", "O(n²·d), O(tile) memory",
       [b](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         work = tiled_attention_workspace_floats(2 * b, 2 * b, v.shape(1)) * sizeof(float) + q.shape(0) * sizeof(float);
         return tiled_attention_forward(q, k, v, 2 * b, 2 * b).output;
       }},
      {"window", "O(n·w·d)",
       [w](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         work = sliding_window_workspace_bytes(w, false);
         return sliding_window_attention(q, k, v, w, false);
       }},
      {"dilated", "O(n·w·d)",
       [w, &cfg](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         const SparsePattern p = dilated_window_pattern(q.shape(0), w, cfg.dilation, false);
         work = sparse_attention_workspace_bytes(p);
         return sparse_attention(q, k, v, p);
       }},
      {"longformer", "O(n·(w+g)·d)",
       [w](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         const SparsePattern p = longformer_pattern(q.shape(0), w, {0});
         work = sparse_attention_workspace_bytes(p);
         return sparse_attention(q, k, v, p);
       }},
      {"bigbird", "O(n·(3+g+r)·b·d)",
       [b, &cfg](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         const BlockSparsePattern p = bigbird_pattern(q.shape(0), b, 1, cfg.global_blocks, cfg.random_blocks, cfg.seed);
         work = block_sparse_workspace_bytes(p);
         return block_sparse_attention(q, k, v, p);
       }},
      {"linear", "O(n·d²)",
       [](const Mat& q, const Mat& k, const Mat& v, std::size_t& work) {
         // φ(Q), φ(K) (n×d each), φ(K)ᵀV (d×d_v), z (d), φ(Q)z (n)
         work = (2 * q.size() + q.shape(1) * v.shape(1) + q.shape(1) + q.shape(0)) * sizeof(float);
         return linear_attention(q, k, v);
       }},
  };
  std::vector<VariantSweep> out(variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    out[i].name = variants[i].name;
    out[i].complexity = variants[i].complexity;
  }
  for (std::size_t n : sizes) {
    Rng rng(cfg.seed + n);
    const Mat q = rng.normal_mat(n, d), k = rng.normal_mat(n, d), v = rng.normal_mat(n, d);
    Mat full_out;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      VariantPoint pt;
      pt.n = n;
      if (i == 0 && double(2 * n * n * sizeof(float)) / kMiB > cfg.max_full_mib) {
        pt.skipped = true;
        pt.note = fmt::format("needs {:.0f} MiB for scores and weights (limit {:.0f} MiB, --max-full-mib)",
                              double(2 * n * n * sizeof(float)) / kMiB, cfg.max_full_mib);
        out[i].points.push_back(pt);
        continue;
      }
      constexpr double kGiB = 1024.0 * kMiB;
      if (i == 0) {  // the one variant whose n×n buffers can exceed the machine: check before allocating
        const double need = double(2 * n * n * sizeof(float)), avail = double(available_memory_bytes());
        if (avail >= 0 && need > avail)
          throw std::runtime_error(fmt::format(
              "full attention at n = {} needs {:.1f} GiB for its scores and weights, but only {:.1f} GiB can be "
              "allocated here (free memory and limits); lower --max-full-mib or --sizes",
              n, need / kGiB, avail / kGiB));
      }
      std::size_t work = 0;
      Mat result;
      double first = 0.0;
      long long grown = -1;
      try {
        grown = measure_peak_growth([&] {
          const auto t0 = std::chrono::steady_clock::now();
          result = variants[i].run(q, k, v, work);
          first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        });
      } catch (const std::bad_alloc&) {
        throw std::runtime_error(fmt::format("{} attention at n = {} ran out of memory (its counted working memory "
                                             "is {:.2f} GiB); lower --sizes",
                                             variants[i].name, n, double(work) / kGiB));
      }
      double best = first;
      if (first < 0.5 && cfg.repeats > 1)
        best = std::min(best, best_seconds([&] { std::size_t wk; result = variants[i].run(q, k, v, wk); }, cfg.repeats - 1, false, 2.0));
      pt.seconds = best;
      pt.work_mib = double(work) / kMiB;
      pt.rss_mib = grown < 0 ? -1.0 : double(grown) / kMiB;
      if (i == 0) full_out = result;
      if (full_out.size() == result.size()) pt.err_vs_full = max_abs_diff(result, full_out);
      out[i].points.push_back(pt);
    }
  }
  for (auto& s : out) {
    std::vector<double> x, y;
    for (const auto& p : s.points)
      if (!p.skipped && p.n >= 1024) {
        x.push_back(double(p.n));
        y.push_back(p.seconds);
      }
    s.slope = loglog_slope(x, y);
  }
  return out;
}

KVCacheTiming time_kv_cache(std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t steps,
                            std::uint64_t seed) {
  Rng rng(seed);
  const DecoderAttention layer = decoder_attention_init(d_model, heads, kv_heads, d_model / heads, rng);
  const Mat x0 = rng.normal_mat(1, d_model);
  KVCacheTiming t;
  Mat a, b;
  t.with_cache = best_seconds([&] { a = generate(layer, x0, steps, true); }, 2, false);
  t.without_cache = best_seconds([&] { b = generate(layer, x0, steps, false); }, 1, false);
  t.max_diff = max_abs_diff(a, b);
  return t;
}

}  // namespace attn
