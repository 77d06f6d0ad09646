// Chapter 06's sweep of efficient attention variants and its verdicts (see attn/studies/efficient_sweep.hpp).
#include "attn/studies/efficient_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/attention/attention.hpp"
#include "attn/studies/timing.hpp"
#include "attn/attention/kv_cache.hpp"
#include "attn/attention/linear_attention.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/attention/sparse_attention.hpp"
#include "attn/attention/tiled_attention.hpp"

namespace attn {

namespace {

struct Variant {
  std::string name, complexity;
  double exponent;
  // Returns the output; `work` receives the counted working bytes, `pairs` the (query, key) pairs.
  std::function<Mat(const Mat&, const Mat&, const Mat&, std::size_t& work, double& pairs)> run;
  std::string memory = "";  // see VariantSweep::memory
};

// (query, key) token pairs a block pattern computes: a last, partial block counts only its tokens.
double block_pattern_pairs(const BlockSparsePattern& p) {
  const auto tokens = [&p](std::size_t block) { return double(std::min(p.block, p.n - block * p.block)); };
  double total = 0.0;
  for (std::size_t bi = 0; bi < p.num_blocks; ++bi)
    for (std::size_t t = p.block_start[bi]; t < p.block_start[bi + 1]; ++t) total += tokens(bi) * tokens(p.blocks[t]);
  return total;
}

// Visible pairs of the centred window with `half` keys each side (itself counted once).
double window_pairs(std::size_t n, std::size_t half) {
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t lo = i + 1 >= half ? i + 1 - half : 0, hi = std::min(n - 1, i + half - 1);
    total += double(hi - lo + 1);
  }
  return total;
}

double median_of(std::vector<double> xs) {
  if (xs.empty()) return NAN;
  std::sort(xs.begin(), xs.end());
  const std::size_t m = xs.size() / 2;
  return xs.size() % 2 ? xs[m] : 0.5 * (xs[m - 1] + xs[m]);
}

}  // namespace

LogLogFit loglog_fit(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    if (x[i] > 0 && y[i] > 0) lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
  LogLogFit f;
  f.points = lx.size();
  f.slope = f.standard_error = NAN;
  if (f.points < 2) return f;
  const double m = double(f.points);
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) mx += lx[i] / m, my += ly[i] / m;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) sxx += (lx[i] - mx) * (lx[i] - mx), sxy += (lx[i] - mx) * (ly[i] - my);
  if (sxx == 0) return f;
  f.slope = sxy / sxx;
  if (f.points < 3) return f;
  double rss = 0;  // residuals of the fit; the slope's standard error is √(rss/(m − 2)/sxx)
  for (std::size_t i = 0; i < lx.size(); ++i) rss += std::pow(ly[i] - my - f.slope * (lx[i] - mx), 2);
  f.standard_error = std::sqrt(rss / (m - 2.0) / sxx);
  return f;
}

Verdict judge_exponent(double slope, double claimed, double noise, double tolerance) {
  Verdict v;
  v.measured = std::abs(slope - claimed);
  v.bound = tolerance;
  v.partly = tolerance + (std::isfinite(noise) ? noise : 0.0);
  if (!std::isfinite(slope) || !std::isfinite(noise)) v.outcome = Outcome::inconclusive;
  else if (noise > tolerance) v.outcome = Outcome::too_noisy;
  else if (v.measured <= v.bound) v.outcome = Outcome::holds;
  else if (v.measured <= v.partly) v.outcome = Outcome::inconclusive;
  else v.outcome = Outcome::fails;
  return v;
}

double VariantSweep::largest_spread() const {
  double worst = 0.0;
  for (const auto& p : points)
    if (!p.skipped) worst = std::max(worst, p.spread());
  return worst;
}

const VariantSweep& EfficientSweep::at(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return v;
  throw std::out_of_range("efficient sweep: no variant named " + name);
}

bool clearly_faster(const VariantPoint& p, const VariantPoint& full) {
  // a gap smaller than either point's own run-to-run spread could reverse on the next run
  return p.seconds * (1.0 + std::max(p.spread(), full.spread())) < full.seconds;
}

PairCost pair_cost(const VariantPoint& p, const VariantPoint& f) {
  PairCost c;
  c.n = p.n;
  if (f.skipped || p.skipped || p.seconds < f.seconds || p.pairs <= 0 || f.pairs <= 0) return c;
  if (p.pairs >= f.pairs) {
    c.outcome = PairCostOutcome::all_pairs;
    return c;
  }
  c.ns = p.ns_per_pair(), c.full_ns = f.ns_per_pair();
  c.ratio = c.ns / c.full_ns;
  c.share = 100.0 * p.pairs / (double(p.n) * double(p.n));
  c.spread = std::max(p.spread(), f.spread());
  c.cpu_share = std::min(p.cpu_share, f.cpu_share);
  if (p.runs < 2 || f.runs < 2 || c.spread > kPairCostSpread || c.cpu_share < kContendedCpuShare)
    c.outcome = PairCostOutcome::too_noisy;
  else
    c.outcome = PairCostOutcome::dearer, c.break_even = 100.0 / c.ratio;
  return c;
}

double last_level_cache_bytes() {
  double best = 0.0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", i);
    std::ifstream level(dir + "level"), size(dir + "size"), type(dir + "type");
    int l = 0;
    std::string sz, ty;
    if (!(level >> l) || !(size >> sz) || !(type >> ty) || ty == "Instruction") continue;
    double bytes = 0.0;
    try {
      std::size_t used = 0;
      bytes = std::stod(sz, &used);
      const std::string unit = sz.substr(used);
      bytes *= unit == "K" ? 1024.0 : unit == "M" ? 1024.0 * 1024.0 : unit.empty() ? 1.0 : 0.0;
    } catch (const std::exception&) {
      continue;
    }
    if (l > best_level && bytes > 0) best_level = l, best = bytes;
  }
  return best;
}

ElementCost full_element_cost(const EfficientSweep& s, std::size_t fit_from) {
  ElementCost e;
  if (s.variants.empty()) return e;
  const VariantSweep& full = s.variants.front();
  const VariantPoint* lo = nullptr;
  const VariantPoint* hi = nullptr;
  for (const auto& p : full.points)
    if (!p.skipped && p.n >= fit_from && p.pairs > 0) {
      if (lo == nullptr) lo = &p;
      hi = &p;
      if (e.cache_from == 0 && s.llc_bytes > 0 && p.work_mib * kMiB > s.llc_bytes) e.cache_from = p.n;
    }
  if (lo == nullptr || lo == hi) return ElementCost{};
  e.lo_n = lo->n, e.hi_n = hi->n;
  e.lo_ns = lo->ns_per_pair(), e.hi_ns = hi->ns_per_pair();
  e.cpu_lo = lo->cpu_share, e.cpu_hi = hi->cpu_share;
  e.slope = full.fit.slope;
  e.element_slope = full.fit.slope - full.claimed_exponent;
  return e;
}

std::vector<ErrorAgainstZero> errors_against_zero(const EfficientSweep& s) {
  std::vector<ErrorAgainstZero> out;
  if (s.variants.empty()) return out;
  const VariantSweep& full = s.variants.front();
  for (const VariantSweep& v : s.variants) {
    ErrorAgainstZero e;
    e.name = v.name;
    for (const auto& p : v.points)
      if (!p.skipped) {
        e.work_mib = p.work_mib;
        if (p.err_vs_full < 0) continue;
        for (const auto& q : full.points)
          if (q.n == p.n && !q.skipped) {
            e.n = p.n, e.err = p.err_vs_full, e.scale = q.out_max;
            e.out_ratio = q.out_max > 0 ? p.out_max / q.out_max : 0.0;
          }
      }
    e.ratio = e.err >= 0 && e.scale > 0 ? e.err / e.scale : NAN;
    e.beats_zero = judge_at_most(e.ratio, 1.0);
    out.push_back(e);
  }
  return out;
}

void judge_sweep(EfficientSweep& s, std::size_t fit_from) {
  const VariantSweep* full = s.variants.empty() ? nullptr : &s.variants.front();
  for (auto& v : s.variants) {
    std::vector<double> x, best, median;
    for (const auto& p : v.points)
      if (!p.skipped && p.n >= fit_from) {
        x.push_back(double(p.n));
        best.push_back(p.seconds);
        median.push_back(p.median_seconds);
      }
    v.fit = loglog_fit(x, best);
    v.median_slope = loglog_fit(x, median).slope;
    // NaN with fewer than 3 sizes (no standard error): the verdict is then inconclusive
    v.noise = v.fit.points < 3 ? NAN : std::max(2.0 * v.fit.standard_error, std::abs(v.fit.slope - v.median_slope));
    v.min_cpu_share = 1.0;
    for (const auto& p : v.points)
      if (!p.skipped && p.n >= fit_from) v.min_cpu_share = std::min(v.min_cpu_share, p.cpu_share);
    v.exponent = judge_exponent(v.fit.slope, v.claimed_exponent, v.noise);
    if (std::isfinite(v.noise) && v.min_cpu_share < kContendedCpuShare)
      v.exponent.outcome = Outcome::too_noisy;  // the times measure the other programs as much as this one
    v.faster_from = 0;
    v.faster_at.clear();
    v.crossover_contended = false;
    if (full == nullptr || &v == full) continue;
    for (const VariantPoint& p : v.points)
      for (const VariantPoint& q : full->points)
        if (q.n == p.n && !q.skipped && !p.skipped) {
          if (clearly_faster(p, q)) v.faster_at.push_back(p.n);
          if (std::min(p.cpu_share, q.cpu_share) < kContendedCpuShare) v.crossover_contended = true;
        }
    for (std::size_t i = v.points.size(); i-- > 0;) {  // from the largest n down, while it stays faster
      const VariantPoint& p = v.points[i];
      const VariantPoint* f = nullptr;
      for (const auto& q : full->points)
        if (q.n == p.n && !q.skipped) f = &q;
      if (p.skipped || f == nullptr) continue;  // full skipped: no comparison at this n
      if (clearly_faster(p, *f)) v.faster_from = p.n;
      else break;
    }
  }
}

namespace {
// Times one variant at one n: up to cfg.repeats runs within cfg.budget_s (the first also measures
// the RSS growth); fills seconds, median, runs, work, pairs and the output.
VariantPoint time_point(const Variant& var, const Mat& q, const Mat& k, const Mat& v, const EfficientSweepConfig& cfg,
                        Mat& result) {
  VariantPoint pt;
  pt.n = q.shape(0);
  constexpr double kGiB = 1024.0 * kMiB;
  std::size_t work = 0;
  std::vector<double> runs, cpu;
  long long grown = -1;
  auto timed = [&](std::size_t& wk, double& pairs) {  // wall and process CPU seconds of one run
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    result = var.run(q, k, v, wk, pairs);
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(double(std::clock() - c0) / CLOCKS_PER_SEC);
  };
  try {
    grown = measure_peak_growth([&] { timed(work, pt.pairs); });
    double spent = runs.back();
    while (int(runs.size()) < cfg.repeats && spent < cfg.budget_s) {
      std::size_t wk = 0;
      double pairs = 0.0;
      timed(wk, pairs);
      spent += runs.back();
    }
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(fmt::format("{} attention at n = {} ran out of memory (its counted working memory "
                                         "is {:.2f} GiB); lower --sizes", var.name, pt.n, double(work) / kGiB));
  }
  const std::size_t fastest = std::size_t(std::min_element(runs.begin(), runs.end()) - runs.begin());
  pt.seconds = runs[fastest];
  pt.cpu_share = runs[fastest] > 0 ? cpu[fastest] / runs[fastest] : 1.0;
  pt.median_seconds = median_of(runs);
  pt.runs = int(runs.size());
  pt.work_mib = double(work) / kMiB;
  pt.rss_mib = grown < 0 ? -1.0 : double(grown) / kMiB;
  return pt;
}
}  // namespace

EfficientSweep sweep_efficient_variants(const std::vector<std::size_t>& sizes, const EfficientSweepConfig& cfg) {
  if (cfg.window % 2 == 0)
    throw std::invalid_argument(fmt::format("sweep_efficient_variants: window w = {} must be odd (a centred window "
                                            "sees (w − 1)/2 keys each side and itself)", cfg.window));
  const std::size_t d = cfg.d, half = (cfg.window + 1) / 2, b = cfg.block;  // the core's w: keys each side + 1
  std::vector<Variant> variants = {
      {"full", "O(n²·d)", 2.0,
       [](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         work = 2 * q.shape(0) * k.shape(0) * sizeof(float);  // scores and weights, n×n each
         pairs = double(q.shape(0)) * double(k.shape(0));
         return scaled_dot_product_attention(q, k, v).output;
       }},
      {"tiled (exact)", "O(n²·d)", 2.0,
       [b](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         work = tiled_attention_workspace_floats(2 * b, 2 * b, v.shape(1)) * sizeof(float) + q.shape(0) * sizeof(float);
         pairs = double(q.shape(0)) * double(k.shape(0));
         return tiled_attention_forward(q, k, v, 2 * b, 2 * b).output;
       },
       "O(tile)"},
      {"window", "O(n·w·d)", 1.0,
       [half](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         work = sliding_window_workspace_bytes(half, false);
         pairs = window_pairs(q.shape(0), half);
         return sliding_window_attention(q, k, v, half, false);
       }},
      {"dilated", "O(n·w·d)", 1.0,
       [half, &cfg](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         const SparsePattern p = dilated_window_pattern(q.shape(0), half, cfg.dilation, false);
         work = sparse_attention_workspace_bytes(p);
         pairs = double(p.nnz());
         return sparse_attention(q, k, v, p);
       }},
      {"longformer", "O(n·(w+g)·d)", 1.0,
       [half](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         const SparsePattern p = longformer_pattern(q.shape(0), half, {0});
         work = sparse_attention_workspace_bytes(p);
         pairs = double(p.nnz());
         return sparse_attention(q, k, v, p);
       }},
      {"bigbird", "O(n·(3+g+r)·b·d)", 1.0,
       [b, &cfg](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         // A block never exceeds the sequence: at n < b the pattern is one n×n block.
         const BlockSparsePattern p = bigbird_pattern(q.shape(0), std::min(b, q.shape(0)), 1, cfg.global_blocks,
                                                      cfg.random_blocks, cfg.seed);
         work = block_sparse_workspace_bytes(p);
         pairs = block_pattern_pairs(p);
         return block_sparse_attention(q, k, v, p);
       }},
      {"linear", "O(n·d²)", 1.0,
       [](const Mat& q, const Mat& k, const Mat& v, std::size_t& work, double& pairs) {
         // φ(Q), φ(K) (n×d each), φ(K)ᵀV (d×d_v), z (d), φ(Q)z (n)
         work = (2 * q.size() + q.shape(1) * v.shape(1) + q.shape(1) + q.shape(0)) * sizeof(float);
         pairs = 0.0;  // no (query, key) pair is ever formed
         return linear_attention(q, k, v);
       }},
  };
  EfficientSweep out;
  out.variants.resize(variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    out.variants[i].name = variants[i].name;
    out.variants[i].complexity = variants[i].complexity;
    out.variants[i].memory = variants[i].memory;
    out.variants[i].claimed_exponent = variants[i].exponent;
  }
  constexpr double kGiB = 1024.0 * kMiB;
  for (std::size_t n : sizes) {
    Rng rng(cfg.seed + n);
    const Mat q = rng.normal_mat(n, d), k = rng.normal_mat(n, d), v = rng.normal_mat(n, d);
    Mat full_out;
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const double full_bytes = double(2 * n * n * sizeof(float));
      if (i == 0 && full_bytes / kMiB > cfg.max_full_mib) {
        VariantPoint pt;
        pt.n = n;
        pt.skipped = true;
        pt.note = fmt::format("needs {:.0f} MiB for scores and weights (limit {:.0f} MiB, --max-full-mib)",
                              full_bytes / kMiB, cfg.max_full_mib);
        out.variants[i].points.push_back(pt);
        continue;
      }
      if (i == 0) {  // the one variant whose n×n buffers can exceed the machine: check before allocating
        const double avail = double(available_memory_bytes());
        if (avail >= 0 && full_bytes > avail)
          throw std::runtime_error(fmt::format(
              "full attention at n = {} needs {:.1f} GiB for its scores and weights, but only {:.1f} GiB can be "
              "allocated here (free memory and limits); lower --max-full-mib or --sizes",
              n, full_bytes / kGiB, avail / kGiB));
      }
      Mat result;
      VariantPoint pt = time_point(variants[i], q, k, v, cfg, result);
      pt.out_max = double(xt::amax(xt::abs(result))());
      if (i == 0) full_out = result;
      if (full_out.size() == result.size()) pt.err_vs_full = max_abs_diff(result, full_out);
      out.variants[i].points.push_back(pt);
    }
  }
  out.llc_bytes = last_level_cache_bytes();
  judge_sweep(out, cfg.fit_from);
  return out;
}

Verdict judge_same_outputs(double max_diff) { return judge_at_most(max_diff, 1e-5); }

double kv_cache_work_ratio(std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t head_dim,
                           std::size_t steps) {
  const double proj = double(d_model) * double(2 * heads * head_dim + 2 * kv_heads * head_dim);  // per token
  const double pair = 2.0 * double(heads * head_dim);                                             // per (q, k) pair
  double with = 0.0, without = 0.0;
  for (std::size_t len = 1; len < steps; ++len) {  // generate() runs steps − 1 steps, prefixes 1 … steps − 1
    with += proj + pair * double(len);
    without += proj * double(len) + pair * double(len) * double(len + 1) / 2.0;
  }
  return with > 0 ? without / with : NAN;
}

Verdict judge_kv_speedup(double speedup_best, double speedup_median, double work_ratio) {
  Verdict v = judge_at_least(speedup_median / work_ratio, 1.0 - kKVSpeedupTolerance, 1.0 / work_ratio);
  if (v.outcome == Outcome::partly && speedup_median == 1.0) v.outcome = Outcome::fails;  // no faster at all
  if (std::isfinite(v.measured) && std::abs(speedup_best / speedup_median - 1.0) > kKVSpeedupTolerance)
    v.outcome = Outcome::too_noisy;
  return v;
}

KVCacheTiming time_kv_cache(std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t steps,
                            std::uint64_t seed) {
  Rng rng(seed);
  const DecoderAttention layer = decoder_attention_init(d_model, heads, kv_heads, d_model / heads, rng);
  const Mat x0 = rng.normal_mat(1, d_model);
  KVCacheTiming t;
  Mat a, b;
  const TimeSpread with = time_runs([&] { a = generate(layer, x0, steps, true); }, 5, true, 1.0);
  const TimeSpread without = time_runs([&] { b = generate(layer, x0, steps, false); }, 3, false, 2.0);
  t.with_cache = with.best, t.with_median = with.median, t.with_runs = with.runs;
  t.without_cache = without.best, t.without_median = without.median, t.without_runs = without.runs;
  t.max_diff = max_abs_diff(a, b);
  t.same_outputs = judge_same_outputs(t.max_diff);
  t.work_ratio = kv_cache_work_ratio(d_model, heads, kv_heads, d_model / heads, steps);
  t.follows_work = judge_kv_speedup(t.speedup_best(), t.speedup_median(), t.work_ratio);
  return t;
}

LinearCheck linear_attention_check(const Mat& q, const Mat& k, const Mat& v) {
  LinearCheck c;
  c.forms_diff = max_abs_diff(linear_attention_causal(q, k, v), linear_attention_quadratic(q, k, v, true));
  const Mat softmax_out = scaled_dot_product_attention(q, k, v).output;
  c.softmax_diff = max_abs_diff(linear_attention(q, k, v), softmax_out);
  c.softmax_max = double(xt::amax(xt::abs(softmax_out))());
  c.n = q.shape(0);
  c.d = q.shape(1);
  c.forms_agree = judge_at_most(c.forms_diff, 1e-4);
  c.differs_from_softmax = judge_at_least(c.softmax_diff, 0.05);
  c.to_zero = c.softmax_max > 0 ? c.softmax_diff / c.softmax_max : NAN;
  c.beats_zero = judge_linear_against_zero(c.to_zero);
  return c;
}

Verdict judge_linear_against_zero(double ratio) { return judge_at_most(ratio, kLinearBeatsZero, 1.0); }

Verdict judge_same_sum(double online, double direct) {
  return judge_at_most(direct > 0 ? std::abs(online - direct) / direct : NAN, 1e-5);
}

TiledCheck tiled_attention_check(const Mat& q, const Mat& k, const Mat& v, const Mat& grad, std::size_t tile,
                                 std::size_t trace_row) {
  TiledCheck c;
  const TiledAttentionResult tiled = tiled_attention_forward(q, k, v, tile, tile, false, 0.0f, &c.trace, trace_row);
  c.forward = max_abs_diff(tiled.output, scaled_dot_product_attention(q, k, v).output);
  Mat dq = xt::zeros<float>(q.shape()), dk = xt::zeros<float>(k.shape()), dv = xt::zeros<float>(v.shape());
  Mat dq0 = dq, dk0 = dk, dv0 = dv;
  tiled_attention_backward(dq, dk, dv, grad, q, k, v, tiled.output, tiled.logsumexp, tile, tile);
  attention_backward(dq0, dk0, dv0, grad, q, k, v);
  c.dq = max_abs_diff(dq, dq0);
  c.dk = max_abs_diff(dk, dk0);
  c.dv = max_abs_diff(dv, dv0);
  c.exact = judge_at_most(std::max({c.forward, c.dq, c.dk, c.dv}), 1e-5);
  // the same row's softmax denominator in one pass over all its keys
  const std::size_t d = q.shape(1);
  std::vector<double> scores(k.shape(0));
  for (std::size_t j = 0; j < k.shape(0); ++j) {
    double dot = 0.0;
    for (std::size_t i = 0; i < d; ++i) dot += double(q(trace_row, i)) * double(k(j, i));
    scores[j] = dot / std::sqrt(double(d));
  }
  c.direct_max = scores.empty() ? 0.0 : *std::max_element(scores.begin(), scores.end());
  // The key with the largest score has e^(s − max s) = 1, so its softmax weight is 1 / Σ_j e^(s_j − max s).
  std::vector<double> weights(scores.size());
  softmax_row(weights.data(), scores.data(), nullptr, scores.size());
  c.direct_sum = weights.empty() ? 0.0 : 1.0 / *std::max_element(weights.begin(), weights.end());
  c.same_sum = judge_same_sum(c.trace.empty() ? NAN : double(c.trace.back().l_after), c.direct_sum);
  return c;
}

}  // namespace attn
