// Chapter 12's measurements of the state-space layer (attn/attention/ssd.hpp): the three forms
// against the float64 scan on a tiny example and on awkward sizes; their time as T grows on this
// CPU, with the crossover; the family of recurrent mixers on one tiny input; and the cost of one
// generated token with a KV cache against a fixed-size state as the context grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/studies/verdict.hpp"
#include "attn/tensor/tensor.hpp"

namespace attn {

// ------------------------------------------------------------------ 1. one layer, three ways
struct SsdExample {
  Mat x, b, c;   // (T, P), (T, N), (T, N)
  Vec log_a;     // (T,)
  Mat mask;      // L (T, T)
  Mat y_scan, y_quadratic, y_chunked;
  MatD y_reference;
  std::size_t chunk = 0;
};
// The hand-checkable example: T = 5, N = 1, P = 2, chunk 2, round numbers (decays 1/2 and 1/4).
SsdExample ssd_tiny_example();
struct SsdAgreement {
  double err_scan = 0, err_quadratic = 0, err_chunked = 0;  // max |form − float64| over every size tried
  std::vector<std::string> sizes;                            // "T=1 chunk 4", …
  Verdict agree;                                             // worst error ≤ 1e-5
};
// The sizes ssd_agreement tries: T, N, P and the chunk Q (T = 1, and T not a multiple of Q).
struct SsdSize { std::size_t t, n, p, chunk; };
std::vector<SsdSize> ssd_agreement_sizes();
SsdAgreement ssd_agreement(std::uint64_t seed);
SsdAgreement judge_ssd_agreement(double err_scan, double err_quadratic, double err_chunked);

struct SsdTimingRow {
  std::size_t t = 0;
  double scan_s = 0, quadratic_s = 0, chunked_s = 0;
};
// One interval of the timing table whose growth is off its form's cost: from_t → to_t, the time
// grew `growth`× where the cost's exponent predicts `expected`× (local log-log slope off by > 0.5).
struct SsdTimingOutlier {
  const char* form = "";  // "scan", "quadratic", "chunked" (translated where printed)
  std::size_t from_t = 0, to_t = 0;
  double growth = 0, expected = 0;
};
struct SsdTiming {
  std::size_t n = 0, p = 0, chunk = 0;
  std::vector<SsdTimingRow> rows;
  std::vector<SsdTimingOutlier> outliers;  // every interval off its cost, in table order
  std::size_t crossover_t = 0;   // first T where the quadratic form is slower than the scan (0: none)
  double chunked_vs_scan = 0;    // scan time / chunked time at the largest T (> 1: chunked faster)
  // Log-log slopes of time against T, each fitted only to its form's accepted lengths: a length at
  // an end of one of that form's off-cost intervals (outliers) is left out; fewer than
  // kSsdFitPoints accepted: NaN, and the slope's verdict is too_noisy (not judged).
  double quadratic_slope = 0, scan_slope = 0, chunked_slope = 0;
  std::size_t scan_points = 0, quadratic_points = 0, chunked_points = 0;  // the lengths each fit used
  Verdict chunked_faster;        // chunked_vs_scan ≥ 1.2 holds, ≥ 0.8 partly (par), else fails
  // Each slope against its cost's exponent (scan 1, quadratic 2, chunked 1 while Q is fixed):
  // |slope − expected| ≤ 0.25 holds, ≤ 0.5 partly, else fails.
  Verdict scan_linear, quadratic_square, chunked_linear;
  // The speed-up at the largest T is quoted only when the scan's and the chunked form's timings grew
  // as their costs say: the number of their off-cost intervals, at most 0 holds.
  Verdict speedup_clean;
};
inline constexpr std::size_t kSsdFitPoints = 2;  // the fewest lengths a slope is fitted to: a line
// Each length timed in two passes over the table (best of 5 per cell per pass, the better pass
// kept), so that a burst of load on one pass does not set a cell.
SsdTiming ssd_timing(const std::vector<std::size_t>& lengths, std::size_t n, std::size_t p, std::size_t chunk);
// The crossover, speed-up, slopes and verdict from measured rows (what ssd_timing returns).
SsdTiming judge_ssd_timing(std::vector<SsdTimingRow> rows, std::size_t n, std::size_t p, std::size_t chunk);

// ------------------------------------------------------------------ 2. the family on one page
// Five tokens, keys of unit length: k_A → v_1, k_B → v_2, k_A → v_3 (written again), k_B → v_4, then
// a query for k_A. Softmax attention averages what it sees at k_A, linear attention adds what was
// written at k_A (and leaks k_B's), the decay favours the recent write, the delta rule keeps only
// the last value written at k_A.
struct FamilyMember {
  std::string id;         // "softmax", "linear", "decay", "delta"
  std::size_t state_floats = 0;  // per head after the 5 tokens (softmax: its KV cache)
  Mat outputs;            // (5, P)
  double read_error = 0;  // max_i |y_last,i − v_3,i|: the query's read against the latest value at k_A
};
struct FamilyDemo {
  Mat q, k, v;            // (5, N), (5, N), (5, P)
  double decay = 0, beta = 0;
  double softmax_scale = 0;  // 1/√N
  Vec softmax_weights;       // (5,) the query's softmax weights over the five tokens
  std::vector<FamilyMember> members;
  Verdict delta_overwrites;  // the delta rule's read error ≤ 1e-5
  Verdict linear_mixes;      // linear attention's read error ≥ 0.5 (it returns a blend)
  // A third key C = (0.6, 0.8), not orthogonal to A, written after the five tokens (C → v5), then A
  // asked again: with more keys than N = 2 dimensions the delta rule's write at C moves A's value.
  Mat crowded_k;             // (1, 2) the key C
  Mat crowded_v;             // (1, 2) v5
  double crowded_error = 0;  // max_i |read of A − v3| after the write at C
  Verdict delta_crowded;     // crowded_error ≥ 0.1: the overwrite at C disturbs A
};
FamilyDemo family_demo();

// ------------------------------------------------------------------ 4. one generated token
struct DecodeCostRow {
  std::size_t context = 0;
  double attention_s = 0, ssm_s = 0;           // one decode step, the best of the timed runs
  std::size_t kv_bytes = 0, state_bytes = 0;   // what the step has to keep
  double attention_median_s = 0, ssm_median_s = 0;  // the median runs (0: not measured, the best is used)
};
struct DecodeCost {
  std::size_t d_model = 0, heads = 0, state_n = 0;
  std::vector<DecodeCostRow> rows;
  double attention_slope = 0, ssm_slope = 0;   // log-log slope of step time against context (every row)
  // Attention's slope over the accepted contexts only (a row at an end of the steepest interval, when
  // its second timing disagreed with the first — steepest_repeats fails — is left out);
  // attention_grows and attention_linear judge it; fewer than kSsdFitPoints contexts: NaN, both
  // too_noisy (judge_decode_ratio sets them).
  double attention_fit_slope = 0;
  std::size_t attention_fit_points = 0;
  std::vector<std::size_t> attention_fit_contexts;  // the contexts that fit used, in table order
  double ratio_at_longest = 0;                 // attention time / SSM time at the longest context (best runs)
  double median_ratio_at_longest = 0;          // the same from the median runs
  // Is the longest context's ratio measured, or the load? longest_spread: the larger median / best of
  // its attention and SSM runs (longest_steady: ≤ kDecodeSteadyRatio). ratio_context: the longest
  // context whose attention and SSM runs are both steady (0: none), and the ratio there, best and
  // median runs: the figure the chapter quotes when the longest one is not steady. A row at an end of
  // a steepest interval whose checks failed (not steady, or timed again apart) is not steady
  // (judge_decode_ratio).
  double longest_spread = 0;
  Verdict longest_steady;
  std::size_t ratio_context = 0;
  double ratio_best = 0, ratio_median = 0;
  int runs = 0;                                // timed runs per cell (the fewest of any cell)
  // A 256 MiB memory copy timed in the same step (bytes read + written / best time, GB/s; 0: not
  // timed), the yardstick for the step's rate of reading its KV cache.
  double copy_gbs = 0;
  // The interval of the table where attention's time grew most for its growth in context:
  std::size_t steepest_from = 0, steepest_to = 0;
  double steepest_growth = 0, steepest_context_growth = 0;
  std::size_t steepest_kv_from = 0, steepest_kv_to = 0;
  // jump_at_cache: the steepest interval is where the KV cache outgrows cache_bytes (holds) or not
  // (fails); inconclusive when the cache size is unknown or attention grows as its cost says.
  double bytes_ratio_at_longest = 0;           // KV-cache bytes / state bytes there
  Verdict attention_grows;                     // attention slope ≥ 0.5 (time grows with the context)
  Verdict attention_linear;                    // |attention slope − 1| ≤ 0.25 (O(t·d), as the cost says)
  Verdict ssm_flat;                            // SSM slope ≤ 0.2 (constant per token)
  std::size_t cache_bytes = 0;                 // one core's L2 cache (0: unknown)
  std::size_t cache_passed_at = 0;             // first context whose KV cache exceeds it (0: none)
  Verdict jump_at_cache;
  // Is the steepest step measured, or the load? steepest_spread: the larger median / best of its two
  // ends (steepest_steady: ≤ kDecodeSteadyRatio); the same two contexts timed again, alternately, so
  // that a change of load falls on both (steepest_repeat_growth: the growth of those best runs, 0
  // when not re-timed), against the first growth (steepest_repeats: the larger over the smaller ≤
  // kDecodeSteadyRatio; inconclusive until judge_steepest_repeat).
  double steepest_spread = 0, steepest_repeat_growth = 0;
  Verdict steepest_steady, steepest_repeats;
  // The jump is a measured cost only when both hold (a cause is then worth naming).
  bool steepest_measured() const { return steepest_steady.holds() && steepest_repeats.holds(); }
};
inline constexpr double kDecodeSteadyRatio = 1.25;
// steepest_repeat_growth and steepest_repeats from a second timing of the steepest interval (then
// judge_decode_ratio again).
void judge_steepest_repeat(DecodeCost& c, double repeat_growth);
// longest_spread, longest_steady, ratio_context and its ratios from the rows; a row at an end of the
// steepest interval counts as not steady when that interval failed a check (steepest_steady or
// steepest_repeats fails).
void judge_decode_ratio(DecodeCost& c);
// What the steepest step's two checks allow the chapter to say about its jump. The median / best
// spread is the load's mark; the alternating retime changes the order of the runs as well (back to
// back, a run may find the KV cache still in the CPU's caches; alternately, the other context has
// just displaced it), so a retime that disagrees with steady runs points at the order, not the load.
enum class DecodeJumpReading {
  measured,         // steady runs, and the retime agrees: the step's own cost; a cause may be named
  reproduced,       // runs not steady, yet the retime agrees: the step's own cost, cause not measured
  order_dependent,  // steady runs, the retime disagrees: the jump depends on how it is timed
  unsteady_apart,   // runs not steady and the retime disagrees: load or order, neither measured
  unsteady_alone,   // runs not steady, and no retime: the load may have moved it
  unchecked,        // steady runs, no retime
};
DecodeJumpReading read_steepest_jump(const DecodeCost& c);
DecodeCost decode_cost(const std::vector<std::size_t>& contexts, std::size_t d_model, std::size_t heads,
                       std::size_t state_n);
DecodeCost judge_decode_cost(std::vector<DecodeCostRow> rows, std::size_t d_model, std::size_t heads,
                             std::size_t state_n, std::size_t cache_bytes = 0);
// The L2 cache of one core as the OS reports it, in bytes; 0 when it reports none.
std::size_t l2_cache_bytes();

}  // namespace attn
