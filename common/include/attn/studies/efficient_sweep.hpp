// Chapter 06's sweep: every efficient attention variant against exact (full, materialised)
// attention on the same random inputs, for growing n: time (best and median of several runs),
// working memory, error, the visible (query, key) pairs, and the fitted log-log slope of time
// against n with its standard error. Each slope is judged against the variant's claimed exponent
// (2 for full and tiled attention, 1 for the others), allowing for the measured noise; and where a
// sparse variant is slower than full attention, the cost per visible pair says why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention/online_softmax.hpp"
#include "attn/studies/verdict.hpp"
#include "attn/tensor/tensor.hpp"

namespace attn {

struct VariantPoint {
  std::size_t n = 0;
  double seconds = 0.0;         // the fastest run (the least disturbed one on a shared machine)
  double median_seconds = 0.0;  // the median run
  int runs = 0;
  double pairs = 0.0;           // visible (query, key) pairs computed; 0 for linear attention (none)
  double work_mib = 0.0;        // counted working memory beyond Q, K, V and the output
  double rss_mib = -1.0;        // measured growth of peak RSS over one run (-1: unavailable)
  double err_vs_full = -1.0;    // max |variant − full attention| (-1: full attention skipped at this n)
  double out_max = 0.0;         // max |output|: the scale err_vs_full is read against
  // Process CPU time / wall time of the fastest run: near 1 (one thread) or above (BLAS threads)
  // when the run had the cores to itself; far below 1 when other programs took them.
  double cpu_share = 1.0;
  bool skipped = false;
  std::string note;
  // (median − best)/best: how far a typical run strays from the best one.
  double spread() const { return seconds > 0 ? median_seconds / seconds - 1.0 : 0.0; }
  double ns_per_pair() const { return pairs > 0 ? seconds * 1e9 / pairs : 0.0; }
};

// Least-squares fit of log(time) on log(n): slope and its standard error (NaN with fewer than 3
// points for the error, fewer than 2 for the slope).
struct LogLogFit {
  double slope = 0.0, standard_error = 0.0;
  std::size_t points = 0;
};
LogLogFit loglog_fit(const std::vector<double>& x, const std::vector<double>& y);

// Chapter 06's cost per visible pair draws no break-even share when a cell's spread is above this.
constexpr double kPairCostSpread = 0.5;

// A point whose fastest run got less than this share of a core ran on a contended machine.
constexpr double kContendedCpuShare = 0.5;

// noise > tolerance → too_noisy (not judged: the fit cannot tell the exponent to within its own
// tolerance); else |slope − claimed| ≤ tolerance → holds; ≤ tolerance + noise → inconclusive
// ("within noise"); else fails. noise = max(2 standard errors, |slope of the best runs − slope of
// the medians|). measured = |slope − claimed|, bound = tolerance, partly = tolerance + noise. A NaN
// slope or noise is inconclusive.
constexpr double kExponentTolerance = 0.2;  // a slope this close to its exponent reads as that exponent
Verdict judge_exponent(double slope, double claimed, double noise, double tolerance = kExponentTolerance);

struct VariantSweep {
  std::string name;        // "full", "window", …
  std::string complexity;  // "O(n²·d)", …
  std::string memory;      // working memory where it is not the point of the variant's cost: "O(tile)"
  double claimed_exponent = 1.0;
  std::vector<VariantPoint> points;
  LogLogFit fit;           // of the best runs, over the points with n >= fit_from
  double median_slope = 0.0;  // the same fit of the median runs
  double noise = 0.0;      // max(2·standard error, |slope − median_slope|); NaN with < 3 sizes
  Verdict exponent;        // judge_exponent(fit.slope, claimed_exponent, noise); on a contended
                           // machine (min_cpu_share < kContendedCpuShare) too_noisy, whatever the slope
  double min_cpu_share = 1.0;  // the smallest cpu_share over the fitted points
  // The smallest measured n from which this variant is clearly faster than full attention (see
  // clearly_faster) at every larger n measured; 0 if never.
  std::size_t faster_from = 0;
  std::vector<std::size_t> faster_at;  // every n where it was clearly faster than full attention
  // A compared cell (this variant's or full attention's at the same n) got under
  // kContendedCpuShare of a core: its times include waiting, so faster_from is not a result.
  bool crossover_contended = false;
  double largest_spread() const;
};

// Faster beyond noise: p's best run, grown by the larger spread of the two points, still beats
// full's best run (a 6% gap with a 124% spread is not a result).
bool clearly_faster(const VariantPoint& p, const VariantPoint& full);

// Chapter 06's cost per visible pair: a sparse variant's smallest-n cell against full attention's
// at the same n (best runs), compared only where both cells are accepted: two runs or more (one
// run measures no spread), spread at most kPairCostSpread and a fastest run given at least
// kContendedCpuShare of a core (the same bar as the step's slopes and crossovers). Outcomes:
//   none       nothing to compare (a cell skipped, no pairs, or the variant faster overall there)
//   all_pairs  its pattern covers every pair at this n: full attention by another route
//   too_noisy  a cell is not accepted: no ratio is judged from it
//   dearer     more ns per pair; at these costs it wins only below break_even % of the n² pairs
// (Slower overall with fewer pairs is always dearer per pair: there is no "cheaper" case.)
enum class PairCostOutcome { none, all_pairs, too_noisy, dearer };
struct PairCost {
  std::size_t n = 0;
  double ns = 0.0, full_ns = 0.0, ratio = 0.0;  // ratio = ns / full_ns
  double share = 0.0;                           // % of the n² pairs the variant computes
  double spread = 0.0, cpu_share = 1.0;         // the worse of the two cells
  double break_even = 0.0;                      // 100 / ratio (dearer only)
  PairCostOutcome outcome = PairCostOutcome::none;
};
PairCost pair_cost(const VariantPoint& variant, const VariantPoint& full);

struct EfficientSweepConfig {
  std::size_t d = 64;
  std::size_t window = 255;       // w: keys one query sees, itself included (odd: (w − 1)/2 each side)
  std::size_t dilation = 2;
  std::size_t block = 64;         // BigBird block, and the tiled variant's tile
  std::size_t random_blocks = 2;  // BigBird
  std::size_t global_blocks = 1;  // BigBird; Longformer: token 0 is global
  double max_full_mib = 2048.0;   // full attention (scores + weights) beyond this is skipped
  int repeats = 5;                // runs per point (fewer once a point has used budget_s)
  double budget_s = 2.0;
  std::size_t fit_from = 1024;    // the slope is fitted over n >= fit_from
  std::uint64_t seed = 6;
};

struct EfficientSweep {
  std::vector<VariantSweep> variants;  // full first
  double llc_bytes = 0.0;  // the last-level cache the CPU reports (sweep_efficient_variants; 0: unknown)
  const VariantSweep& at(const std::string& name) const;
};

// The size of the largest-level CPU cache, as Linux reports it (/sys/devices/system/cpu/cpu0/cache);
// 0 when it cannot be read.
double last_level_cache_bytes();

// Full attention's fitted slope split in two: 2 for the work (n² score elements, counted) and the
// rest, slope − 2, for each element's cost, measured from lo_n to hi_n (the smallest and largest
// fitted n where it ran): lo_ns, hi_ns per element. cache_from: the smallest fitted n whose counted
// working memory (work_mib) exceeds llc_bytes (0: none does, or llc_bytes is 0). lo_n == hi_n
// (both 0) when fewer than two sizes were fitted.
struct ElementCost {
  std::size_t lo_n = 0, hi_n = 0, cache_from = 0;
  double lo_ns = 0.0, hi_ns = 0.0, cpu_lo = 1.0, cpu_hi = 1.0;  // cpu: the fastest run's share of a core
  double slope = 0.0, element_slope = 0.0;
  double growth() const { return lo_ns > 0 ? hi_ns / lo_ns : 0.0; }
};
ElementCost full_element_cost(const EfficientSweep& s, std::size_t fit_from);

// Each variant's error at the largest n where full attention ran, against the scale of full
// attention's outputs there (max |output|): answering 0 everywhere is off by exactly that scale,
// so beats_zero holds when ratio = err / scale ≤ 1 and fails above. out_ratio: the variant's own
// max |output| over full attention's. err < 0 (no comparison) leaves beats_zero inconclusive.
struct ErrorAgainstZero {
  std::string name;
  std::size_t n = 0;
  double err = -1.0, scale = 0.0, ratio = 0.0, out_ratio = 0.0, work_mib = 0.0;
  Verdict beats_zero;
};
std::vector<ErrorAgainstZero> errors_against_zero(const EfficientSweep& s);

// Runs every variant at every n (non-causal, one head, Q, K, V ~ N(0, 1)).
EfficientSweep sweep_efficient_variants(const std::vector<std::size_t>& sizes, const EfficientSweepConfig& cfg);
// The slopes, verdicts and crossovers of a sweep, from its points (sweep_efficient_variants calls it;
// tests call it on points they make).
void judge_sweep(EfficientSweep& s, std::size_t fit_from);

// Autoregressive generation of `steps` tokens with and without the KV cache (seconds: the best run
// and the median of up to 5 runs with the cache, up to 3 without, within a small time budget) and
// the largest difference between the two outputs; same_outputs: max_diff ≤ 1e-5.
struct KVCacheTiming {
  double with_cache = 0.0, without_cache = 0.0, max_diff = 0.0;  // best runs
  double with_median = 0.0, without_median = 0.0;
  int with_runs = 0, without_runs = 0;
  Verdict same_outputs;
  double work_ratio = 0.0;  // multiply-adds without the cache / with it (kv_cache_work_ratio)
  Verdict follows_work;     // judge_kv_speedup(speedup_best(), speedup_median(), work_ratio)
  double speedup_best() const { return without_cache / with_cache; }
  double speedup_median() const { return without_median / with_median; }
};
// max_diff ≤ 1e-5: two decodings that agree to float rounding.
Verdict judge_same_outputs(double max_diff);
// Multiply-adds of generate() without the cache over those with it, counted: step t (prefix length
// L = t + 1) projects L tokens (q, k, v and W_O) instead of 1, and scores L(L + 1)/2 causal pairs
// instead of L (each pair: q·k and the weighted v, heads · head_dim each).
double kv_cache_work_ratio(std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t head_dim,
                           std::size_t steps);
// Does the time fall as the work does? measured = median speed-up / work ratio. Holds at ≥ 0.75
// (within 25%); partly when faster at all (speed-up > 1); fails otherwise; too_noisy when the best
// runs' and the medians' speed-ups differ by more than that 25%.
constexpr double kKVSpeedupTolerance = 0.25;
Verdict judge_kv_speedup(double speedup_best, double speedup_median, double work_ratio);
KVCacheTiming time_kv_cache(std::size_t d_model, std::size_t heads, std::size_t kv_heads, std::size_t steps,
                            std::uint64_t seed);

// Linear attention's two forms against each other (recurrent vs quadratic: the same numbers,
// forms_agree at 1e-4) and against softmax attention on the same inputs (a different model:
// differs_from_softmax when the largest difference is at least 0.05).
// Against answering 0 everywhere, which is off by exactly softmax_max: to_zero = softmax_diff /
// softmax_max; beats_zero holds at most kLinearBeatsZero (clearly closer than 0), partly up to 1
// (about as far off as 0), fails above 1 (further off than 0); NaN when softmax_max is 0.
inline constexpr double kLinearBeatsZero = 0.9;  // this course's cut-off
struct LinearCheck {
  double forms_diff = 0.0, softmax_diff = 0.0;
  double softmax_max = 0.0;  // max |softmax attention output|: the scale softmax_diff is read against
  double to_zero = 0.0;      // softmax_diff / softmax_max
  std::size_t n = 0, d = 0;  // rows and width of Q (and K, V)
  Verdict forms_agree, differs_from_softmax, beats_zero;
};
// beats_zero's rule alone, on the ratio softmax_diff / softmax_max.
Verdict judge_linear_against_zero(double ratio);
LinearCheck linear_attention_check(const Mat& q, const Mat& k, const Mat& v);

// Tiled (online-softmax) attention against the materialised computation, forward and backward
// (dout = grad); exact: every difference within 1e-5. trace: the online-softmax steps of query
// row trace_row.
// direct_sum: Σ_j e^(s_j − max s) over every key of row trace_row at once (in double), the
// denominator the trace's last ℓ must equal: same_sum when |ℓ − direct_sum| ≤ 1e-5·direct_sum.
struct TiledCheck {
  double forward = 0.0, dq = 0.0, dk = 0.0, dv = 0.0;
  std::vector<OnlineSoftmaxStep> trace;
  double direct_sum = 0.0, direct_max = 0.0;
  Verdict exact, same_sum;
};
// same_sum's rule alone: the online ℓ against the direct sum.
Verdict judge_same_sum(double online, double direct);
TiledCheck tiled_attention_check(const Mat& q, const Mat& k, const Mat& v, const Mat& grad, std::size_t tile,
                                 std::size_t trace_row);

}  // namespace attn
