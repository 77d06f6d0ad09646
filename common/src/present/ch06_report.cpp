// Chapter 06's reports (see attn/present/ch06_report.hpp).
#include "attn/present/ch06_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "attn/attention/gqa.hpp"
#include "attn/present/ch05_report.hpp"  // index_labels
#include "attn/present/verdict_words.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
const char* const kSparse[] = {"window", "dilated", "longformer", "bigbird"};  // the O(n) patterns
}  // namespace

void show_pattern(Narrator& nar, const std::string& name, const SparsePattern& p, const std::string& caption) {
  const Mat mask = pattern_mask(p);  // 0 visible, −∞ masked
  nar.record(name, mask);
  const Mat drawn = mask + 1.0f;     // 1 visible ('█'), −∞ masked ('·')
  nar.heatmap(name, drawn, index_labels(p.rows), index_labels(p.cols), caption, {0.0, 1.0});
}

void report_window_pairs(Narrator& nar, std::size_t n, std::size_t w, const SparsePattern& window,
                         const SparsePattern& dilated) {
  nar.result(_f("visible pairs: full causal n(n + 1)/2 = {}, window {}, dilated {}; n·w = {}: the patterns grow "
                "as n·w, not n²", n * (n + 1) / 2, window.nnz(), dilated.nnz(), n * w));
}

void report_linear(Narrator& nar, const LinearCheck& c) {
  nar.say(_f("Q, K, V: n = {} rows, d = {}, entries ~ N(0, 1); elu(x) = x for x > 0, eˣ − 1 otherwise", c.n, c.d));
  nar.say(_("the division by φ(q_i)ᵀΣ_j φ(k_j) makes each row's weights sum to 1, as softmax's do "
            "(Katharopoulos et al. 2020, §3.2)"));
  nar.result(_f("causal recurrent form (a {}×{} state S = Σ_j φ(k_j)v_jᵀ and a {}-vector z = Σ_j φ(k_j), updated "
                "per token) vs quadratic form: max diff {:.1e} ({})",
                c.d, c.d, c.d, c.forms_diff, c.forms_agree.holds() ? _("the same numbers") : _("they disagree")));
  nar.result(c.differs_from_softmax.holds()
                 ? _f("vs softmax attention on the same inputs: max diff {:.2f}, where softmax's outputs reach "
                      "{:.2f} — a different model, not an approximation", c.softmax_diff, c.softmax_max)
                 : _f("vs softmax attention on the same inputs: max diff {:.2f}, where softmax's outputs reach "
                      "{:.2f} — close on these inputs", c.softmax_diff, c.softmax_max));
  // answering 0 everywhere would be off by exactly softmax's largest output
  if (c.beats_zero.holds())
    nar.result(_f("(ratio {:.2f}×: closer to softmax attention than answering 0 everywhere, which is off by {:.2f})",
                  c.to_zero, c.softmax_max));
  else if (c.beats_zero.outcome == Outcome::partly)
    nar.result(_f("(ratio {:.2f}×: about as far off as answering 0 everywhere, which is off by {:.2f})", c.to_zero,
                  c.softmax_max));
  else if (c.beats_zero.outcome == Outcome::fails)
    nar.result(_f("(ratio {:.2f}×: further off than answering 0 everywhere, which is off by {:.2f})", c.to_zero,
                  c.softmax_max));
}

void report_tiled(Narrator& nar, const TiledCheck& c, std::size_t n, std::size_t tile) {
  Table tt({_("keys"), _("tile max"), _("m before"), _("m after"), "α = e^(m−m')", _("ℓ before"), _("ℓ after")});
  Mat trace_m = xt::zeros<float>({c.trace.size(), std::size_t(6)});
  for (std::size_t t = 0; t < c.trace.size(); ++t) {
    const auto& s = c.trace[t];
    const std::string m_before = std::isinf(s.m_before) ? std::string(s.m_before < 0 ? "−∞" : "∞")
                                                        : fmt::format("{:.3f}", s.m_before);
    tt.add({fmt::format("{}–{}", s.begin, s.end - 1), fmt::format("{:.3f}", s.tile_max), m_before,
            fmt::format("{:.3f}", s.m_after), fmt::format("{:.4f}", s.alpha), fmt::format("{:.4f}", s.l_before),
            fmt::format("{:.4f}", s.l_after)});
    const float vals[] = {s.tile_max, s.m_before, s.m_after, s.alpha, s.l_before, s.l_after};
    for (std::size_t col = 0; col < 6; ++col) trace_m(t, col) = vals[col];
  }
  nar.say(_("s: the scores of one tile; m: the running maximum of the scores so far; ℓ: the running sum of "
            "e^(s − m); the output row summed so far is rescaled by the same α before the tile's e^(s − m')·V "
            "is added"));
  nar.table(tt);
  nar.record("online_trace", trace_m);
  if (!c.trace.empty())
    nar.result(_f("direct, all {} keys at once: Σ_j e^(s_j − {:.3f}) = {:.4f}, against ℓ after the last tile {:.4f}: "
                  "{}", n, c.direct_max, c.direct_sum, c.trace.back().l_after,
                  c.same_sum.holds() ? _("the same: the rescaling by α made the running sum exact")
                                     : _("they differ by more than float rounding")));
  nar.say(_("L: the row's log-sum-exp, which the forward pass keeps; dQ, dK, dV: the loss's gradients with respect "
            "to Q, K, V, each against the materialised backward"));
  nar.result(_f("tiled ({}×{} tiles) vs materialised attention: max diff {:.1e}; backward recomputing tiles from "
                "L = m + log ℓ: dQ {:.1e}, dK {:.1e}, dV {:.1e} — {}", tile, tile, c.forward, c.dq, c.dk, c.dv,
                c.exact.holds() ? _f("exact to float rounding; the {}×{} matrix never existed", n, n)
                                : _("more than float rounding apart")));
}

void report_kv_cache(Narrator& nar, const KVCacheTiming& kv, std::size_t steps) {
  nar.result(_f("{} tokens, d_model 256, 8 heads (GQA, 2 KV heads): with cache {:.1f} ms, without {:.1f} ms, "
                "best runs ({:.0f}× faster); medians {:.1f} and {:.1f} ms ({:.0f}×); {} (max diff {:.1e})", steps,
                kv.with_cache * 1e3, kv.without_cache * 1e3, kv.speedup_best(), kv.with_median * 1e3,
                kv.without_median * 1e3, kv.speedup_median(),
                kv.same_outputs.holds() ? _("same outputs") : _("the outputs differ"), kv.max_diff));
  nar.say(_f("expected: without the cache each step projects its whole prefix again and scores all its causal "
             "pairs; counted, that is {:.1f}× the multiply-adds of the cached run for n = {}",
             kv.work_ratio, steps));
  const Verdict& fw = kv.follows_work;
  const double per_op = kv.work_ratio / kv.speedup_median();  // time per multiply-add, cached / uncached
  switch (fw.outcome) {
    case Outcome::holds:
      if (fw.measured <= 1.0 + kKVSpeedupTolerance)
        nar.result(_f("measured {:.0f}× (medians) is within {:.0f}% of the {:.1f}× fewer multiply-adds: the time "
                      "falls as the work does", kv.speedup_median(), 100 * kKVSpeedupTolerance, kv.work_ratio));
      else
        nar.result(_f("measured {:.0f}× (medians) is {:.2f}× the {:.1f}× fewer multiply-adds, more than {:.0f}% "
                      "above the count: the time falls at least as fast as the work, and faster than the count "
                      "alone predicts (not explained here)", kv.speedup_median(), fw.measured, kv.work_ratio,
                      100 * kKVSpeedupTolerance));
      break;
    case Outcome::partly:
      nar.result(_f("measured {:.0f}× (medians) is less than the {:.1f}× fewer multiply-adds: the cache saves "
                    "time, but each of its multiply-adds took {:.1f}× as long as one of the uncached run",
                    kv.speedup_median(), kv.work_ratio, per_op));
      break;
    case Outcome::too_noisy:
      nar.result(_f("not judged (too noisy): the best runs give {:.0f}×, the medians {:.0f}×, more than {:.0f}% "
                    "apart; the counted work ratio is {:.1f}×", kv.speedup_best(), kv.speedup_median(),
                    100 * kKVSpeedupTolerance, kv.work_ratio));
      nar.say(_f("per multiply-add, the cached run's medians took {:.1f}× as long as the uncached run's (from the "
                 "medians and the count; as noisy as the speed-ups it comes from)", per_op));
      if (kv.speedup_best() < kv.work_ratio && kv.speedup_median() < kv.work_ratio)
        nar.say(_f("so neither speed-up reaches the counted {:.1f}×: the cached run spends more time per counted "
                   "multiply-add (a possible reason, not measured here: its products are single rows and its steps "
                   "carry a fixed overhead, while the uncached run multiplies whole prefixes)",
                   kv.work_ratio));
      break;
    default:
      nar.result(_f("measured {:.2f}× (medians): the cache did not make decoding faster here, against {:.1f}× "
                    "fewer multiply-adds", kv.speedup_median(), kv.work_ratio));
  }
  nar.say(_f("timed {} and {}; on a shared machine the ratio changes from run to run",
             kv.with_runs == 1 ? _("1 run with the cache") : _f("{} runs with the cache", kv.with_runs),
             kv.without_runs == 1 ? _("1 without") : _f("{} without", kv.without_runs)));
  if (kv.with_runs == 1 || kv.without_runs == 1)
    nar.say(_("one run on a side makes its best and median the same number, so the noise check above cannot see "
              "that side's noise"));
  nar.manifest_field("kv_cache", fmt::format("{{\"steps\": {}, \"with_cache_s\": {:.9g}, \"without_cache_s\": {:.9g}, "
                                            "\"with_cache_median_s\": {:.9g}, \"without_cache_median_s\": {:.9g}, \"max_diff\": {:.9g}}}",
                                            steps, kv.with_cache, kv.without_cache, kv.with_median, kv.without_median,
                                            kv.max_diff));
  nar.say(_("fp16: 16-bit floating point, 2 bytes per stored number"));
  Table kvt({_("config (fp16 cache)"), _("layers"), _("heads"), _("KV heads"), "d_k", _("KiB / token"), _("GiB at 8k tokens")});
  struct Cfg { const char* name; std::size_t layers, heads, kv_heads, d_k; };
  for (const Cfg& c : {Cfg{_("7B-like, MHA"), 32, 32, 32, 128}, Cfg{_("same, GQA (8 KV heads)"), 32, 32, 8, 128},
                       Cfg{_("same, MQA (1 KV head)"), 32, 32, 1, 128}}) {
    const std::size_t bytes = kv_cache_bytes_per_token(c.layers, c.kv_heads, c.d_k, 2);
    kvt.add({c.name, std::to_string(c.layers), std::to_string(c.heads), std::to_string(c.kv_heads), std::to_string(c.d_k),
             fmt::format("{:.0f}", bytes / 1024.0), fmt::format("{:.3g}", bytes * 8192.0 / (1024.0 * 1024 * 1024))});
  }
  nar.table(kvt, /*as_result=*/true);
}

void report_sweep(Narrator& nar, const EfficientSweep& s, const EfficientSweepConfig& cfg) {
  if (s.variants.empty()) return;
  const std::vector<VariantPoint>& ref = s.variants.front().points;
  // The times, best of up to cfg.repeats runs, and how far the median strays.
  std::vector<std::string> head = {_("variant")};
  for (const auto& p : ref) head.push_back(fmt::format("n={} ms", p.n));
  head.push_back(_("spread"));
  Table times(head, cfg.repeats == 1 ? std::string(_("one run per cell (ms); spread: the largest (median − best)/best"))
                                     : _f("best of up to {} runs per cell (ms); spread: the largest (median − best)/best",
                                          cfg.repeats));
  Mat m = xt::zeros<float>({s.variants.size() * ref.size(), std::size_t(8)});
  std::vector<std::string> names;
  for (std::size_t vi = 0; vi < s.variants.size(); ++vi) {
    const VariantSweep& v = s.variants[vi];
    std::vector<std::string> row = {v.name};
    for (std::size_t pi = 0; pi < v.points.size(); ++pi) {
      const VariantPoint& p = v.points[pi];
      row.push_back(p.skipped ? "—" : fmt::format("{:.2f}", p.seconds * 1e3));  // "—": skipped, said below
      if (p.skipped) nar.result(_f("skipped {} at n = {}: {}", v.name, p.n, p.note));  // the cell says "—"
      const double vals[] = {double(vi), double(p.n), p.seconds, p.median_seconds, double(p.runs), p.pairs,
                             p.work_mib, p.err_vs_full};
      for (std::size_t c = 0; c < 8; ++c) m(vi * ref.size() + pi, c) = p.skipped && c >= 2 ? NAN : float(vals[c]);
    }
    row.push_back(fmt::format("{:.0f}%", 100.0 * v.largest_spread()));
    times.add(row);
    names.push_back(fmt::format("\"{}\"", v.name));
  }
  nar.table(times, /*as_result=*/true);
  nar.record("sweep", m);
  nar.manifest_field("sweep_variants", fmt::format("[{}]", fmt::join(names, ", ")));
  nar.manifest_field("sweep_columns", "[\"variant\", \"n\", \"best s\", \"median s\", \"runs\", \"pairs\", "
                                      "\"work MiB\", \"err vs full\"]");

  // The slopes against the claimed exponents.
  Table slopes({_("variant"), _("cost"), _("claimed"), _("slope ± noise"), _("verdict"), _("faster at all n ≥")},
               _f("slope of log(best time) on log(n) for n ≥ {}", cfg.fit_from));
  std::vector<std::string> sometimes;  // faster than full at some n below its faster_from, or never for good
  std::size_t full_last = 0, last_n = 0;  // the largest n where full attention ran, and the largest measured
  for (const VariantPoint& p : s.variants.front().points) {
    last_n = std::max(last_n, p.n);
    if (!p.skipped) full_last = std::max(full_last, p.n);
  }
  for (const VariantSweep& v : s.variants) {
    const std::string faster = &v == &s.variants.front() ? "—"
                               : v.crossover_contended ? std::string(_("not judged (too noisy)"))
                               : v.faster_from == 0   ? std::string(_("never here"))
                               : full_last < last_n   ? _f("{} (full ran to {})", v.faster_from, full_last)
                                                      : std::to_string(v.faster_from);
    std::vector<std::size_t> early;
    for (std::size_t n : v.faster_at)
      if (!v.crossover_contended && (v.faster_from == 0 || n < v.faster_from)) early.push_back(n);
    if (!early.empty()) sometimes.push_back(_f("{} at n = {}", v.name, fmt::join(early, ", ")));
    slopes.add({v.name, v.memory.empty() ? v.complexity : _f("{}, {} memory", v.complexity, v.memory), fmt::format("n^{:.0f}", v.claimed_exponent),
                std::isnan(v.fit.slope) ? "—"
                : std::isnan(v.noise)   ? fmt::format("{:.2f}", v.fit.slope)
                                        : fmt::format("{:.2f} ± {:.2f}", v.fit.slope, v.noise),
                std::isnan(v.noise) ? _f("needs 3 sizes ≥ {}", cfg.fit_from) : std::string(outcome_word(v.exponent.outcome)),
                faster});
  }
  nar.table(slopes, /*as_result=*/true);
  if (!sometimes.empty())
    nar.result(_f("faster than full attention only at some smaller sizes, not at every larger one: {}",
                  fmt::join(sometimes, _("; "))));
  std::vector<std::string> contended;
  for (const VariantSweep& v : s.variants)
    if (v.min_cpu_share < kContendedCpuShare) contended.push_back(fmt::format("{} {:.0f}%", v.name, 100.0 * v.min_cpu_share));
  if (!contended.empty())
    nar.result(_f("other programs were running: in its fastest run at some size this process got only this share of "
                  "a core: {}; those times include waiting, so these slopes are not judged (too noisy)",
                  fmt::join(contended, ", ")));
  bool crossover_contended = false;
  for (const VariantSweep& v : s.variants) crossover_contended = crossover_contended || v.crossover_contended;
  if (crossover_contended)
    nar.result(_f("faster at all n ≥: not judged (too noisy) where a compared cell's fastest run got under {:.0f}% "
                  "of a core", 100.0 * kContendedCpuShare));
  nar.say(_f("noise: the larger of two standard errors of the fit and the gap to the slope of the median runs. "
             "not judged (too noisy): noise over {0}, or under half a core at a fitted size; otherwise holds: "
             "within {0} of the claimed exponent; within noise: within {0} + noise; does not hold: further off.",
             kExponentTolerance));
  nar.say(_("faster at all n ≥: from that n on, the variant's best run beats full attention's by more than the "
            "larger spread of the two cells (each cell's best and median: --export's sweep); a smaller gap could "
            "reverse on the next run. Only the sizes where full attention ran are compared."));
  if (cfg.repeats == 1)
    nar.say(_("one run per cell: no spread is measured, so any gap counts as faster here"));

  // Why a sparse pattern can lose to full attention: its cost per visible pair.
  const VariantSweep& full = s.variants.front();
  const VariantPoint& f0 = full.points.front();
  bool slower = false, over_one_core = false;
  for (const char* name : kSparse) {
    const VariantSweep& v = s.at(name);
    // best runs, as the table prints them; the spread says how far a typical run strays
    const PairCost c = pair_cost(v.points.front(), f0);
    switch (c.outcome) {
      case PairCostOutcome::none:
        break;
      case PairCostOutcome::all_pairs:
        nar.result(_f("{} at n = {} computes all n² pairs (its pattern covers every one at this size): no cost per "
                      "pair to compare", v.name, c.n));
        break;
      case PairCostOutcome::too_noisy:
        nar.result(_f("{} at n = {} (best runs, spread up to {:.0f}%, down to {:.0f}% of a core): {:.2f} ns per "
                      "visible pair against full attention's {:.2f} ns; not judged (too noisy): a cell of one run, "
                      "or with a spread over {:.0f}% or under {:.0f}% of a core, gives no cost ratio and no "
                      "break-even share",
                      v.name, c.n, 100.0 * c.spread, 100.0 * c.cpu_share, c.ns, c.full_ns, 100.0 * kPairCostSpread,
                      100.0 * kContendedCpuShare));
        over_one_core = over_one_core || c.cpu_share > 1.0;
        break;
      case PairCostOutcome::dearer:
        slower = true;
        nar.result(_f("{} at n = {} (best runs, spread up to {:.0f}%): {:.2f} ns per visible pair against full "
                      "attention's {:.2f} ns ({:.1f}× dearer); it computes {:.0f}% of the n² pairs; at these costs "
                      "per pair it wins only below {:.0f}%", v.name, c.n, 100.0 * c.spread, c.ns, c.full_ns, c.ratio,
                      c.share, c.break_even));
        break;
    }
  }
  if (over_one_core)
    nar.say(_("(a share of a core over 100%: the run's CPU time exceeded its wall time, so more than one of this "
              "process's threads ran at once)"));
  if (slower)
    nar.say(_("full attention makes all n² scores with one BLAS (Basic Linear Algebra Subprograms: the tuned "
            "matrix library) matrix product, streaming through memory in order; "
            "dilated and Longformer gather each query's keys by index and take one dot product at a time, so each "
            "pair costs more; the window is computed in blocks with one BLAS product per block."));
  // Full attention's slope: 2 for the work, the rest for each element's cost (when it grew by more
  // than a fifth), and what this run measured of why.
  const ElementCost ec = full_element_cost(s, cfg.fit_from);
  // The split of full attention's slope is drawn only from a slope the table judged: a slope too
  // noisy to judge is not explained either.
  const bool full_judged = full.exponent.outcome != Outcome::too_noisy;
  if (ec.hi_n > ec.lo_n && ec.growth() > 1.2 && !full_judged)
    nar.result(_f("full attention's slope {:.2f} over n ≥ {} is not judged (too noisy), so its excess over 2 is not "
                  "split into work and cost per element here: some or all of it may be waiting for the CPU",
                  ec.slope, cfg.fit_from));
  if (ec.hi_n > ec.lo_n && ec.growth() > 1.2 && full_judged) {
    nar.result(_f("full attention's slope {:.2f} over n ≥ {} is 2 for the work (n² score elements, counted) plus "
                  "{:.2f} for each element getting dearer: {:.2f} ns at n = {}, {:.2f} ns at n = {} ({:.1f}×)",
                  ec.slope, cfg.fit_from, ec.element_slope, ec.lo_ns, ec.lo_n, ec.hi_ns, ec.hi_n, ec.growth()));
    const double share = ec.cpu_hi / std::max(ec.cpu_lo, 1e-9);  // the CPU it got, relative to n = lo
    if (share < 0.8)
      nar.result(_f("measured: its fastest run at n = {} got {:.0f}% of a core against {:.0f}% at n = {}, so "
                    "waiting for the CPU alone could explain up to {:.1f}×", ec.hi_n, 100.0 * ec.cpu_hi,
                    100.0 * ec.cpu_lo, ec.lo_n, 1.0 / share));
    if (ec.cache_from > 0)
      nar.result(_f("from n = {} on its scores and weights (work MiB) exceed the {:.0f} MiB last-level cache this "
                    "CPU reports, so those times also measure memory traffic: an n² claim about the work is not "
                    "tested by them alone", ec.cache_from, s.llc_bytes / kMiB));
    else if (s.llc_bytes <= 0)
      nar.result(_("this CPU's cache size could not be read, so whether the n×n buffers left the caches is not "
                   "known here"));
  }
  nar.say(_("work: counted buffers at the largest n measured. err vs full: max |variant − full attention| at the "
            "largest n where full attention ran (Q, K, V ~ N(0, 1))."));
  nar.say(_("the buffers differ by implementation, not by how many keys a query sees: window streams blocks of "
            "queries through one fixed buffer, whatever n; dilated and Longformer hold an index list of every "
            "visible (query, key) pair, about n·w entries, plus one row of weights; BigBird one block × block tile and its "
            "block list; full attention the n × n scores and weights"));
  Table errs({_("variant"), _("work MiB @max"), _("err vs full @max"), _("err / full's max |output|"),
              _("vs answering 0")});
  const std::vector<ErrorAgainstZero> ez = errors_against_zero(s);
  // worse than answering 0, with the ratio of their outputs' size: the sparse patterns, and the others
  // (linear attention), which average every key through another kernel rather than fewer keys
  std::vector<std::string> worse, worse_other;
  for (const ErrorAgainstZero& e : ez) {
    const bool judged = e.beats_zero.outcome == Outcome::holds || e.beats_zero.outcome == Outcome::fails;
    errs.add({e.name, fmt::format("{:.2f}", e.work_mib), e.err < 0 ? "—" : fmt::format("{:.1e}", e.err),
              judged ? fmt::format("{:.2f}×", e.ratio) : "—",
              !judged ? "—" : e.beats_zero.holds() ? std::string(_("closer")) : std::string(_("further"))});
    if (e.beats_zero.outcome == Outcome::fails)
      (e.name == "linear" ? worse_other : worse)
          .push_back(_f("{} {:.2f}× (its outputs reach {:.2f}× full attention's)", e.name, e.ratio, e.out_ratio));
  }
  nar.table(errs, /*as_result=*/true);
  const ErrorAgainstZero* any = nullptr;
  for (const ErrorAgainstZero& e : ez)
    if (e.scale > 0) any = &e;
  if (any != nullptr)
    nar.result(_f("full attention's outputs at n = {} reach max |output| = {:.2f}: answering 0 everywhere would be "
                  "off by exactly that, so 'vs answering 0' says whether each variant comes closer to full attention "
                  "than 0 does", any->n, any->scale));
  if (!worse.empty())
    nar.result(_f("further from full attention than 0 is: {}. Full attention averages all n random values, so its "
                  "outputs are small; a pattern averages only the keys it keeps, so its outputs stay large — on "
                  "random inputs there is nothing local for a pattern to find",
                  fmt::join(worse, _("; "))));
  if (!worse_other.empty())
    nar.result(_f("further from full attention than 0 is, too: {}; linear attention keeps every key but weighs it "
                  "by φ(q)·φ(k) instead of softmax (step 3), so it is a different model, not a pattern that drops "
                  "keys", fmt::join(worse_other, _("; "))));
}

std::vector<std::string> ch06_takeaway(const EfficientSweep& s, std::size_t fit_from) {
  std::vector<std::string> holds, noisy, too_noisy, fails, unjudged;
  for (const char* name : kSparse) {
    const VariantSweep& v = s.at(name);
    const std::string item = std::isnan(v.fit.slope) ? v.name : fmt::format("{} {:.2f}", v.name, v.fit.slope);
    if (std::isnan(v.noise)) unjudged.push_back(item);
    else if (v.exponent.holds()) holds.push_back(item);
    else if (v.exponent.outcome == Outcome::fails) fails.push_back(item);
    else if (v.exponent.outcome == Outcome::too_noisy) too_noisy.push_back(v.name);  // a slope too noisy to quote
    else noisy.push_back(item);
  }
  std::vector<std::string> parts;
  const bool none_judged = holds.empty() && noisy.empty() && fails.empty();
  auto add = [&](const std::vector<std::string>& xs, const char* pattern) {
    if (!xs.empty()) parts.push_back(fmt::format(fmt::runtime(pattern), fmt::join(xs, _(", "))));
  };
  add(holds, _("holds for {}"));
  add(noisy, _("within noise for {}"));
  add(fails, _("does not hold for {}"));
  add(too_noisy, _("not judged (too noisy) for {}"));
  if (!unjudged.empty())
    parts.push_back(_f("not judged for {} (fewer than 3 sizes ≥ {})", fmt::join(unjudged, _(", ")), fit_from));
  std::vector<std::string> worse;
  for (const ErrorAgainstZero& e : errors_against_zero(s))
    for (const char* name : kSparse)
      if (e.name == name && e.beats_zero.outcome == Outcome::fails)
        worse.push_back(fmt::format("{} {:.1f}×", e.name, e.ratio));
  const std::string answer =
      worse.empty() ? std::string(_("They change the answer: they drop keys."))
                    : _f("They change the answer: on these random inputs their error is further from full attention "
                         "than answering 0 ({}).", fmt::join(worse, _(", ")));
  std::vector<std::string> why_not;  // the none_judged case: why each slope was not judged
  if (!too_noisy.empty()) why_not.push_back(_f("too noisy for {}", fmt::join(too_noisy, _(", "))));
  if (!unjudged.empty())
    why_not.push_back(_f("fewer than 3 sizes ≥ {} for {}", fit_from, fmt::join(unjudged, _(", "))));
  const std::string slopes =
      none_judged ? _f("no slope of time on n could be judged in this run ({}): the timings cannot show O(n) against "
                       "full attention's O(n²) here; rerun step 6 on an idle machine", fmt::join(why_not, _("; ")))
                  : _f("measured slopes of time on n for n ≥ {} in this run: {} (timings vary from run to run on a "
                       "shared machine; step 6's noise column says by how much)", fit_from, fmt::join(parts, _("; ")));
  return {
      _f("Window, dilated, Longformer and BigBird are O(n) by construction; {}. {}", slopes, answer),
      _("Linear attention is O(n) and a different model; tiled attention is exact at O(n²) time and O(tile) memory."),
      _("The KV cache turns decoding from quadratic recomputation into one projection per token; GQA/MQA shrink it."),
  };
}

}  // namespace attn
