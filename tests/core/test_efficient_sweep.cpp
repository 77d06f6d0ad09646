// Chapter 06's sweep and verdicts (attn/studies/efficient_sweep.hpp): the log-log fit and its
// standard error by hand, the exponent verdict in all three outcomes, the crossover with full
// attention, a small real sweep, and the linear / tiled / KV-cache checks both ways.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/present/ch06_report.hpp"
#include "attn/studies/efficient_sweep.hpp"
#include "attn/tensor/rng.hpp"

using namespace attn;

TEST_CASE("loglog_fit: exact powers give their exponent and zero error; noise gives an error") {
  const std::vector<double> n = {1024, 2048, 4096, 8192};
  std::vector<double> t;
  for (double x : n) t.push_back(3e-9 * x * x);
  const LogLogFit f = loglog_fit(n, t);
  CHECK(f.slope == doctest::Approx(2.0));
  CHECK(f.standard_error == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(f.points == 4);
  t[1] *= 1.5;
  CHECK(loglog_fit(n, t).standard_error > 0.05);
  CHECK(std::isnan(loglog_fit({1024, 2048}, {1, 2}).standard_error));  // two points: a slope, no error
  CHECK(std::isnan(loglog_fit({1024}, {1}).slope));
}

TEST_CASE("judge_exponent: holds within 0.2, within noise inside the noise band, fails beyond it, "
          "and is not judged when the noise exceeds the tolerance") {
  CHECK(judge_exponent(1.1, 1.0, 0.05).holds());
  CHECK(judge_exponent(0.7, 1.0, 0.15).outcome == Outcome::inconclusive);  // 0.3 ≤ 0.2 + 0.15
  CHECK(judge_exponent(0.61, 1.0, 0.05).outcome == Outcome::fails);
  CHECK(judge_exponent(NAN, 1.0, 0.0).outcome == Outcome::inconclusive);
  // noise 0.3 > 0.2: not judged, even for a slope inside the tolerance or far outside it
  CHECK(judge_exponent(1.1, 1.0, 0.3).outcome == Outcome::too_noisy);
  CHECK(judge_exponent(0.2, 1.0, 0.3).outcome == Outcome::too_noisy);
  // a wider tolerance (chapter 09's "roughly linear or quadratic": 0.5) admits that noise
  CHECK(judge_exponent(1.1, 1.0, 0.3, 0.5).holds());
  CHECK(judge_exponent(0.1, 1.0, 0.3, 0.5).outcome == Outcome::fails);  // 0.9 > 0.5 + 0.3
}

namespace {
VariantSweep variant(const std::string& name, double exponent, const std::vector<double>& best,
                     const std::vector<double>& median) {
  VariantSweep v;
  v.name = name;
  v.claimed_exponent = exponent;
  const std::size_t sizes[] = {256, 512, 1024, 2048, 4096};
  for (std::size_t i = 0; i < best.size(); ++i) {
    VariantPoint p;
    p.n = sizes[i];
    p.seconds = best[i];
    p.median_seconds = median[i];
    p.pairs = double(p.n) * double(p.n);
    v.points.push_back(p);
  }
  return v;
}
}  // namespace

TEST_CASE("judge_sweep: slopes, noise from the median runs, and where a variant overtakes full attention") {
  EfficientSweep s;
  s.variants.push_back(variant("full", 2.0, {1, 4, 16, 64, 256}, {1, 4, 16, 64, 256}));
  s.variants.push_back(variant("window", 1.0, {8, 16, 32, 60, 120}, {8, 16, 32, 60, 120}));    // faster from 2048
  s.variants.push_back(variant("noisy", 1.0, {1, 1, 2, 3, 4.2}, {1, 1, 2, 6, 8.4}));  // median slope differs
  s.variants.push_back(variant("patchy", 1.0, {2, 3, 20, 70, 300}, {2, 3, 20, 70, 300}));  // faster at 512 only
  judge_sweep(s, 1024);
  CHECK(s.at("window").faster_at == std::vector<std::size_t>{2048, 4096});
  CHECK(s.at("patchy").faster_from == 0);
  CHECK(s.at("patchy").faster_at == std::vector<std::size_t>{512});
  CHECK(s.at("full").faster_at.empty());
  CHECK(s.at("full").fit.slope == doctest::Approx(2.0));
  CHECK(s.at("full").exponent.holds());
  CHECK(s.at("full").faster_from == 0);
  CHECK(s.at("window").exponent.holds());
  CHECK(s.at("window").faster_from == 2048);
  CHECK(s.at("noisy").noise > 0.2);
  CHECK(s.at("noisy").exponent.outcome == Outcome::too_noisy);
  s.variants[1] = variant("window", 1.0, {8, 16, 32, 128, 512}, {8, 16, 32, 128, 512});  // slope 2 where 1 was claimed
  judge_sweep(s, 1024);
  CHECK(s.at("window").exponent.outcome == Outcome::fails);
  CHECK(s.at("window").faster_from == 0);
  for (auto& p : s.variants[1].points) p.cpu_share = 0.2;  // the same times, on a machine others kept busy
  judge_sweep(s, 1024);
  CHECK(s.at("window").min_cpu_share == doctest::Approx(0.2));
  CHECK(s.at("window").exponent.outcome == Outcome::too_noisy);
  CHECK(s.at("window").crossover_contended);  // its crossover is not a result either
  CHECK_FALSE(s.at("patchy").crossover_contended);
  s.variants[0].points[2].cpu_share = 0.3;  // full attention waited at 1024: every comparison there is noisy
  judge_sweep(s, 1024);
  CHECK(s.at("patchy").crossover_contended);
  s.variants[0].points[2].cpu_share = 1.0;
  CHECK_THROWS_AS(s.at("nothing"), std::out_of_range);
  // faster only beyond the spread: 0.44 against 0.47 ms with a 124% spread is no result; 0.2 is
  VariantPoint f, w;
  f.seconds = f.median_seconds = 0.47;
  w.seconds = 0.44, w.median_seconds = 0.44 * 2.24;
  CHECK_FALSE(clearly_faster(w, f));
  w.seconds = 0.2, w.median_seconds = 0.2 * 2.24;  // 0.2 · 2.24 = 0.448 < 0.47
  CHECK(clearly_faster(w, f));
  w.median_seconds = 0.2;
  CHECK(clearly_faster(w, f));
  s.variants[0].points[0].median_seconds = 4.0;  // full at 256: best 1, median 4 (spread 300%)
  s.variants[1] = variant("window", 1.0, {0.5, 16, 32, 60, 120}, {0.5, 16, 32, 60, 120});
  judge_sweep(s, 1024);
  CHECK(s.at("window").faster_at == std::vector<std::size_t>{2048, 4096});  // 0.5 · 4 > 1: not at 256
  s.variants[0].points[0].median_seconds = 1.0;
  judge_sweep(s, 1024);
  CHECK(s.at("window").faster_at == std::vector<std::size_t>{256, 2048, 4096});
  VariantPoint p;
  p.seconds = 2.0, p.median_seconds = 3.0, p.pairs = 1e9;
  CHECK(p.spread() == doctest::Approx(0.5));
  CHECK(p.ns_per_pair() == doctest::Approx(2.0));
}

TEST_CASE("sweep_efficient_variants: every variant at every n, sparse errors nonzero, full skipped past its limit") {
  EfficientSweepConfig cfg;
  cfg.d = 16;
  cfg.window = 31;
  cfg.block = 16;
  cfg.repeats = 2;
  cfg.max_full_mib = 0.5;  // n = 256 needs 0.5 MiB; 512 needs 2 MiB
  const EfficientSweep s = sweep_efficient_variants({128, 256, 512}, cfg);
  REQUIRE(s.variants.size() == 7);
  CHECK(s.at("full").points[2].skipped);
  CHECK_FALSE(s.at("full").points[1].skipped);
  CHECK(s.at("tiled (exact)").points[1].err_vs_full < 1e-5);
  CHECK(s.at("window").points[1].err_vs_full > 1e-3);
  CHECK(s.at("window").points[0].pairs == doctest::Approx(128.0 * 31 - 2 * (15 * 16 / 2)));
  CHECK(s.at("linear").points[0].pairs == 0.0);
  CHECK(s.at("tiled (exact)").memory == "O(tile)");  // the only variant whose memory is its point
  CHECK(s.at("full").memory.empty());
  for (const auto& v : s.variants)
    for (const auto& p : v.points)
      if (!p.skipped) CHECK(p.runs >= 1);
  cfg.window = 32;
  CHECK_THROWS_AS(sweep_efficient_variants({128}, cfg), std::invalid_argument);
}

TEST_CASE("sweep_efficient_variants: BigBird at n below its block computes at most the n² pairs") {
  EfficientSweepConfig cfg;
  cfg.d = 8;
  cfg.window = 3;
  cfg.repeats = 1;  // block 64 > n = 16 and 40: one clamped block, or a partial last block
  const EfficientSweep s = sweep_efficient_variants({16, 40, 100}, cfg);
  const VariantSweep& bb = s.at("bigbird");
  CHECK(bb.points[0].pairs == doctest::Approx(16.0 * 16));
  CHECK(bb.points[1].pairs == doctest::Approx(40.0 * 40));
  CHECK(bb.points[2].pairs <= 100.0 * 100);
  CHECK(bb.points[2].pairs == doctest::Approx(100.0 * 100));  // 2 blocks (64 + 36), each sees both
  for (const auto& p : bb.points) CHECK(p.err_vs_full < 1e-4);  // all pairs seen: exact
}

TEST_CASE("linear and tiled checks hold on random inputs; KV-cache decoding gives the same outputs") {
  Rng rng(3);
  const Mat q = rng.normal_mat(32, 8), k = rng.normal_mat(32, 8), v = rng.normal_mat(32, 8);
  const LinearCheck l = linear_attention_check(q, k, v);
  CHECK(l.forms_agree.holds());
  CHECK(l.differs_from_softmax.holds());
  const LinearCheck same = linear_attention_check(q * 0.0f, k * 0.0f, v);  // φ(0) = 1 and softmax(0) are both uniform
  CHECK(same.differs_from_softmax.outcome == Outcome::fails);
  const TiledCheck t = tiled_attention_check(q, k, v, rng.normal_mat(32, 8), 8, 5);
  CHECK(t.exact.holds());
  CHECK(t.trace.size() == 4);
  // the trace's last ℓ is the row's softmax denominator, summed directly over all 32 keys
  CHECK(t.same_sum.holds());
  CHECK(t.direct_sum == doctest::Approx(double(t.trace.back().l_after)).epsilon(1e-5));
  CHECK(t.direct_max == doctest::Approx(double(t.trace.back().m_after)).epsilon(1e-6));
  CHECK(judge_same_sum(1.7697, 1.7697).holds());
  CHECK(judge_same_sum(1.78, 1.7697).outcome == Outcome::fails);
  CHECK(judge_same_sum(1.0, 0.0).outcome == Outcome::inconclusive);
  // against answering 0, which is off by softmax's largest output
  CHECK(l.to_zero == doctest::Approx(l.softmax_diff / l.softmax_max));
  CHECK(judge_linear_against_zero(0.5).holds());
  CHECK(judge_linear_against_zero(0.99).outcome == Outcome::partly);
  CHECK(judge_linear_against_zero(1.02).outcome == Outcome::fails);
  CHECK(judge_linear_against_zero(NAN).outcome == Outcome::inconclusive);
  const KVCacheTiming kv = time_kv_cache(32, 4, 2, 8, 1);
  CHECK(kv.same_outputs.holds());
  CHECK(kv.max_diff <= 1e-5);
  // Best and median of several runs each; the speed-ups are their ratios.
  CHECK(kv.with_runs >= 1);
  CHECK(kv.without_runs >= 1);
  CHECK(kv.with_cache <= kv.with_median);
  CHECK(kv.without_cache <= kv.without_median);
  CHECK(kv.speedup_best() == doctest::Approx(kv.without_cache / kv.with_cache));
  CHECK(kv.speedup_median() == doctest::Approx(kv.without_median / kv.with_median));
  CHECK(judge_same_outputs(1e-3).outcome == Outcome::fails);
  // The bound is absolute: values 10⁴ times larger carry rounding errors past it.
  CHECK(tiled_attention_check(q, k, v * 1e4f, rng.normal_mat(32, 8), 8, 5).exact.outcome == Outcome::fails);
}

TEST_CASE("kv_cache_work_ratio counts generate()'s multiply-adds; judge_kv_speedup both ways") {
  // d_model = heads = kv_heads = head_dim = 1: 4 per projected token, 2 per scored pair.
  // steps 3: prefixes 1 and 2; cached 2·4 + (1 + 2)·2 = 14, uncached (1 + 2)·4 + (1 + 3)·2 = 20
  CHECK(kv_cache_work_ratio(1, 1, 1, 1, 3) == doctest::Approx(20.0 / 14.0));
  CHECK(kv_cache_work_ratio(1, 1, 1, 1, 2) == doctest::Approx(1.0));
  CHECK(kv_cache_work_ratio(256, 8, 2, 32, 192) > 80.0);
  CHECK(judge_kv_speedup(80.0, 78.0, 88.0).holds());                              // 78/88 ≥ 0.75
  CHECK(judge_kv_speedup(38.0, 34.0, 88.0).outcome == Outcome::partly);           // faster, not as the work
  CHECK(judge_kv_speedup(0.9, 0.9, 88.0).outcome == Outcome::fails);              // not faster at all
  CHECK(judge_kv_speedup(38.0, 24.0, 88.0).outcome == Outcome::too_noisy);        // 38/24 − 1 = 58% > 25%
}

TEST_CASE("full_element_cost: the slope is 2 for the work plus each element's growth; the cache size from then on") {
  EfficientSweep s;
  // full attention whose time per element doubles from 1024 to 4096: slope 2.5 over n ≥ 1024
  s.variants.push_back(variant("full", 2.0, {1, 4, 16, 16 * 4 * std::sqrt(2.0), 16 * 16 * 2}, {1, 4, 16, 90.5, 512}));
  for (std::size_t i = 0; i < 5; ++i) s.variants[0].points[i].work_mib = 2.0 * std::pow(4.0, double(i));  // 2 … 512
  judge_sweep(s, 1024);
  s.llc_bytes = 32.0 * 1024 * 1024;
  ElementCost e = full_element_cost(s, 1024);
  CHECK(e.lo_n == 1024u);
  CHECK(e.hi_n == 4096u);
  CHECK(e.growth() == doctest::Approx(2.0));
  CHECK(e.element_slope == doctest::Approx(0.5).epsilon(1e-6));
  CHECK(e.cache_from == 2048u);  // 128 MiB at 2048 > 32 MiB; 32 MiB at 1024 is not more
  s.llc_bytes = 0;  // unknown cache: no size to compare with
  CHECK(full_element_cost(s, 1024).cache_from == 0u);
  CHECK(full_element_cost(s, 8192).hi_n == 0u);  // nothing fitted
}

TEST_CASE("errors_against_zero: further from full attention than 0 fails, closer holds; no comparison, no verdict") {
  EfficientSweep s;
  s.variants.push_back(variant("full", 2.0, {1, 4}, {1, 4}));
  s.variants.push_back(variant("window", 1.0, {1, 2}, {1, 2}));
  s.variants.push_back(variant("linear", 1.0, {1, 2}, {1, 2}));
  s.variants.push_back(variant("far", 1.0, {1, 2}, {1, 2}));
  for (auto& v : s.variants) v.points[1].skipped = false;
  s.variants[0].points[1].out_max = 0.12, s.variants[0].points[1].err_vs_full = 0.0;
  s.variants[1].points[1].out_max = 0.8, s.variants[1].points[1].err_vs_full = 0.79;  // 6.6× the scale
  s.variants[2].points[1].out_max = 0.1, s.variants[2].points[1].err_vs_full = 0.11;  // 0.92×
  s.variants[3].points[1].err_vs_full = -1;  // full attention skipped there: nothing to compare
  const std::vector<ErrorAgainstZero> e = errors_against_zero(s);
  REQUIRE(e.size() == 4u);
  CHECK(e[0].beats_zero.holds());
  CHECK(e[1].beats_zero.outcome == Outcome::fails);
  CHECK(e[1].ratio == doctest::Approx(0.79 / 0.12));
  CHECK(e[1].out_ratio == doctest::Approx(0.8 / 0.12));
  CHECK(e[1].n == 512u);
  CHECK(e[2].beats_zero.holds());
  CHECK(e[3].beats_zero.outcome == Outcome::inconclusive);
}

TEST_CASE("pair_cost: a ratio and a break-even share only from accepted cells, else not judged") {
  VariantPoint f, w;
  f.n = w.n = 256;
  f.pairs = 256.0 * 256.0, w.pairs = 0.5 * 256.0 * 256.0;  // w computes half the pairs
  f.seconds = f.median_seconds = 1e-3;
  w.seconds = w.median_seconds = 2.5e-3;  // 5× dearer per pair
  f.runs = w.runs = 1;  // one run each: no spread measured, nothing judged
  CHECK(pair_cost(w, f).outcome == PairCostOutcome::too_noisy);
  f.runs = w.runs = 5;
  PairCost c = pair_cost(w, f);
  CHECK(c.outcome == PairCostOutcome::dearer);
  CHECK(c.ratio == doctest::Approx(5.0));
  CHECK(c.break_even == doctest::Approx(20.0));
  CHECK(c.share == doctest::Approx(50.0));
  // the same cells, one of them waiting for the CPU: not judged
  w.cpu_share = 0.3;
  CHECK(pair_cost(w, f).outcome == PairCostOutcome::too_noisy);
  w.cpu_share = 1.0;
  // full attention's cell straying by 80% between runs: not judged either
  f.median_seconds = 1.8e-3;
  c = pair_cost(w, f);
  CHECK(c.outcome == PairCostOutcome::too_noisy);
  CHECK(c.break_even == 0.0);
  f.median_seconds = 1e-3;
  // every pair: full attention by another route; faster overall: nothing to compare
  w.pairs = f.pairs;
  CHECK(pair_cost(w, f).outcome == PairCostOutcome::all_pairs);
  w.seconds = 0.5e-3;
  CHECK(pair_cost(w, f).outcome == PairCostOutcome::none);
}

TEST_CASE("ch06_takeaway: a judged slope is quoted; a slope too noisy to judge is not") {
  EfficientSweep s;
  s.variants.push_back(variant("full", 2.0, {1, 4, 16, 64, 256}, {1, 4, 16, 64, 256}));
  for (const char* name : {"window", "dilated", "longformer", "bigbird"})
    s.variants.push_back(variant(name, 1.0, {8, 16, 32, 64, 128}, {8, 16, 32, 64, 128}));
  judge_sweep(s, 1024);
  const std::string quiet = ch06_takeaway(s, 1024).front();
  CHECK(quiet.find("holds for window 1.00") != std::string::npos);
  CHECK(quiet.find("measured slopes of time on n for n ≥ 1024") != std::string::npos);
  for (VariantSweep& v : s.variants)
    for (VariantPoint& p : v.points) p.cpu_share = 0.2;  // the same times on a machine others kept busy
  judge_sweep(s, 1024);
  const std::string busy = ch06_takeaway(s, 1024).front();
  CHECK(busy.find("no slope of time on n could be judged in this run (too noisy for window, dilated, longformer, "
                  "bigbird)") != std::string::npos);
  CHECK(busy.find("1.00") == std::string::npos);  // no slope quoted that the step did not judge
}
