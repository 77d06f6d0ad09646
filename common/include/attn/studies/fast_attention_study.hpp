// Chapter 11's measurements, each returned with its verdict (attn/studies/verdict.hpp): the roofs
// (the CPU's FMA peak, OpenBLAS's sgemm, the copy bandwidth), measured before and after the sweep;
// where the naive three-pass attention spends its time, pass by pass, against what memory at copy
// speed and the same exps on one cached row would take; the tiled kernel against its double
// reference; the sweep of attn/studies/attention_speed.hpp summarised (skipped rows counted as
// skipped, rows above sgemm explained by the kernels that ran).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/studies/attention_speed.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// ---- the roofs ------------------------------------------------------------------------------------
struct Roofs {
  std::string unit;                  // the widest vector unit ("avx512", …)
  int threads = 1;                   // threads of the FMA loop and the tiled kernel
  std::string tiled_path;            // the tiled kernel's path here (fast_attention_path: "avx512", "portable")
  std::string blas_kernel;           // the OpenBLAS kernel in use (openblas_get_corename)
  int blas_threads = 1;
  bool kernel_from_user = false;     // OPENBLAS_CORETYPE was set: the kernel is the one asked for
  std::string better_kernel;         // this CPU's better OpenBLAS kernel, "" when the kernel in use is it
  double fma_before = 0.0, fma_after = 0.0;      // GFLOP/s
  double sgemm_before = 0.0, sgemm_after = 0.0;  // GFLOP/s, 2048³
  double copy_gbs = 0.0;
  std::size_t l2_bytes = 0;          // one core's L2 cache as the OS reports it (0: unknown)
  // How the FMA peak was computed: the loop's work and its best round's time, before and after.
  int lanes = 1, fma_accumulators = 0;
  long long fma_iterations = 0;
  double fma_flops = 0.0, fma_seconds_before = 0.0, fma_seconds_after = 0.0;
  double clock_ghz = 0.0;             // the OS's figure (cpu_clock_ghz), 0: unknown
  double load_before = NAN, load_after = NAN;  // the load average when each FMA peak was measured
  unsigned cpus = 0;                  // the CPUs the OS offers
  std::string cpu_model;              // cpu_model_name(): /proc/cpuinfo's "model name" ("" unknown)
  double peak() const { return std::max(fma_before, fma_after); }
  // peak = threads · lanes · 2 flops per FMA · FMAs/cycle · Hz, with the OS's clock, for a given
  // number of vector FMAs issued per cycle per thread (0 when the clock is unknown).
  double theory_gflops(double fma_per_cycle) const { return threads * lanes * 2.0 * fma_per_cycle * clock_ghz; }
  // What the measured peak means in that formula: vector FMAs per cycle per thread (0: clock unknown).
  double measured_fma_per_cycle() const { return clock_ghz > 0 ? fma_before / theory_gflops(1.0) : 0.0; }
  double sgemm() const { return std::max(sgemm_before, sgemm_after); }
  // The better peak in that formula: vector FMAs per cycle per thread (0: clock unknown).
  double best_fma_per_cycle() const { return clock_ghz > 0 ? peak() / theory_gflops(1.0) : 0.0; }
  // sgemm_within_peak: sgemm ≤ the FMA peak (fails when other programs slowed the peak loop).
  Verdict sgemm_within_peak;
  // peak_within_clock: best_fma_per_cycle ≤ kMaxFmaPerCycle, the FMA units a core has at most; above
  // it the cores ran faster than the OS's clock (turbo); inconclusive when the clock is unknown.
  Verdict peak_within_clock;
  // sgemm_steady, peak_steady: the larger of a roof's two measurements over the smaller ≤
  // kRoofSteadyRatio; when it fails the roof moved with the load between them, and a verdict that
  // divides by that roof is not judged (Outcome::too_noisy). Inconclusive when a measurement is ≤ 0.
  Verdict sgemm_steady, peak_steady;
};
inline constexpr double kMaxFmaPerCycle = 2.0;
inline constexpr double kRoofSteadyRatio = 1.25;
Roofs judge_roofs(Roofs r);
// The FMA peak, sgemm and the copy bandwidth, before the sweep (the "after" fields equal them).
Roofs measure_roofs(int threads);
// The FMA peak and sgemm again (other programs share the machine): fills the "after" fields.
void remeasure_roofs(Roofs& r);

// ---- the naive way, pass by pass -----------------------------------------------------------------
// The three passes of naive_attention_forward timed one by one at one size (heads × n × n floats),
// best of `repeats`; bytes: the least main-memory traffic of each pass (S written; S read and P
// written; P read), 16·n² bytes per head in all; cached_softmax_seconds: the same number of row
// softmaxes on one row per thread that stays in the cache (the softmax and its cached twin keep
// their median runs too, for memory_gap_measured).
struct NaivePass {
  const char* name = "";   // "S = Q·Kᵀ/√d", "P = softmax(S)", "O = P·V" (not translated: formulas)
  double seconds = 0.0, flops = 0.0, bytes = 0.0;
  double memory_seconds = 0.0;   // bytes / copy bandwidth
};
inline constexpr double kMemoryBoundShare = 0.5;  // memory explains at least half of the time
inline constexpr double kCacheMissRatio = 1.5;    // softmax from memory ≤ 1.5 × the cached one: exp-bound
struct NaivePhases {
  std::size_t n = 0, d = 0, heads = 0;
  int repeats = 0;  // timed runs per pass (best kept)
  NaivePass qk, softmax, pv;
  double cached_softmax_seconds = 0.0;
  // The median runs of the softmax and of its cached twin (0: not measured, the best is used): the
  // spread a difference between the two must exceed to be read as memory's share.
  double softmax_median_seconds = 0.0, cached_softmax_median_seconds = 0.0;
  int softmax_runs = 0;           // the fewer timed runs of the two
  double softmax_spread() const;  // the larger (median − best) / best of the two; NaN under two runs
  double copy_gbs = 0.0, sgemm_gflops = 0.0, fma_peak_gflops = 0.0;
  double seconds() const { return qk.seconds + softmax.seconds + pv.seconds; }
  double gflops() const { return (qk.flops + pv.flops) / seconds() * 1e-9; }
  // The cap memory alone would set: copy bandwidth × d/4 flop per byte (4·d flops per 16 bytes).
  double memory_cap_gflops() const { return copy_gbs * double(d) / 4.0; }
  const NaivePass& slowest() const;
  // memory_sets_speed: Σ memory_seconds / seconds() ≥ kMemoryBoundShare;
  // softmax_exp_bound: softmax.seconds ≤ kCacheMissRatio × cached_softmax_seconds (its exps, not
  // cache misses, set the softmax's time); memory_gap_measured: the softmax's excess over the cached
  // run, (softmax − cached) / softmax, is at least softmax_spread() (holds: the gap is measured;
  // fails: it lies within the runs' spread, and no share of it can be given to memory).
  Verdict memory_sets_speed, softmax_exp_bound, memory_gap_measured;
};
NaivePhases judge_naive_phases(NaivePhases p);
NaivePhases measure_naive_phases(std::size_t n, std::size_t d, std::size_t heads, const Roofs& roofs, int threads,
                                 int repeats = 3);
// The size step 2 measures: the largest of `sizes` up to 2048 whose n×n matrices fit in
// max_naive_mib (else the smallest of `sizes`).
std::size_t naive_phase_size(const std::vector<std::size_t>& sizes, std::size_t heads, double max_naive_mib);

// ---- the tiled kernel against its reference --------------------------------------------------
struct FastKernelCheck {
  std::size_t n = 0, d = 0;
  bool causal = false;
  Mat output, reference;  // head 0, (n, d); the reference in double, rounded to float
  double max_diff = 0.0;
  Verdict exact;          // max_diff ≤ kTiledTol
};
inline constexpr double kTiledTol = 1e-5;  // O(1) outputs, float sums over ≤ 129 keys
// max_diff and exact from output and reference.
FastKernelCheck judge_fast_kernel(FastKernelCheck c);
std::vector<FastKernelCheck> fast_kernel_checks(std::uint64_t seed, std::size_t n = 129, std::size_t d = 64);

// ---- the online softmax by hand ---------------------------------------------------------------
// One query row of a few scores against scalar values, folded in tiles of `tile` keys with
// online_softmax_update (attn/attention/online_softmax.hpp): after each tile the running max m,
// the rescale e^(m_old − m) of what was summed before, the running sum ℓ and the unnormalised
// output O = Σ e^(s_j − m)·v_j; then O/ℓ against the plain softmax(s)·v of the same row.
struct OnlineSoftmaxTile {
  std::size_t begin = 0, end = 0;   // the tile's keys [begin, end)
  double m = 0, rescale = 0, l = 0, o = 0;
};
struct OnlineSoftmaxExample {
  std::vector<float> scores, values;
  std::vector<OnlineSoftmaxTile> tiles;
  double online = 0, plain = 0;     // O/ℓ after the last tile; softmax(s)·v in one pass
  Verdict same;                     // |online − plain| ≤ kTiledTol
};
OnlineSoftmaxExample online_softmax_example(const std::vector<float>& scores = {1.0f, 2.0f, 3.0f, 0.5f},
                                            const std::vector<float>& values = {1.0f, 2.0f, 3.0f, 4.0f},
                                            std::size_t tile = 2);
// `same` from online and plain.
OnlineSoftmaxExample judge_online_softmax_example(OnlineSoftmaxExample e);

// ---- the sweep ----------------------------------------------------------------------------------
// Every (d, causal, n, impl) of the sweep, in that order; causal: "no", "yes" or "both".
std::vector<AttentionBenchRow> run_sweep(const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& dims,
                                         std::size_t heads, const std::string& causal, const Roofs& roofs,
                                         const AttentionBenchOptions& opts);
// pct_of_sgemm and pct_of_peak of every measured row from the final roofs.
void apply_roofs(std::vector<AttentionBenchRow>& rows, const Roofs& roofs);

// A sweep row is noisy when its median run took more than kNoisyRowRatio × its best run: the load
// moved while it was timed. Noisy rows are marked in the table and kept out of the summary's
// figures and verdicts; a row timed once (its first run took over kRepeatOnceS) has no spread and is
// kept.
inline constexpr double kNoisyRowRatio = 1.25;
bool row_noisy(const AttentionBenchRow& r);

// A figure within kNearShare of a threshold (|x − bound| ≤ kNearShare · bound) is at the edge: the
// verdict stands, and the chapter says the load could tip it.
inline constexpr double kNearShare = 0.10;
bool near_bound(double x, double bound);

inline constexpr std::size_t kLargeN = 2048;             // "large": n ≥ 2048
inline constexpr double kNearSgemm = 75.0, kNearSgemmPartly = 50.0;  // % of sgemm
inline constexpr double kSpeedup = 2.0;                   // tiled over naive at the same size
inline constexpr double kNearPeakPct = 90.0;              // % of the FMA peak a row counts as near it at
inline constexpr double kTrendFall = 0.8;                 // a series "falls with n" below 80% of its start
struct SweepSummary {
  bool has_large = false;              // some measured row has n ≥ kLargeN: the summary covers those only
  double tiled_sgemm = 0.0, tiled_peak = 0.0, naive_sgemm = 0.0, naive_peak = 0.0;  // best % in range
  double tiled_sgemm_median = 0.0;     // the median tiled row's % of sgemm in range
  std::size_t tiled_measured = 0;      // tiled rows in range
  std::size_t best_n = 0, best_d = 0;  // the best tiled row in range (with best_causal)
  bool best_causal = false;
  std::size_t naive_measured = 0, naive_skipped = 0;  // naive rows in range (measured: not noisy)
  std::size_t tiled_noisy = 0, naive_noisy = 0;       // rows in range left out as noisy (row_noisy)
  std::size_t single_run = 0;                         // measured rows in range timed once (no spread)
  std::size_t above_sgemm = 0, above_peak = 0;        // measured rows above 100%
  // The measured row with the highest % of the FMA peak (any n), and the verdict that no row
  // passes 100% (it fails only when the peak was measured at another moment of the load).
  double highest_peak_pct = 0.0, highest_peak_gflops = 0.0;
  std::size_t highest_peak_n = 0, highest_peak_d = 0;
  bool highest_peak_causal = false;
  Verdict within_peak;
  // near_peak: the highest row reaches kNearPeakPct% of the FMA peak or more (holds). The tiled kernel's
  // uncounted work (the max, the exp polynomial, the sums) runs on the same units as its counted FMAs,
  // so a row that close to a loop of FMAs alone says the peak was more likely measured low.
  Verdict near_peak;
  // The fall with n: the first tiled series of the table (its smallest d, non-causal when swept), from
  // its smallest n to its largest, measured rows only. trend_ratio: GFLOP/s at the largest n over that at
  // the smallest; trend_falls: ≤ kTrendFall holds (fewer than two rows: inconclusive).
  std::size_t trend_d = 0, trend_n_first = 0, trend_n_last = 0;
  bool trend_causal = false;
  double trend_gflops_first = 0.0, trend_gflops_last = 0.0, trend_ratio = NAN;
  Verdict trend_falls;
  std::size_t speedup_n = 0;           // the largest n with both measured
  std::size_t speedup_pairs = 0;       // (d, causal) pairs with both measured there
  double speedup = 0.0, speedup_min = 0.0;  // tiled GFLOP/s / naive GFLOP/s there: the best, the least
  std::size_t speedup_d = 0;           // the best pair's d and mask
  bool speedup_causal = false;
  // Working memory at the largest n and d of the sweep (beyond Q, K, V, O; counted, not measured):
  std::size_t work_n = 0, work_d = 0;
  double tiled_work_mib = 0.0, naive_work_mib = 0.0;  // naive: what it needs there, run or skipped
  bool naive_work_skipped = false;                    // the naive row there was skipped
  double tiled_work_smallest_mib = 0.0;               // the tiled kernel's at the smallest n, same d
  std::size_t work_smallest_n = 0;
  // tiled_near_sgemm: the median tiled % of sgemm in range ≥ kNearSgemm (partly ≥ kNearSgemmPartly);
  // tiled_faster: the least speedup at speedup_n ≥ kSpeedup (inconclusive when no size has both).
  // Both use rows that are not noisy only; too_noisy when every row they could use is noisy, and
  // tiled_near_sgemm too_noisy when sgemm itself moved (summarize_sweep with the roofs).
  // Timed once, a row has no spread to judge it by: when every tiled row in range was timed once, or
  // every (d, mask) pair at speedup_n has a row timed once, that verdict is inconclusive (not judged)
  // and the flag below says why.
  Verdict tiled_near_sgemm, tiled_faster;
  bool near_sgemm_single_only = false, faster_single_only = false;
  bool sgemm_moved = false;  // the roofs' sgemm_steady failed: tiled_near_sgemm is not judged
};
SweepSummary summarize_sweep(const std::vector<AttentionBenchRow>& rows);
// The same, with the run's roofs: when sgemm's two measurements differ by more than kRoofSteadyRatio
// (roofs.sgemm_steady fails), tiled_near_sgemm, a percentage of sgemm, becomes too_noisy.
SweepSummary summarize_sweep(const std::vector<AttentionBenchRow>& rows, const Roofs& roofs);

// ---- step 2's passes against step 4's naive row of the same size ---------------------------------
// The same three passes, timed pass by pass in step 2 and whole (naive_attention_forward) in step 4,
// at different moments: agree holds when the two times are within kRoofSteadyRatio of each other
// (measured: the larger over the smaller); no such row (skipped, or not in the sweep): inconclusive.
struct NaiveRecheck {
  std::size_t n = 0, d = 0;
  double phases_seconds = 0.0;  // step 2: the three passes' best times added
  double row_seconds = 0.0;     // step 4: the non-causal naive row's best run (0: none)
  int row_runs = 0;
  Verdict agree;
  // Where the tiled kernel wins: step 2's two products alone (no softmax at all) against step 4's
  // tiled row of the same size, non-causal; products_slower holds when they took at least
  // kRoofSteadyRatio × its whole time (its own products beat OpenBLAS's too), inconclusive without
  // that row.
  double products_seconds = 0.0, tiled_seconds = 0.0;
  Verdict products_slower;
};
NaiveRecheck recheck_naive(const NaivePhases& p, const std::vector<AttentionBenchRow>& rows);

// ---- the roofline, with the roofs of the whole run -----------------------------------------------
// Flops per byte of main-memory traffic: naive 4·d flops per 16 bytes of S and P (d/4); tiled: a
// block of `block_rows` queries does 4·block_rows·n·d flops while K and V (8·n·d bytes) stream past
// it (block_rows/2). The ridge, peak / copy bandwidth, is where the two roofs meet: below it the
// roofline calls a kernel memory-bound, above it compute-bound.
// The ridge is uncertain: the FMA peak was measured twice and may differ, and the copy bandwidth once
// (best of 3). Its margin is the larger of the gap between the two peaks' ridges and kRidgeMargin of
// the ridge; an intensity within the margin of the ridge is on neither side (inconclusive).
inline constexpr std::size_t kTiledBlockRows = 96;  // FastAttentionConfig's default block_q
inline constexpr double kRidgeMargin = 0.10;
struct Roofline {
  double peak_gflops = 0.0, copy_gbs = 0.0;
  double peak_low_gflops = 0.0;  // the lower of the two FMA-peak measurements
  double ridge = 0.0;            // flop/B, with the better peak
  double margin = 0.0;           // flop/B: max(ridge − peak_low / copy, kRidgeMargin · ridge)
  std::size_t d = 0, block_rows = 0;
  double naive_intensity = 0.0, tiled_intensity = 0.0;  // flop/B
  // naive_below_ridge: naive_intensity ≤ ridge − margin holds (the roofline calls it memory-bound),
  // ≥ ridge + margin fails, between them inconclusive; tiled_above_ridge: tiled_intensity ≥ ridge +
  // margin holds (compute-bound), ≤ ridge − margin fails. NaN roofs: inconclusive.
  Verdict naive_below_ridge, tiled_above_ridge;
  // separates: the roofline puts the two on different roofs, naive under memory's slope and tiled
  // under the flat FMA roof, so arithmetic per byte can explain the speedup (holds); fails when
  // either verdict fails (both above the ridge: by this measure both are compute-bound, and the
  // difference is not the memory roof's); inconclusive otherwise.
  Verdict separates;
};
// peak_low_gflops: the other FMA-peak measurement (NaN or above peak_gflops: the peak alone).
Roofline judge_roofline(double peak_gflops, double copy_gbs, std::size_t d, std::size_t block_rows = kTiledBlockRows,
                        double peak_low_gflops = NAN);
// With the run's roofs: the better FMA peak, the other one for the margin.
Roofline judge_roofline(const Roofs& roofs, std::size_t d);

// ---- the GPU step ------------------------------------------------------------------------------
struct GpuStep {
  enum class State { not_built, no_device, no_dims, measured } state = State::not_built;
  std::string device, error;
  int compute_capability = 0, multiprocessors = 0, gemm = 0;
  double sgemm_tflops = 0.0, bf16_tflops = 0.0;
  std::vector<GpuAttentionRow> rows;
};

}  // namespace attn
