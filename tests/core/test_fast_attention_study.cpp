// Chapter 11's verdicts (attn/studies/fast_attention_study.hpp), each driven both ways on built
// inputs (timings are never asserted): the roofs, where the naive passes spend their time, the
// tiled kernel against its reference, and the sweep's summary with skipped rows counted as skipped;
// the sentences that explain a row above the FMA peak (attn/present/ch11_report.hpp) and how the
// peak itself was computed.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "attn/present/ch11_report.hpp"
#include "attn/present/i18n.hpp"
#include "attn/studies/fast_attention_study.hpp"

using namespace attn;

TEST_CASE("judge_roofs: sgemm below the FMA peak holds, above it fails; the better of two runs is the roof") {
  Roofs r;
  r.fma_before = 200, r.fma_after = 250, r.sgemm_before = 180, r.sgemm_after = 150;
  r = judge_roofs(r);
  CHECK(r.peak() == 250);
  CHECK(r.sgemm() == 180);
  CHECK(r.sgemm_within_peak.holds());
  r.sgemm_after = 300;
  CHECK(judge_roofs(r).sgemm_within_peak.outcome == Outcome::fails);
}

TEST_CASE("judge_roofs: a peak above two FMAs per cycle at the OS's clock fails; no clock is inconclusive") {
  Roofs r;
  r.threads = 2, r.lanes = 8, r.clock_ghz = 2.6;  // one FMA per cycle: 2 · 8 · 2 · 2.6 = 83.2 GFLOP/s
  r.fma_before = 140, r.fma_after = 150;
  r = judge_roofs(r);
  CHECK(r.best_fma_per_cycle() == doctest::Approx(150 / 83.2));
  CHECK(r.peak_within_clock.holds());
  r.fma_after = 187;  // 2.25 per cycle
  CHECK(judge_roofs(r).peak_within_clock.outcome == Outcome::fails);
  r.clock_ghz = 0;
  CHECK(judge_roofs(r).peak_within_clock.outcome == Outcome::inconclusive);
}

TEST_CASE("judge_roofs: a roof whose two measurements differ by more than 1.25× moved; within it, steady") {
  Roofs r;
  r.fma_before = 200, r.fma_after = 210, r.sgemm_before = 150, r.sgemm_after = 160;
  r = judge_roofs(r);
  CHECK(r.sgemm_steady.holds());
  CHECK(r.peak_steady.holds());
  r.sgemm_after = 100, r.fma_after = 300;  // 1.5× apart both
  r = judge_roofs(r);
  CHECK(r.sgemm_steady.outcome == Outcome::fails);
  CHECK(r.sgemm_steady.measured == doctest::Approx(1.5));
  CHECK(r.peak_steady.outcome == Outcome::fails);
  r.sgemm_after = 0;  // not measured
  CHECK(judge_roofs(r).sgemm_steady.outcome == Outcome::inconclusive);
}

namespace {
NaivePhases phases(double qk, double sm, double pv, double cached, double gbs) {
  NaivePhases p;
  p.n = 1024, p.d = 64, p.heads = 1;
  p.copy_gbs = gbs, p.fma_peak_gflops = 200, p.sgemm_gflops = 150;
  const double nn = 1024.0 * 1024.0;
  p.qk = {"qk", qk, 2 * nn * 64, 4 * nn};
  p.softmax = {"softmax", sm, 0.0, 8 * nn};
  p.pv = {"pv", pv, 2 * nn * 64, 4 * nn};
  p.cached_softmax_seconds = cached;
  return judge_naive_phases(p);
}
}  // namespace

TEST_CASE("judge_naive_phases: memory-bound passes hold, slow arithmetic fails; the softmax's exps against misses") {
  // 16 MiB at 10 GB/s ≈ 1.68 ms: passes that take about that long are memory-bound.
  const NaivePhases mem = phases(0.0005, 0.0009, 0.0005, 0.0002, 10.0);
  CHECK(mem.memory_sets_speed.holds());
  CHECK(mem.qk.memory_seconds == doctest::Approx(4.0 * 1024 * 1024 / 10e9));
  CHECK(mem.softmax_exp_bound.outcome == Outcome::fails);  // 0.9 ms from memory vs 0.2 ms cached: misses
  const NaivePhases slow = phases(0.010, 0.020, 0.010, 0.019, 10.0);
  CHECK(slow.memory_sets_speed.outcome == Outcome::fails);
  CHECK(slow.softmax_exp_bound.holds());
  CHECK(std::string(slow.slowest().name) == "softmax");
  CHECK(slow.gflops() == doctest::Approx(4.0 * 1024 * 1024 * 64 / 0.040 * 1e-9));
  // The cap: copy GB/s × d/4 = 10 GB/s × 16.
  CHECK(slow.memory_cap_gflops() == doctest::Approx(160.0));
  CHECK(phases(0.01, 0.02, 0.01, 0.0, 20.0).softmax_exp_bound.outcome == Outcome::inconclusive);
}

TEST_CASE("measure_naive_phases runs the three passes with their byte counts; naive_phase_size fits the limit") {
  Roofs r;
  r.copy_gbs = 10, r.fma_before = r.fma_after = 100, r.sgemm_before = r.sgemm_after = 80;
  const NaivePhases p = measure_naive_phases(64, 16, 2, r, 2, 1);
  CHECK(p.qk.seconds > 0);
  CHECK(p.softmax.seconds > 0);
  CHECK(p.pv.seconds > 0);
  CHECK(p.cached_softmax_seconds > 0);
  CHECK(p.qk.bytes == 4.0 * 2 * 64 * 64);
  CHECK(p.softmax.bytes == 8.0 * 2 * 64 * 64);
  CHECK(p.pv.flops == 2.0 * 2 * 64 * 64 * 16);
  CHECK(naive_phase_size({512, 1024, 2048, 4096}, 8, 1024.0) == 2048);  // 4096 is above 2048
  CHECK(naive_phase_size({512, 1024, 2048}, 8, 40.0) == 1024);          // 2048 needs 128 MiB
  CHECK(naive_phase_size({4096, 8192}, 8, 1.0) == 4096);                // nothing fits: the smallest
}

TEST_CASE("judge_fast_kernel: the tiled kernel holds against its reference; a changed output fails") {
  const std::vector<FastKernelCheck> checks = fast_kernel_checks(3, 33, 16);
  REQUIRE(checks.size() == 2);
  CHECK_FALSE(checks[0].causal);
  CHECK(checks[1].causal);
  for (const auto& c : checks) CHECK(c.exact.holds());
  FastKernelCheck bad = checks[0];
  bad.output(3, 4) += 1e-3f;
  bad = judge_fast_kernel(bad);
  CHECK(bad.exact.outcome == Outcome::fails);
  CHECK(bad.max_diff == doctest::Approx(1e-3).epsilon(0.05));
}

TEST_CASE("judge_roofline: the ridge is peak / bandwidth; each kernel's side of it both ways") {
  // peak 46 GFLOP/s over 2.3 GB/s: ridge 20 flop/B; naive at d = 64 is 16 (below), tiled 96/2 = 48 (above).
  const Roofline a = judge_roofline(46.0, 2.3, 64);
  CHECK(a.ridge == doctest::Approx(20.0));
  CHECK(a.naive_intensity == doctest::Approx(16.0));
  CHECK(a.tiled_intensity == doctest::Approx(48.0));
  CHECK(a.naive_below_ridge.holds());
  CHECK(a.tiled_above_ridge.holds());
  // 18 GFLOP/s over 9.7 GB/s: ridge 1.9, naive above it; a 200-GFLOP/s peak: tiled below the ridge 87.
  CHECK(judge_roofline(18.0, 9.7, 64).naive_below_ridge.outcome == Outcome::fails);
  CHECK(judge_roofline(200.0, 2.3, 64).tiled_above_ridge.outcome == Outcome::fails);
  CHECK(judge_roofline(46.0, 0.0, 64).naive_below_ridge.outcome == Outcome::inconclusive);
}

TEST_CASE("near_bound: within 10% of a threshold either side is at the edge; farther, or NaN, is not") {
  CHECK(near_bound(1.93, 2.0));
  CHECK(near_bound(2.15, 2.0));
  CHECK(near_bound(74.6, 75.0));
  CHECK_FALSE(near_bound(2.3, 2.0));
  CHECK_FALSE(near_bound(45.0, 75.0));
  CHECK_FALSE(near_bound(NAN, 2.0));
}

TEST_CASE("judge_roofline: an intensity within the ridge's uncertainty is on neither side") {
  // Peaks 141.8 and 139 GFLOP/s over 8.7 GB/s: ridge 16.3 ± 1.63 (10%, more than the peaks' gap 0.32);
  // naive at d = 64 (16) is within it: neither memory- nor compute-bound by the roofline.
  const Roofline close = judge_roofline(141.8, 8.7, 64, kTiledBlockRows, 139.0);
  CHECK(close.ridge == doctest::Approx(16.3).epsilon(0.01));
  CHECK(close.margin == doctest::Approx(1.63).epsilon(0.01));
  CHECK(close.naive_below_ridge.outcome == Outcome::inconclusive);
  CHECK(close.tiled_above_ridge.holds());
  // Peaks 200 and 100 over 10 GB/s: ridge 20, margin 10 (the peaks' gap): naive at d = 64 (16) is inconclusive,
  // at d = 128 (32) above the ridge beyond the margin.
  const Roofline wide = judge_roofline(200.0, 10.0, 64, kTiledBlockRows, 100.0);
  CHECK(wide.margin == doctest::Approx(10.0));
  CHECK(wide.naive_below_ridge.outcome == Outcome::inconclusive);
  CHECK(judge_roofline(200.0, 10.0, 128, kTiledBlockRows, 100.0).naive_below_ridge.outcome == Outcome::fails);
  CHECK(judge_roofline(200.0, 10.0, 64, kTiledBlockRows, 180.0).naive_below_ridge.holds());  // 16 < 20 − 2
  // From the roofs: the better peak and the other one.
  Roofs r;
  r.fma_before = 100, r.fma_after = 141.8, r.copy_gbs = 8.7;
  const Roofline from = judge_roofline(r, 64);
  CHECK(from.peak_gflops == doctest::Approx(141.8));
  CHECK(from.peak_low_gflops == doctest::Approx(100.0));
  CHECK(from.margin == doctest::Approx((141.8 - 100.0) / 8.7));
}

TEST_CASE("online_softmax_example: the tiles by hand match the plain softmax; a changed sum fails") {
  // s = (1, 2, 3, 0.5), v = (1, 2, 3, 4), 2 keys per tile: tile 0 has m = 2, ℓ = e⁻¹ + 1, O = e⁻¹ + 2;
  // tile 1 raises m to 3, so both are rescaled by e⁻¹ before its keys are added.
  const OnlineSoftmaxExample e = online_softmax_example();
  REQUIRE(e.tiles.size() == 2);
  const double em1 = std::exp(-1.0), em2 = std::exp(-2.0), em25 = std::exp(-2.5);
  CHECK(e.tiles[0].m == doctest::Approx(2.0));
  CHECK(e.tiles[0].l == doctest::Approx(em1 + 1.0));
  CHECK(e.tiles[0].o == doctest::Approx(em1 + 2.0));
  CHECK(e.tiles[1].m == doctest::Approx(3.0));
  CHECK(e.tiles[1].rescale == doctest::Approx(em1));
  CHECK(e.tiles[1].l == doctest::Approx(em2 + em1 + 1.0 + em25));
  const double expect = (em2 * 1 + em1 * 2 + 3 + em25 * 4) / (em2 + em1 + 1.0 + em25);
  CHECK(e.online == doctest::Approx(expect).epsilon(1e-6));
  CHECK(e.plain == doctest::Approx(expect).epsilon(1e-6));
  CHECK(e.same.holds());
  OnlineSoftmaxExample bad = e;
  bad.online += 1e-3;  // a missed rescale would move it by far more
  CHECK(judge_online_softmax_example(bad).same.outcome == Outcome::fails);
  CHECK(online_softmax_example({1, 2, 3}, {1, 2, 3}, 2).tiles.size() == 2);  // a short last tile
  CHECK_THROWS_AS(online_softmax_example({1, 2}, {1}, 2), std::invalid_argument);
}

namespace {
AttentionBenchRow row(const char* impl, std::size_t n, double gflops, bool skipped = false) {
  AttentionBenchRow r;
  r.impl = impl, r.n = n, r.d = 64, r.heads = 8, r.gflops = gflops, r.skipped = skipped;
  r.seconds = skipped ? 0.0 : 1.0;
  r.peak_mib = std::string(impl) == "naive" ? double(n) * double(n) * 1e-6 : double(n) * 1e-3;  // counted, run or not
  return r;
}
}  // namespace

TEST_CASE("summarize_sweep: near sgemm holds or fails; skipped naive rows are counted, not read as 0%") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 200, roofs.sgemm_before = roofs.sgemm_after = 100;
  std::vector<AttentionBenchRow> rows = {row("naive", 512, 30), row("tiled", 512, 120), row("naive", 2048, 25),
                                         row("tiled", 2048, 90), row("naive", 4096, 0, true), row("tiled", 4096, 85)};
  apply_roofs(rows, roofs);
  CHECK(rows[1].pct_of_sgemm == doctest::Approx(120.0));
  CHECK(rows[1].pct_of_peak == doctest::Approx(60.0));
  CHECK(rows[4].pct_of_sgemm == 0.0);  // skipped: left alone
  const SweepSummary s = summarize_sweep(rows);
  CHECK(s.has_large);
  CHECK(s.tiled_sgemm == doctest::Approx(90.0));  // the 512 row is out of range
  CHECK(s.naive_sgemm == doctest::Approx(25.0));
  CHECK(s.naive_measured == 1);
  CHECK(s.naive_skipped == 1);
  CHECK(s.above_sgemm == 1);
  CHECK(s.above_peak == 0);
  CHECK(s.speedup_n == 2048);
  CHECK(s.speedup == doctest::Approx(3.6));
  CHECK(s.tiled_near_sgemm.holds());
  CHECK(s.tiled_faster.holds());
  CHECK(s.tiled_measured == 2);
  CHECK(s.tiled_sgemm_median == doctest::Approx(87.5));  // 85 and 90
  CHECK(s.best_n == 2048);
  // Working memory at the largest n (4096, d = 64): the skipped naive row's need is kept.
  CHECK(s.work_n == 4096);
  CHECK(s.work_smallest_n == 512);
  CHECK(s.tiled_work_mib == doctest::Approx(4.096));
  CHECK(s.tiled_work_smallest_mib == doctest::Approx(0.512));
  CHECK(s.naive_work_mib == doctest::Approx(16.777216));
  CHECK(s.naive_work_skipped);  // n = 4096: the naive row was skipped, its need counted
  // The median, not the best row, carries the verdict: one 90% row among 40% rows fails.
  std::vector<AttentionBenchRow> one = {row("tiled", 2048, 90), row("tiled", 4096, 40), row("tiled", 8192, 40)};
  apply_roofs(one, roofs);
  const SweepSummary o = summarize_sweep(one);
  CHECK(o.tiled_sgemm == doctest::Approx(90.0));
  CHECK(o.tiled_sgemm_median == doctest::Approx(40.0));
  CHECK(o.tiled_near_sgemm.outcome == Outcome::fails);
  // The speedup: every (d, mask) pair at the largest shared n; the least one carries the verdict.
  std::vector<AttentionBenchRow> pairs = {row("naive", 4096, 10), row("tiled", 4096, 43), row("naive", 4096, 20),
                                          row("tiled", 4096, 30)};
  pairs[2].causal = pairs[3].causal = true;
  apply_roofs(pairs, roofs);
  const SweepSummary q = summarize_sweep(pairs);
  CHECK(q.speedup_pairs == 2);
  CHECK(q.speedup == doctest::Approx(4.3));
  CHECK(q.speedup_min == doctest::Approx(1.5));
  CHECK_FALSE(q.speedup_causal);
  CHECK(q.tiled_faster.outcome == Outcome::fails);
  // Slow tiled rows fail both; no size with both measured leaves the speedup inconclusive.
  std::vector<AttentionBenchRow> slow = {row("naive", 2048, 0, true), row("tiled", 2048, 30)};
  apply_roofs(slow, roofs);
  const SweepSummary t = summarize_sweep(slow);
  CHECK(t.tiled_near_sgemm.outcome == Outcome::fails);
  CHECK(t.naive_measured == 0);
  CHECK(t.naive_skipped == 1);
  CHECK(t.speedup_n == 0);
  CHECK(t.tiled_faster.outcome == Outcome::inconclusive);
  std::vector<AttentionBenchRow> close = {row("naive", 2048, 50), row("tiled", 2048, 60)};
  apply_roofs(close, roofs);
  CHECK(summarize_sweep(close).tiled_faster.outcome == Outcome::fails);  // 1.2×
  CHECK(summarize_sweep(close).tiled_near_sgemm.outcome == Outcome::partly);
}

TEST_CASE("summarize_sweep: noisy rows are left out of the figures and verdicts; all noisy: too noisy") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 200, roofs.sgemm_before = roofs.sgemm_after = 100;
  roofs = judge_roofs(roofs);
  auto timed = [](AttentionBenchRow r, double median, int runs) {
    r.runs = runs, r.median_seconds = median * r.seconds;
    return r;
  };
  CHECK_FALSE(row_noisy(timed(row("tiled", 2048, 90), 1.2, 3)));
  CHECK(row_noisy(timed(row("tiled", 2048, 90), 1.3, 3)));
  CHECK_FALSE(row_noisy(timed(row("tiled", 2048, 90), 1.3, 1)));  // one run: no spread to judge
  CHECK_FALSE(row_noisy(row("naive", 2048, 0, true)));
  // A fast but noisy tiled row would carry the median; left out, the steady 40% rows fail.
  std::vector<AttentionBenchRow> rows = {timed(row("naive", 2048, 10), 1.0, 3), timed(row("tiled", 2048, 95), 1.5, 3),
                                         timed(row("tiled", 4096, 40), 1.1, 3), timed(row("tiled", 8192, 40), 1.0, 1)};
  apply_roofs(rows, roofs);
  const SweepSummary s = summarize_sweep(rows, roofs);
  CHECK(s.tiled_noisy == 1);
  CHECK(s.tiled_measured == 2);
  CHECK(s.single_run == 1);
  CHECK(s.tiled_sgemm == doctest::Approx(40.0));
  CHECK(s.tiled_near_sgemm.outcome == Outcome::fails);
  CHECK(s.speedup_n == 0);  // the only pair has a noisy row
  CHECK(s.tiled_faster.outcome == Outcome::too_noisy);
  rows[1].median_seconds = rows[1].seconds;  // the same row steady: it counts, and the pair too
  const SweepSummary steady = summarize_sweep(rows, roofs);
  CHECK(steady.tiled_noisy == 0);
  CHECK(steady.tiled_sgemm_median == doctest::Approx(40.0));  // 40, 40, 95
  CHECK(steady.speedup_n == 2048);
  CHECK(steady.tiled_faster.holds());
  std::vector<AttentionBenchRow> all = {timed(row("tiled", 2048, 90), 2.0, 3)};
  apply_roofs(all, roofs);
  CHECK(summarize_sweep(all).tiled_near_sgemm.outcome == Outcome::too_noisy);
}

TEST_CASE("summarize_sweep with the roofs: sgemm that moved between its two runs makes near-sgemm too noisy") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 200, roofs.sgemm_before = 100, roofs.sgemm_after = 95;
  roofs = judge_roofs(roofs);
  std::vector<AttentionBenchRow> rows = {row("tiled", 2048, 90), row("tiled", 4096, 85)};
  apply_roofs(rows, roofs);
  const SweepSummary steady = summarize_sweep(rows, roofs);
  CHECK_FALSE(steady.sgemm_moved);
  CHECK(steady.tiled_near_sgemm.holds());
  roofs.sgemm_after = 60;  // 1.67× apart
  roofs = judge_roofs(roofs);
  apply_roofs(rows, roofs);
  const SweepSummary moved = summarize_sweep(rows, roofs);
  CHECK(moved.sgemm_moved);
  CHECK(moved.tiled_near_sgemm.outcome == Outcome::too_noisy);
  CHECK(moved.tiled_sgemm_median == doctest::Approx(87.5));  // still measured and printed
  CHECK(moved.tiled_faster.outcome == steady.tiled_faster.outcome);  // a ratio of two rows: no roof in it
}

TEST_CASE("summarize_sweep: a row above the FMA peak fails within_peak and names itself; none holds") {
  Roofs roofs;
  roofs.fma_before = 100, roofs.fma_after = 90, roofs.sgemm_before = roofs.sgemm_after = 80;
  std::vector<AttentionBenchRow> rows = {row("naive", 512, 20), row("tiled", 512, 104), row("tiled", 2048, 70)};
  apply_roofs(rows, roofs);
  const SweepSummary over = summarize_sweep(rows);
  CHECK(over.within_peak.outcome == Outcome::fails);
  CHECK(over.above_peak == 1);
  CHECK(over.highest_peak_pct == doctest::Approx(104.0));
  CHECK(over.highest_peak_n == 512);  // any n, not only the summary's range
  rows[1].gflops = 95;
  apply_roofs(rows, roofs);
  const SweepSummary under = summarize_sweep(rows);
  CHECK(under.within_peak.holds());
  CHECK(under.highest_peak_pct == doctest::Approx(95.0));
}

namespace {
// The narration joined back into one line per result (the narrator wraps at 100 columns, indenting by 4).
std::string unwrapped(std::string s) {
  for (std::size_t p; (p = s.find("\n    ")) != std::string::npos;) s.replace(p, 5, " ");
  return s;
}
std::string sweep_report(const std::vector<AttentionBenchRow>& rows, const Roofs& r) {
  set_language(Language::English);
  std::ostringstream out;
  NarratorOptions opts;
  opts.color = false;
  Narrator nar(chapter_info("11"), opts, 1, out);
  report_sweep(nar, rows, r);
  for (const std::string& line : ch11_takeaway(r, NaivePhases{}, summarize_sweep(rows), {})) out << line << "\n";
  return unwrapped(out.str());
}
// What one chapter 11 report prints, in English, without colour, unwrapped.
template <class Report>
std::string ch11_text(Report report) {
  set_language(Language::English);
  std::ostringstream out;
  NarratorOptions opts;
  opts.color = false;
  Narrator nar(chapter_info("11"), opts, 1, out);
  report(nar);
  return unwrapped(out.str());
}
}  // namespace

TEST_CASE("report_sweep: a row above the FMA peak is marked and explained with both peak runs; none: no mark") {
  Roofs roofs;
  roofs.fma_before = 100, roofs.fma_after = 90, roofs.sgemm_before = roofs.sgemm_after = 80;
  roofs.fma_seconds_before = 0.041, roofs.fma_seconds_after = 0.046, roofs.load_before = 3.5, roofs.load_after = 1.3;
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 104), row("tiled", 2048, 70)};
  apply_roofs(rows, roofs);
  const std::string over = sweep_report(rows, roofs);
  CHECK(over.find("tiled*†") != std::string::npos);
  CHECK(over.find("† above 100% of the FMA peak (rows: 1); the highest, n = 512, d = 64, non-causal: 104.0 GFLOP/s, "
                  "104%;") != std::string::npos);
  CHECK(over.find("0.041 s before the sweep (100 GFLOP/s, load average 3.5)") != std::string::npos);
  CHECK(over.find("0.046 s after it (90 GFLOP/s, load average 1.3)") != std::string::npos);
  CHECK(over.find("1 rows passed the FMA peak (up to 104%)") != std::string::npos);
  rows[0].gflops = 95;
  apply_roofs(rows, roofs);
  const std::string under = sweep_report(rows, roofs);
  CHECK(under.find("†") == std::string::npos);
  CHECK(under.find("passed the FMA peak") == std::string::npos);
}

TEST_CASE("report_sweep: a row within 10% of the FMA peak says the peak was more likely measured low; farther: not") {
  Roofs roofs;
  roofs.fma_before = 100, roofs.fma_after = 70, roofs.sgemm_before = roofs.sgemm_after = 80;
  roofs = judge_roofs(roofs);
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 95), row("tiled", 2048, 70)};
  apply_roofs(rows, roofs);
  CHECK(summarize_sweep(rows).near_peak.holds());
  const std::string near = sweep_report(rows, roofs);
  CHECK(near.find("the highest, n = 512, d = 64, non-causal, reaches 95% (near it: at least 90%)") != std::string::npos);
  CHECK(near.find("the peak was more likely measured low under load (its two runs 1.43× apart)") != std::string::npos);
  rows[0].gflops = 85;
  apply_roofs(rows, roofs);
  CHECK(summarize_sweep(rows).near_peak.outcome == Outcome::fails);
  CHECK(sweep_report(rows, roofs).find("measured low") == std::string::npos);
}

TEST_CASE("report_sweep: the tiled series' fall with n is pointed out, and blamed on nothing the run did not show") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 200, roofs.sgemm_before = roofs.sgemm_after = 100;
  roofs = judge_roofs(roofs);
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 150), row("tiled", 2048, 100), row("tiled", 16384, 60)};
  apply_roofs(rows, roofs);
  const SweepSummary s = summarize_sweep(rows);
  CHECK(s.trend_n_first == 512);
  CHECK(s.trend_n_last == 16384);
  CHECK(s.trend_ratio == doctest::Approx(0.4));
  CHECK(s.trend_falls.holds());
  const std::string steady = sweep_report(rows, roofs);
  CHECK(steady.find("look at the tiled non-causal rows at d = 64: 150.0 GFLOP/s at n = 512, 60.0 at n = 16384, 40% "
                    "of the first (a fall when at most 80%: holds)") != std::string::npos);
  CHECK(steady.find("more likely the kernel's own") != std::string::npos);
  roofs.sgemm_after = 50;  // sgemm moved 2× during the sweep: the load is as likely
  roofs = judge_roofs(roofs);
  apply_roofs(rows, roofs);
  const std::string moved = sweep_report(rows, roofs);
  CHECK(moved.find("the load may be behind the fall as much as the kernel") != std::string::npos);
  CHECK(moved.find("more likely the kernel's own") == std::string::npos);
  rows[2].gflops = 140;  // 93% of the first: no fall
  apply_roofs(rows, roofs);
  CHECK(summarize_sweep(rows).trend_falls.outcome == Outcome::fails);
  const std::string flat = sweep_report(rows, roofs);
  CHECK(flat.find("(a fall when at most 80%: does not hold)") != std::string::npos);
  CHECK(flat.find("behind the fall") == std::string::npos);
}

TEST_CASE("report_sweep: rows above sgemm are marked '*'; when every row is, none is marked and the note says so") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 100, roofs.sgemm_before = roofs.sgemm_after = 80;
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 90), row("tiled", 2048, 70)};
  apply_roofs(rows, roofs);
  const std::string one = sweep_report(rows, roofs);
  CHECK(one.find("tiled*") != std::string::npos);
  CHECK(one.find("* above 100% of sgemm (rows: 1)") != std::string::npos);
  CHECK(one.find("every row above 100% of sgemm") == std::string::npos);
  rows[1].gflops = 85;  // now both above sgemm's 80
  apply_roofs(rows, roofs);
  const std::string all = sweep_report(rows, roofs);
  CHECK(all.find("tiled*") == std::string::npos);
  CHECK(all.find("* above 100% of sgemm") == std::string::npos);
  CHECK(all.find("every row above 100% of sgemm (2 of 2, so none is marked)") != std::string::npos);
}

TEST_CASE("report_sweep: a row above an FMA peak whose two runs agree is not blamed on the load; apart, it is") {
  Roofs roofs;
  roofs.fma_before = 113, roofs.fma_after = 107, roofs.sgemm_before = roofs.sgemm_after = 80;
  roofs.threads = 2, roofs.lanes = 16, roofs.clock_ghz = 2.6, roofs.load_before = 2.0, roofs.load_after = 3.0;
  roofs = judge_roofs(roofs);
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 120), row("tiled", 2048, 70)};
  apply_roofs(rows, roofs);
  const std::string agree = sweep_report(rows, roofs);
  CHECK(agree.find("the two peak runs agree (within 1.25×), so one burst of load on a peak run does not explain "
                   "it") != std::string::npos);
  CHECK(agree.find("allows 333 GFLOP/s at two FMAs per cycle") != std::string::npos);
  CHECK(agree.find("the percentage says the load moved") == std::string::npos);
  CHECK(agree.find("although its two runs agreed") != std::string::npos);  // the takeaway
  roofs.fma_after = 70;  // 1.61× apart
  roofs = judge_roofs(roofs);
  apply_roofs(rows, roofs);
  const std::string apart = sweep_report(rows, roofs);
  CHECK(apart.find("the two peak runs are 1.61× apart (more than 1.25×)") != std::string::npos);
  CHECK(apart.find("the percentage says the load moved") != std::string::npos);
  CHECK(apart.find("the two peak runs were 1.61× apart, so the load moved") != std::string::npos);
}

TEST_CASE("report_sweep: the FMA-units bound names the CPU and does not give Zen 4 two 512-bit FMAs a cycle") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 100, roofs.sgemm_before = roofs.sgemm_after = 80;
  roofs.threads = 2, roofs.lanes = 16, roofs.clock_ghz = 2.6, roofs.cpu_model = "AMD EPYC", roofs.unit = "avx512";
  roofs = judge_roofs(roofs);
  REQUIRE(roofs.peak_within_clock.holds());
  std::vector<AttentionBenchRow> rows = {row("tiled", 2048, 70)};
  {  // the 512-bit FMA tangent is for a loop of 512-bit FMAs only
    Roofs avx2 = roofs;
    avx2.unit = "avx2";
    const std::string said = sweep_report(rows, avx2);
    CHECK(said.find("Zen 4") == std::string::npos);
    CHECK(said.find("(at most 2: no x86 core issues more than two vector FMAs a cycle)") != std::string::npos);
  }
  AttentionBenchRow skipped = row("naive", 16384, 0);
  skipped.skipped = true, skipped.over_limit = true, skipped.heads = 8, skipped.need_mib = 8192,
  skipped.have_mib = 1024;
  rows.push_back(skipped);
  apply_roofs(rows, roofs);
  const std::string text = sweep_report(rows, roofs);
  CHECK(text.find("Skylake-SP and Zen 4 have two FMA pipes") == std::string::npos);
  CHECK(text.find("AMD's Zen 4, which runs a 512-bit FMA on its two 256-bit pipes") != std::string::npos);
  CHECK(text.find("which this CPU, AMD EPYC, has is not measured here") != std::string::npos);
  // The skipped row's reason is composed by the report (translated), from the row's figures.
  CHECK(text.find("needs 8192 MiB for the n×n matrices of 8 heads (limit 1024 MiB, --max-naive-mib)") !=
        std::string::npos);
}

TEST_CASE("judge_roofline separates: both above the ridge fails (not the memory roof); apart, holds; printed so") {
  const Roofline both = judge_roofline(113, 16.4, 64);  // ridge 6.9: naive 16 and tiled 48 both above
  CHECK(both.naive_below_ridge.outcome == Outcome::fails);
  CHECK(both.tiled_above_ridge.holds());
  CHECK(both.separates.outcome == Outcome::fails);
  const Roofline apart = judge_roofline(300, 10, 64);  // ridge 30 ± 3: naive 16 below, tiled 48 above
  CHECK(apart.separates.holds());
  const Roofline edge = judge_roofline(170, 10, 64);  // ridge 17 ± 1.7: naive 16 within the margin
  CHECK(edge.separates.outcome == Outcome::inconclusive);
  Roofs r;
  r.fma_before = r.fma_after = 113, r.sgemm_before = r.sgemm_after = 80, r.copy_gbs = 16.4;
  r = judge_roofs(r);
  NaivePhases p;
  p.n = 2048, p.d = 64, p.heads = 8, p.copy_gbs = 16.4;
  p.qk = {"qk", 0.1, 1e9, 1e8}, p.softmax = {"softmax", 0.2, 0.0, 2e8}, p.pv = {"pv", 0.1, 1e9, 1e8};
  p = judge_naive_phases(p);
  const auto text = [&](const Roofline& rl) {
    return ch11_text([&](Narrator& nar) { report_sweep_summary(nar, summarize_sweep({}), rl, p, r); });
  };
  CHECK(text(both).find("by the roofline both are compute-bound, and arithmetic per byte does not explain the "
                        "speedup") != std::string::npos);
  CHECK(text(apart).find("by this measure arithmetic per byte can explain the speedup") != std::string::npos);
  CHECK(text(edge).find("the roofline cannot place both kernels on a roof here") != std::string::npos);
}

TEST_CASE("recheck_naive: step 2's passes against step 4's naive row of the same size, both ways; none: silent") {
  NaivePhases p;
  p.n = 1024, p.d = 64, p.heads = 1;
  p.qk.seconds = 0.1, p.softmax.seconds = 0.2, p.pv.seconds = 0.1;  // 0.4 s in all
  AttentionBenchRow naive = row("naive", 1024, 10);
  naive.heads = 1, naive.seconds = 0.44, naive.runs = 3;
  const NaiveRecheck near = recheck_naive(p, {naive});
  CHECK(near.agree.holds());
  CHECK(near.row_seconds == doctest::Approx(0.44));
  naive.seconds = 0.306;  // 0.4 against 0.306: 1.31× apart
  const NaiveRecheck far = recheck_naive(p, {naive});
  CHECK(far.agree.outcome == Outcome::fails);
  CHECK(far.agree.measured == doctest::Approx(0.4 / 0.306));
  const std::string said = ch11_text([&](Narrator& nar) { report_naive_recheck(nar, far); });
  CHECK(said.find("step 2's three passes at n = 1024, d = 64 took 400 ms together, step 4's naive row of the same "
                  "size (non-causal, best of 3 runs) 306 ms: 1.31× apart, more than 1.25×") != std::string::npos);
  // Where the tiled kernel wins: the naive products alone (0.2 s) against the tiled row's whole time.
  p = judge_naive_phases(p);  // memory_sets_speed fails (no bandwidth): the why names the slowest pass
  Roofs roofs;
  roofs.unit = "avx512", roofs.blas_kernel = "Haswell", roofs.tiled_path = "avx512";
  AttentionBenchRow tiled = row("tiled", 1024, 100);
  tiled.heads = 1, tiled.seconds = 0.07;
  const NaiveRecheck fast = recheck_naive(p, {naive, tiled});
  CHECK(fast.products_slower.holds());  // 0.2 / 0.07 = 2.9×
  CHECK(ch11_why_faster(p, fast, roofs).find("by its own avx512 products against OpenBLAS's Haswell kernel") !=
        std::string::npos);
  tiled.seconds = 0.18;  // the products alone about as long as the whole tiled run
  const NaiveRecheck close = recheck_naive(p, {naive, tiled});
  CHECK(close.products_slower.outcome == Outcome::fails);
  CHECK(ch11_why_faster(p, close, roofs).find("wins mostly by its fused, vectorised softmax") != std::string::npos);
  // The portable path's exp is the naive pass's scalar call, and its products are OpenBLAS too.
  Roofs portable = roofs;
  portable.tiled_path = "portable";
  CHECK(ch11_why_faster(p, close, portable).find("vectorised") == std::string::npos);
  CHECK(ch11_why_faster(p, close, portable).find("(its exp is std::exp2 per score, as in the naive pass)") !=
        std::string::npos);
  CHECK(ch11_why_faster(p, fast, portable).find("by OpenBLAS products on small tiles") != std::string::npos);
  CHECK(ch11_why_faster(p, fast, portable).find("avx512 products") == std::string::npos);
  CHECK(ch11_why_faster(p, recheck_naive(p, {naive}), roofs).find("no tiled row of step 2's size") !=
        std::string::npos);
  naive.causal = true;  // not the same work
  CHECK(recheck_naive(p, {naive}).agree.outcome == Outcome::inconclusive);
  CHECK(ch11_text([&](Narrator& nar) { report_naive_recheck(nar, recheck_naive(p, {naive})); }).find("step 2") ==
        std::string::npos);
}

TEST_CASE("report_roofs: how the peak was computed, and the title's formula at the OS's clock (or why not)") {
  set_language(Language::English);
  Roofs r;
  r.unit = "avx512", r.threads = 2, r.lanes = 16, r.fma_accumulators = 16, r.fma_iterations = 4000000;
  r.fma_flops = 2.0 * 16 * 16 * 2 * 4e6, r.fma_seconds_before = 0.1024, r.fma_before = r.fma_flops / 0.1024 / 1e9;
  r.sgemm_before = 30, r.blas_kernel = "Cooperlake", r.clock_ghz = 2.5, r.cpus = 2, r.load_before = 4.0;
  auto text = [](const Roofs& roofs) { return ch11_text([&](Narrator& nar) { report_roofs(nar, roofs); }); };
  const std::string known = text(r);
  CHECK(known.find("how: 2 threads × 16 accumulators × 16 lanes × 2 flops × 4000000 steps = 4.1 GFLOP in 0.1024 s "
                   "(the best round) = 40 GFLOP/s") != std::string::npos);
  CHECK(known.find("= 160 GFLOP/s at one vector FMA per cycle per thread, 320 at two") != std::string::npos);
  CHECK(known.find("the loop's 40 is 0.25 per cycle per thread") != std::string::npos);
  CHECK(known.find("lanes: the floats one vector instruction works on — 16 for avx512") != std::string::npos);
  // A kernel forced by OPENBLAS_CORETYPE, not the CPU's best: what the better one would give is not timed.
  r.kernel_from_user = true, r.better_kernel = "SkylakeX", r.blas_kernel = "Haswell";
  const std::string forced = text(r);
  CHECK(forced.find("chosen by the environment variable OPENBLAS_CORETYPE") != std::string::npos);
  CHECK(forced.find("`unset OPENBLAS_CORETYPE`") != std::string::npos);
  CHECK(forced.find("likely run below what the CPU can do (not measured: sgemm is timed with Haswell only)") !=
        std::string::npos);
  r.better_kernel = "";
  CHECK(text(r).find("not measured") == std::string::npos);
  r.clock_ghz = 0;
  CHECK(text(r).find("the OS reports no clock for this CPU") != std::string::npos);
}

TEST_CASE("report_naive_phases: 'within 10%' only when the cached row is within 10% either way; slower: said so") {
  const auto report = [](const NaivePhases& p) { return ch11_text([&](Narrator& nar) { report_naive_phases(nar, p); }); };
  const std::string near = report(phases(0.010, 0.020, 0.010, 0.019, 10.0));  // 19.0 ms against 20.0 ms
  CHECK(near.find("(19.0 ms against 20.0 ms, within 10%)") != std::string::npos);
  const std::string slower = report(phases(0.010, 0.020, 0.010, 0.0256, 10.0));  // 28% slower: not "within"
  CHECK(slower.find("within 10%") == std::string::npos);
  CHECK(slower.find("took longer still (25.6 ms against 20.0 ms, 28% more)") != std::string::npos);
  CHECK(slower.find("memory adds nothing this run can measure") != std::string::npos);
  CHECK(slower.find("the limit here is not memory") != std::string::npos);  // the chapter test reads "the limit here is"
}

TEST_CASE("report_naive_phases: cache misses are named memory latency, and the why then says 'not bandwidth'") {
  const auto report = [](const NaivePhases& p) { return ch11_text([&](Narrator& nar) { report_naive_phases(nar, p); }); };
  const NaivePhases misses = phases(0.002, 0.010, 0.002, 0.001, 100.0);  // the cached row 10× faster
  CHECK(misses.softmax_exp_bound.outcome == Outcome::fails);
  CHECK(report(misses).find("the softmax's cache misses, memory latency rather than bandwidth") != std::string::npos);
  const Roofs roofs;
  CHECK(ch11_why_faster(misses, NaiveRecheck{}, roofs).find("not by memory bandwidth (the softmax's cache misses") !=
        std::string::npos);
  const NaivePhases exps = phases(0.002, 0.010, 0.002, 0.0095, 100.0);  // as fast cached: its arithmetic
  CHECK(report(exps).find("latency") == std::string::npos);
  CHECK(ch11_why_faster(exps, NaiveRecheck{}, roofs).find("cache misses") == std::string::npos);
  // The products: the one with d output columns is named for it, the other product's rate beside it.
  const std::string pv = report(phases(0.002, 0.001, 0.010, 0.001, 100.0));
  CHECK(pv.find("the limit here is the products: pv takes") != std::string::npos);
  CHECK(pv.find("(qk ran at 67.1) — it has only d = 64 output columns") != std::string::npos);
  const std::string qk = report(phases(0.010, 0.001, 0.002, 0.001, 100.0));
  CHECK(qk.find("each of its dot products has only d = 64 terms") != std::string::npos);
}

TEST_CASE("report_naive_phases: memory's share of the softmax is given only when it exceeds the runs' spread") {
  const auto with_medians = [](double sm_median, double cached_median, int runs) {
    NaivePhases p = phases(0.010, 0.020, 0.010, 0.0168, 10.0);  // the cached row 16% faster
    p.softmax_median_seconds = sm_median, p.cached_softmax_median_seconds = cached_median, p.softmax_runs = runs;
    return judge_naive_phases(p);
  };
  const NaivePhases steady = with_medians(0.021, 0.0170, 3);  // spreads 5% and 1%
  CHECK(steady.memory_gap_measured.holds());
  CHECK(steady.memory_gap_measured.measured == doctest::Approx(0.16));
  const auto report = [](const NaivePhases& p) {
    return ch11_text([&](Narrator& nar) { report_naive_phases(nar, p); });
  };
  CHECK(report(steady).find("the other 16% is what the n×n matrix's trips through memory add (more than the 5%") !=
        std::string::npos);
  const NaivePhases noisy = with_medians(0.026, 0.0170, 3);  // the softmax's median 30% above its best
  CHECK(noisy.memory_gap_measured.outcome == Outcome::fails);
  CHECK(report(noisy).find("the other 16% is less than the 30% by which a median run of either exceeded its best") !=
        std::string::npos);
  CHECK(report(noisy).find("trips through memory add") == std::string::npos);
  const NaivePhases once = with_medians(0.020, 0.0168, 1);  // one run each: no spread
  CHECK(once.memory_gap_measured.outcome == Outcome::inconclusive);
  CHECK(report(once).find("comes from one run each, with no spread to judge it by") != std::string::npos);
}

TEST_CASE("summarize_sweep: rows timed once only are not judged; one pair with a spread is enough") {
  std::vector<AttentionBenchRow> rows = {row("naive", 2048, 5), row("tiled", 2048, 60), row("tiled", 4096, 60)};
  rows[0].d = rows[1].d = rows[2].d = 64;
  for (auto& r : rows) r.runs = 1;
  rows.push_back(row("naive", 4096, 5));
  rows.back().runs = 1;
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 100, roofs.sgemm_before = roofs.sgemm_after = 50, roofs.copy_gbs = 10;
  apply_roofs(rows, roofs);
  const SweepSummary once = summarize_sweep(rows);
  CHECK(once.near_sgemm_single_only);
  CHECK(once.tiled_near_sgemm.outcome == Outcome::inconclusive);  // 120% of sgemm, but no spread
  CHECK(once.faster_single_only);
  CHECK(once.tiled_faster.outcome == Outcome::inconclusive);      // 12×, but no spread
  const std::string said = ch11_text(
      [&](Narrator& nar) { report_sweep_summary(nar, once, judge_roofline(roofs, 64), NaivePhases{}, roofs); });
  CHECK(said.find("but every one of them was timed once: not judged") != std::string::npos);
  CHECK(said.find("but every pair there has a row timed once: not judged") != std::string::npos);
  for (auto& r : rows) r.runs = 3;  // with a spread (and not noisy: median = best)
  for (auto& r : rows) r.median_seconds = r.seconds;
  const SweepSummary judged = summarize_sweep(rows);
  CHECK_FALSE(judged.near_sgemm_single_only);
  CHECK(judged.tiled_near_sgemm.holds());
  CHECK(judged.tiled_faster.holds());
}

TEST_CASE("ch11_takeaway: the tiled kernel's working memory is said to grow or to stay, from its two sizes") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 200, roofs.sgemm_before = roofs.sgemm_after = 100;
  roofs.tiled_path = "portable";
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 50), row("tiled", 4096, 50), row("naive", 4096, 10)};
  rows[1].peak_mib = rows[0].peak_mib;  // the same buffers at both sizes
  apply_roofs(rows, roofs);
  const auto said = [&] {
    std::string all;
    for (const std::string& line : ch11_takeaway(roofs, NaivePhases{}, summarize_sweep(rows), {})) all += line + "\n";
    return all;
  };
  CHECK(said().find("the tiled kernel's stays at 0.5 MiB from n = 512 to n = 4096 (d = 64; per thread a Q block, "
                    "one S tile and an O accumulator)") != std::string::npos);
  CHECK(said().find("grows from") == std::string::npos);
  rows[1].peak_mib = 4.096;  // 8× the smallest's
  roofs.tiled_path = "avx512";
  CHECK(said().find("the tiled kernel's grows from 0.5 MiB at n = 512 to 4.1 MiB at n = 4096 (d = 64; per thread a "
                    "Q block, an S tile, O and the packed Kᵀ of a head)") != std::string::npos);
}

TEST_CASE("report_sweep: a row timed once gives its own reason (--repeats 1, or a first run over 5 s)") {
  Roofs roofs;
  roofs.fma_before = roofs.fma_after = 200, roofs.sgemm_before = roofs.sgemm_after = 100;
  std::vector<AttentionBenchRow> rows = {row("tiled", 512, 50)};
  rows[0].runs = 1, rows[0].seconds = rows[0].median_seconds = 0.02;
  apply_roofs(rows, roofs);
  const std::string asked = sweep_report(rows, roofs);
  CHECK(asked.find("1 timed once as --repeats 1 asks") != std::string::npos);
  CHECK(asked.find("their first run over 5 s") == std::string::npos);
  rows[0].seconds = rows[0].median_seconds = 6.0;
  const std::string slow = sweep_report(rows, roofs);
  CHECK(slow.find("1 timed once, their first run over 5 s") != std::string::npos);
  CHECK(slow.find("--repeats 1 asks") == std::string::npos);
}
