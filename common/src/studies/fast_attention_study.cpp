// Chapter 11's measurements (see attn/studies/fast_attention_study.hpp).
#include "attn/studies/fast_attention_study.hpp"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <thread>

#include <xtensor/xview.hpp>

#include "attn/attention/attention.hpp"
#include "attn/attention/fast_attention.hpp"
#include "attn/attention/online_softmax.hpp"
#include "attn/studies/peak_flops.hpp"
#include "attn/studies/state_space.hpp"
#include "attn/studies/timing.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

Roofs judge_roofs(Roofs r) {
  r.sgemm_within_peak = judge_at_most(r.sgemm() - r.peak(), 0.0);
  r.peak_within_clock = judge_at_most(r.clock_ghz > 0 ? r.best_fma_per_cycle() : NAN, kMaxFmaPerCycle);
  auto ratio = [](double a, double b) { return a > 0 && b > 0 ? std::max(a, b) / std::min(a, b) : NAN; };
  r.sgemm_steady = judge_at_most(ratio(r.sgemm_before, r.sgemm_after), kRoofSteadyRatio);
  r.peak_steady = judge_at_most(ratio(r.fma_before, r.fma_after), kRoofSteadyRatio);
  return r;
}

Roofs measure_roofs(int threads) {
  Roofs r;
  r.unit = widest_vector_unit();
  r.threads = threads;
  r.tiled_path = fast_attention_path({}, 64);
  const BlasInfo blas = blas_info();
  r.blas_kernel = blas.kernel;
  r.blas_threads = blas.threads;
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  r.kernel_from_user = user != nullptr && user[0] != '\0' && std::getenv("ATTN_OPENBLAS_REEXEC") == nullptr;
  const CpuVectorUnits cpu = cpu_vector_units();
  r.better_kernel = better_openblas_coretype(blas.kernel, cpu.avx512, cpu.avx2);
  const PeakFma fma = peak_fma_gflops(r.unit, threads);
  r.load_before = r.load_after = load_average();
  r.fma_before = r.fma_after = fma.gflops;
  r.fma_seconds_before = r.fma_seconds_after = fma.seconds;
  r.lanes = vector_lanes(r.unit), r.fma_accumulators = fma.accumulators, r.fma_iterations = fma.iterations;
  r.fma_flops = fma.flops();
  r.clock_ghz = cpu_clock_ghz();
  r.cpus = std::thread::hardware_concurrency();
  r.cpu_model = cpu_model_name();
  r.sgemm_before = r.sgemm_after = sgemm_gflops(2048, 5);
  r.copy_gbs = copy_bandwidth_gbs();
  r.l2_bytes = l2_cache_bytes();
  return judge_roofs(r);
}

void remeasure_roofs(Roofs& r) {
  r.sgemm_after = sgemm_gflops(2048, 5);
  const PeakFma fma = peak_fma_gflops(r.unit, r.threads);
  r.load_after = load_average();
  r.fma_after = fma.gflops, r.fma_seconds_after = fma.seconds;
  r = judge_roofs(r);
}

double NaivePhases::softmax_spread() const {
  auto spread = [](double best, double median) { return best > 0 && median > 0 ? (median - best) / best : NAN; };
  if (softmax_runs < 2) return NAN;
  return std::max(spread(softmax.seconds, softmax_median_seconds),
                  spread(cached_softmax_seconds, cached_softmax_median_seconds));
}

const NaivePass& NaivePhases::slowest() const {
  const NaivePass* s = &qk;
  for (const NaivePass* p : {&softmax, &pv})
    if (p->seconds > s->seconds) s = p;
  return *s;
}

NaivePhases judge_naive_phases(NaivePhases p) {
  for (NaivePass* pass : {&p.qk, &p.softmax, &p.pv})
    pass->memory_seconds = p.copy_gbs > 0 ? pass->bytes / (p.copy_gbs * 1e9) : NAN;
  const double total = p.seconds();
  p.memory_sets_speed = judge_at_least(
      total > 0 ? (p.qk.memory_seconds + p.softmax.memory_seconds + p.pv.memory_seconds) / total : NAN,
      kMemoryBoundShare);
  p.softmax_exp_bound = judge_at_most(
      p.cached_softmax_seconds > 0 ? p.softmax.seconds / p.cached_softmax_seconds : NAN, kCacheMissRatio);
  const double gap = p.softmax.seconds > 0 && p.cached_softmax_seconds > 0
                         ? (p.softmax.seconds - p.cached_softmax_seconds) / p.softmax.seconds
                         : NAN;
  const double spread = p.softmax_spread();  // NaN under two runs: no spread, not judged
  p.memory_gap_measured =
      std::isfinite(spread) ? judge_at_least(gap, spread) : Verdict{gap, NAN, NAN, Outcome::inconclusive};
  return p;
}

std::size_t naive_phase_size(const std::vector<std::size_t>& sizes, std::size_t heads, double max_naive_mib) {
  std::size_t best = 0, smallest = sizes.empty() ? 0 : sizes.front();
  for (std::size_t n : sizes) {
    smallest = std::min(smallest, n);
    if (n <= kLargeN && double(naive_attention_workspace_bytes(heads, n, n)) / kMiB <= max_naive_mib)
      best = std::max(best, n);
  }
  return best > 0 ? best : smallest;
}

NaivePhases measure_naive_phases(std::size_t n, std::size_t d, std::size_t heads, const Roofs& roofs, int threads,
                                 int repeats) {
  NaivePhases p;
  p.n = n, p.d = d, p.heads = heads, p.repeats = repeats;
  p.copy_gbs = roofs.copy_gbs, p.sgemm_gflops = roofs.sgemm(), p.fma_peak_gflops = roofs.peak();
  Rng rng(11);
  std::vector<float> q(heads * n * d), k(q.size()), v(q.size()), o(q.size()), ws(heads * n * n);
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = rng.normal();
  const float scale = 1.0f / std::sqrt(float(d));
  const int nt = std::max(1, std::min<int>(threads, int(heads * n)));
  // Rows split between threads as naive_attention_forward splits them.
  auto rows_on_threads = [&](const std::function<void(std::size_t, std::size_t, int)>& work) {
    std::vector<std::thread> pool;
    const std::size_t rows = heads * n;
    for (int t = 0; t < nt; ++t)
      pool.emplace_back(work, rows * std::size_t(t) / std::size_t(nt), rows * std::size_t(t + 1) / std::size_t(nt), t);
    for (auto& th : pool) th.join();
  };
  p.qk = {"S = Q·Kᵀ/√d", 0.0, 2.0 * double(heads * n * n * d), 4.0 * double(heads * n * n)};
  p.qk.seconds = best_seconds([&] {
    for (std::size_t h = 0; h < heads; ++h)
      sgemm(Op::N, Op::T, int(n), int(n), int(d), scale, q.data() + h * n * d, int(d), k.data() + h * n * d, int(d),
            0.0f, ws.data() + h * n * n, int(n));
  }, repeats);
  // The cached run's row: one row of S per thread (before the softmax overwrites S with P).
  const std::vector<float> cached_row(ws.begin(), ws.begin() + std::ptrdiff_t(n));
  // In place, run after run: the first run turns S into P, later ones P into softmax(P) — the same
  // max, exps, sum and scaling per row, so each run costs the same.
  p.softmax = {"P = softmax(S)", 0.0, 0.0, 8.0 * double(heads * n * n)};
  // The softmax and its cached twin, best and median of `repeats` runs each: their gap is read
  // against their spread (memory_gap_measured).
  const TimeSpread sm = time_runs([&] {
    rows_on_threads([&](std::size_t from, std::size_t to, int) {
      for (std::size_t r = from; r < to; ++r) softmax_row(ws.data() + r * n, ws.data() + r * n, nullptr, n);
    });
  }, repeats);
  const TimeSpread cached = time_runs([&] {
    rows_on_threads([&](std::size_t from, std::size_t to, int) {
      std::vector<float> row = cached_row, out(n);
      for (std::size_t r = from; r < to; ++r) softmax_row(out.data(), row.data(), nullptr, n);
    });
  }, repeats);
  p.softmax.seconds = sm.best, p.softmax_median_seconds = sm.median;
  p.cached_softmax_seconds = cached.best, p.cached_softmax_median_seconds = cached.median;
  p.softmax_runs = std::min(sm.runs, cached.runs);
  p.pv = {"O = P·V", 0.0, 2.0 * double(heads * n * n * d), 4.0 * double(heads * n * n)};
  p.pv.seconds = best_seconds([&] {
    for (std::size_t h = 0; h < heads; ++h)
      sgemm(Op::N, Op::N, int(n), int(d), int(n), 1.0f, ws.data() + h * n * n, int(n), v.data() + h * n * d, int(d),
            0.0f, o.data() + h * n * d, int(d));
  }, repeats);
  return judge_naive_phases(p);
}

FastKernelCheck judge_fast_kernel(FastKernelCheck c) {
  c.max_diff = c.output.shape() == c.reference.shape() ? max_abs_diff(c.output, c.reference) : NAN;
  c.exact = judge_at_most(c.max_diff, kTiledTol);
  return c;
}

std::vector<FastKernelCheck> fast_kernel_checks(std::uint64_t seed, std::size_t n, std::size_t d) {
  Rng rng(seed);
  const Tensor3 q = rng.normal_tensor3(1, n, d), k = rng.normal_tensor3(1, n, d), v = rng.normal_tensor3(1, n, d);
  const Mat qh = xt::view(q, 0), kh = xt::view(k, 0), vh = xt::view(v, 0);
  std::vector<FastKernelCheck> out;
  for (bool causal : {false, true}) {
    FastAttentionConfig cfg;
    cfg.causal = causal;
    FastKernelCheck c;
    c.n = n, c.d = d, c.causal = causal;
    c.output = xt::view(fast_attention(q, k, v, cfg), 0);
    c.reference = xt::cast<float>(attention_reference(qh, kh, vh, causal ? causal_mask(n) : Mat{}));
    out.push_back(judge_fast_kernel(std::move(c)));
  }
  return out;
}

OnlineSoftmaxExample judge_online_softmax_example(OnlineSoftmaxExample e) {
  e.same = judge_at_most(std::abs(e.online - e.plain), kTiledTol);
  return e;
}

OnlineSoftmaxExample online_softmax_example(const std::vector<float>& scores, const std::vector<float>& values,
                                            std::size_t tile) {
  if (scores.empty() || scores.size() != values.size() || tile == 0)
    throw std::invalid_argument("online_softmax_example: scores and values of the same non-zero length, tile > 0");
  OnlineSoftmaxExample e;
  e.scores = scores, e.values = values;
  OnlineSoftmaxState state;
  double o = 0.0;
  std::vector<float> p(tile);
  for (std::size_t b = 0; b < scores.size(); b += tile) {
    const std::size_t end = std::min(scores.size(), b + tile);
    const float rescale = online_softmax_update(state, scores.data() + b, end - b, p.data());
    o *= rescale;  // what was summed against the old max
    for (std::size_t j = b; j < end; ++j) o += double(p[j - b]) * values[j];
    e.tiles.push_back({b, end, state.m, rescale, state.l, o});
  }
  e.online = o / state.l;
  std::vector<float> w(scores.size());
  softmax_row(w.data(), scores.data(), nullptr, scores.size());
  for (std::size_t j = 0; j < scores.size(); ++j) e.plain += double(w[j]) * values[j];
  return judge_online_softmax_example(e);
}

std::vector<AttentionBenchRow> run_sweep(const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& dims,
                                         std::size_t heads, const std::string& causal, const Roofs& roofs,
                                         const AttentionBenchOptions& opts) {
  std::vector<AttentionBenchRow> rows;
  for (std::size_t d : dims)
    for (bool c : {false, true}) {
      if ((c && causal == "no") || (!c && causal == "yes")) continue;
      for (std::size_t n : sizes)
        for (const char* impl : {"naive", "tiled"}) rows.push_back(bench_attention(impl, n, d, heads, c, roofs.sgemm(), opts));
    }
  return rows;
}

void apply_roofs(std::vector<AttentionBenchRow>& rows, const Roofs& roofs) {
  for (auto& r : rows) {
    if (r.skipped) continue;
    r.pct_of_sgemm = 100.0 * r.gflops / roofs.sgemm();
    r.pct_of_peak = 100.0 * r.gflops / roofs.peak();
  }
}

bool near_bound(double x, double bound) {
  return std::isfinite(x) && bound > 0 && std::abs(x - bound) <= kNearShare * bound;
}

bool row_noisy(const AttentionBenchRow& r) {
  return !r.skipped && r.runs > 1 && r.seconds > 0 && r.median_seconds > kNoisyRowRatio * r.seconds;
}

SweepSummary summarize_sweep(const std::vector<AttentionBenchRow>& rows) {
  SweepSummary s;
  for (const auto& r : rows) s.has_large = s.has_large || (!r.skipped && r.n >= kLargeN);
  std::vector<double> tiled_pcts;
  std::size_t tiled_single = 0;   // tiled rows in range timed once
  std::size_t single_pairs = 0;   // pairs at speedup_n with a row timed once
  bool noisy_pair = false;  // a naive and a tiled row at one size, one of them noisy
  for (const auto& r : rows) {
    if (!r.skipped) s.above_sgemm += r.pct_of_sgemm > 100.0, s.above_peak += r.pct_of_peak > 100.0;
    if (!r.skipped && r.pct_of_peak > s.highest_peak_pct)
      s.highest_peak_pct = r.pct_of_peak, s.highest_peak_gflops = r.gflops, s.highest_peak_n = r.n,
      s.highest_peak_d = r.d, s.highest_peak_causal = r.causal;
    if (s.has_large && r.n < kLargeN) continue;
    const bool naive = r.impl == "naive";
    if (r.skipped) {
      s.naive_skipped += naive;
      continue;
    }
    if (row_noisy(r)) {
      (naive ? s.naive_noisy : s.tiled_noisy) += 1;
      continue;
    }
    s.single_run += r.runs == 1;
    s.naive_measured += naive;
    if (!naive) {
      tiled_single += r.runs == 1;
      tiled_pcts.push_back(r.pct_of_sgemm);
      if (r.pct_of_sgemm > s.tiled_sgemm) s.best_n = r.n, s.best_d = r.d, s.best_causal = r.causal;
    }
    double& sg = naive ? s.naive_sgemm : s.tiled_sgemm;
    double& pk = naive ? s.naive_peak : s.tiled_peak;
    sg = std::max(sg, r.pct_of_sgemm), pk = std::max(pk, r.pct_of_peak);
  }
  s.tiled_measured = tiled_pcts.size();
  if (!tiled_pcts.empty()) {  // the median: the middle row, or the mean of the middle two
    std::sort(tiled_pcts.begin(), tiled_pcts.end());
    const std::size_t m = tiled_pcts.size() / 2;
    s.tiled_sgemm_median = tiled_pcts.size() % 2 ? tiled_pcts[m] : 0.5 * (tiled_pcts[m - 1] + tiled_pcts[m]);
  }
  // The speedups at the largest n where both ran, one per (d, mask) pair.
  for (const auto& a : rows)
    for (const auto& b : rows)
      if (a.impl == "tiled" && b.impl == "naive" && !a.skipped && !b.skipped && a.n == b.n && a.d == b.d &&
          a.causal == b.causal && (row_noisy(a) || row_noisy(b)))
        noisy_pair = true;
      else if (a.impl == "tiled" && b.impl == "naive" && !a.skipped && !b.skipped && a.n == b.n && a.d == b.d &&
          a.causal == b.causal && a.n >= s.speedup_n && b.gflops > 0) {
        const double x = a.gflops / b.gflops;
        if (a.n > s.speedup_n) s.speedup = 0.0, s.speedup_min = x, s.speedup_pairs = 0, single_pairs = 0;
        s.speedup_n = a.n, ++s.speedup_pairs, s.speedup_min = std::min(s.speedup_min, x);
        single_pairs += a.runs == 1 || b.runs == 1;
        if (x > s.speedup) s.speedup = x, s.speedup_d = a.d, s.speedup_causal = a.causal;
      }
  // Working memory: the tiled row at the largest n (largest d there) against the naive one's need.
  for (const auto& r : rows)
    if (r.impl == "tiled" && (r.n > s.work_n || (r.n == s.work_n && r.d > s.work_d))) s.work_n = r.n, s.work_d = r.d;
  s.work_smallest_n = s.work_n;
  for (const auto& r : rows) {
    if (r.d != s.work_d) continue;
    if (r.n == s.work_n) (r.impl == "tiled" ? s.tiled_work_mib : s.naive_work_mib) = r.peak_mib;
    if (r.n == s.work_n && r.impl == "naive") s.naive_work_skipped = r.skipped;
    if (r.impl == "tiled" && r.n <= s.work_smallest_n) s.work_smallest_n = r.n, s.tiled_work_smallest_mib = r.peak_mib;
  }
  s.tiled_near_sgemm =
      judge_at_least(s.tiled_measured > 0 ? s.tiled_sgemm_median : NAN, kNearSgemm, kNearSgemmPartly);
  if (s.tiled_measured == 0 && s.tiled_noisy > 0) s.tiled_near_sgemm.outcome = Outcome::too_noisy;
  s.near_sgemm_single_only = s.tiled_measured > 0 && tiled_single == s.tiled_measured;
  if (s.near_sgemm_single_only) s.tiled_near_sgemm.outcome = Outcome::inconclusive;
  s.tiled_faster = judge_at_least(s.speedup_n > 0 ? s.speedup_min : NAN, kSpeedup);
  if (s.speedup_n == 0 && noisy_pair) s.tiled_faster.outcome = Outcome::too_noisy;
  s.faster_single_only = s.speedup_pairs > 0 && single_pairs == s.speedup_pairs;
  if (s.faster_single_only) s.tiled_faster.outcome = Outcome::inconclusive;
  s.within_peak = judge_at_most(s.highest_peak_n > 0 ? s.highest_peak_pct : NAN, 100.0);
  s.near_peak = judge_at_least(s.highest_peak_n > 0 ? s.highest_peak_pct : NAN, kNearPeakPct);
  // The first tiled series in table order, its measured rows from the smallest n to the largest.
  for (const auto& r : rows)
    if (r.impl == "tiled" && !r.skipped) {
      s.trend_d = r.d, s.trend_causal = r.causal;
      break;
    }
  for (const auto& r : rows) {
    if (r.impl != "tiled" || r.skipped || r.d != s.trend_d || r.causal != s.trend_causal || s.trend_d == 0) continue;
    if (s.trend_n_first == 0 || r.n < s.trend_n_first) s.trend_n_first = r.n, s.trend_gflops_first = r.gflops;
    if (r.n > s.trend_n_last) s.trend_n_last = r.n, s.trend_gflops_last = r.gflops;
  }
  const bool two = s.trend_n_last > s.trend_n_first && s.trend_gflops_first > 0;
  s.trend_ratio = two ? s.trend_gflops_last / s.trend_gflops_first : NAN;
  s.trend_falls = judge_at_most(s.trend_ratio, kTrendFall);
  return s;
}

SweepSummary summarize_sweep(const std::vector<AttentionBenchRow>& rows, const Roofs& roofs) {
  SweepSummary s = summarize_sweep(rows);
  s.sgemm_moved = roofs.sgemm_steady.outcome == Outcome::fails;
  if (s.sgemm_moved && s.tiled_near_sgemm.outcome != Outcome::inconclusive)
    s.tiled_near_sgemm.outcome = Outcome::too_noisy;
  return s;
}

NaiveRecheck recheck_naive(const NaivePhases& p, const std::vector<AttentionBenchRow>& rows) {
  NaiveRecheck c;
  c.n = p.n, c.d = p.d, c.phases_seconds = p.seconds();
  for (const auto& r : rows)
    if (!r.skipped && !r.causal && r.n == p.n && r.d == p.d && r.heads == p.heads) {
      if (r.impl == "naive") c.row_seconds = r.seconds, c.row_runs = r.runs;
      if (r.impl == "tiled") c.tiled_seconds = r.seconds;
    }
  const double a = c.phases_seconds, b = c.row_seconds;
  c.agree = judge_at_most(a > 0 && b > 0 ? std::max(a, b) / std::min(a, b) : NAN, kRoofSteadyRatio);
  c.products_seconds = p.qk.seconds + p.pv.seconds;
  c.products_slower = judge_at_least(c.tiled_seconds > 0 ? c.products_seconds / c.tiled_seconds : NAN,
                                     kRoofSteadyRatio);
  return c;
}

Roofline judge_roofline(double peak_gflops, double copy_gbs, std::size_t d, std::size_t block_rows,
                        double peak_low_gflops) {
  Roofline r;
  r.peak_gflops = peak_gflops, r.copy_gbs = copy_gbs, r.d = d, r.block_rows = block_rows;
  r.peak_low_gflops = peak_low_gflops > 0 && peak_low_gflops <= peak_gflops ? peak_low_gflops : peak_gflops;
  r.ridge = copy_gbs > 0 && peak_gflops > 0 ? peak_gflops / copy_gbs : NAN;
  r.margin = std::max(r.ridge - r.peak_low_gflops / copy_gbs, kRidgeMargin * r.ridge);
  r.naive_intensity = double(d) / 4.0;
  r.tiled_intensity = double(block_rows) / 2.0;
  // Beyond the margin on its side holds, beyond it on the other side fails, within it inconclusive.
  r.naive_below_ridge = judge_greater(r.ridge, r.naive_intensity, r.margin);
  r.tiled_above_ridge = judge_greater(r.tiled_intensity, r.ridge, r.margin);
  const Outcome a = r.naive_below_ridge.outcome, b = r.tiled_above_ridge.outcome;
  r.separates = {r.naive_intensity, r.ridge, r.ridge,
                 a == Outcome::fails || b == Outcome::fails ? Outcome::fails
                 : a == Outcome::holds && b == Outcome::holds ? Outcome::holds
                                                              : Outcome::inconclusive};
  return r;
}

Roofline judge_roofline(const Roofs& roofs, std::size_t d) {
  return judge_roofline(roofs.peak(), roofs.copy_gbs, d, kTiledBlockRows, std::min(roofs.fma_before, roofs.fma_after));
}

}  // namespace attn
