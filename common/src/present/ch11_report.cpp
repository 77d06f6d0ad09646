// Chapter 11's reports (see attn/present/ch11_report.hpp).
#include "attn/present/ch11_report.hpp"

#include <tuple>

#include <fmt/format.h>

#include "attn/present/number_format.hpp"
#include "attn/present/table.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/studies/peak_flops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
// x with as many decimals as it takes not to print as `bound` when it is not bound ("74.6", not "75").
std::string apart_from(double x, double bound) {
  int digits = 0;
  while (digits < 3 && x != bound && fmt::format("{:.{}f}", x, digits) == fmt::format("{:.{}f}", bound, digits)) ++digits;
  return fmt::format("{:.{}f}", x, digits);
}
}  // namespace

namespace {
// The tiled kernel's working memory counts as flat from the smallest n to the largest within this ratio.
constexpr double kTiledWorkFlat = 1.05;
std::string single_run_words() {
  return _f("not judged: a row timed once (--repeats 1, or a first run over {:.0f} s) has no spread to judge it by",
            kRepeatOnceS);
}
// Why a row can pass 100% of the measured FMA peak, by what the two peak runs show: far apart, the
// load moved between them; in agreement, the loop fell short of what the cores can do at some
// moment (the load during the row, not measured, is the other candidate).
std::string peak_explained(const Roofs& r, const std::string& lead) {
  if (r.peak_steady.outcome == Outcome::fails)
    return _f("{}: the two peak runs are {:.2f}× apart (more than {:.2f}×), so the load moved during this run, and "
              "the row ran at a moment when these cores gave more than the better peak run saw. A kernel whose "
              "counted flops are all FMAs cannot outrun the FMA loop on the same cores at the same load: the "
              "percentage says the load moved, not that the peak was beaten.", lead, r.peak_steady.measured,
              kRoofSteadyRatio);
  return _f("{}: the two peak runs agree (within {:.2f}×), so one burst of load on a peak run does not explain "
            "it. The peak is this loop's measured rate, not the cores' limit{}: the row shows the cores doing "
            "more than the loop saw, either because the loop falls short of them or because the row ran at a "
            "lighter moment of the load; this run measures neither, and the percentage is that gap, not a "
            "kernel faster than the FMA units.", lead, kRoofSteadyRatio,
            r.clock_ghz > 0 ? _f(" (the title's formula at the OS's clock allows {:.0f} GFLOP/s at two FMAs per "
                                 "cycle)", r.theory_gflops(kMaxFmaPerCycle))
                            : std::string());
}
}  // namespace

void report_roofs(Narrator& nar, const Roofs& r) {
  nar.say(_("FMA: a fused multiply-add, a·b + c in one instruction (2 flops); sgemm: OpenBLAS's single-precision "
            "matrix product; GFLOP/s: 10⁹ flops per second; a roofline draws the speed a kernel can reach "
            "against its flops per byte of memory traffic, under the flat roof of the FMA units and the slope "
            "of memory."));
  nar.say(_f("in the title, threads: the loop's threads ({} here; the OS offers {} CPUs, and two of them may be "
             "one physical core's two hardware threads); lanes: the floats one vector instruction works on — {} "
             "for {}, this loop's vector unit (avx512: x86's 512-bit vector instructions, 16 floats; avx2: "
             "256-bit, 8; sse: 128-bit, 4)", r.threads, r.cpus, r.lanes, r.unit));
  nar.result(_f("FMA peak measured now: {:.0f} GFLOP/s on {} {} ({}, {} floats per instruction; a loop of FMAs on "
                "registers only, best of 7): the most this loop reached at this moment — other programs share "
                "the CPU, so step 4 measures it again and the better of the two is used", r.fma_before, r.threads,
                r.threads == 1 ? _("thread") : _("threads"), r.unit, vector_lanes(r.unit)));
  nar.result(_f("it is a measured figure, not the CPU's rating: it assumes the loop's {} independent accumulators "
                "per thread keep every FMA unit busy (no loads, stores or other work), and it is what this loop "
                "reached on these cores at this load", r.fma_accumulators));
  nar.result(r.cpu_model.empty()
                 ? _f("CPU: not named by the OS (no 'model name' in /proc/cpuinfo); OpenBLAS kernel in use: {}, "
                      "the code path OpenBLAS picked, named after the CPU family it was written for",
                      r.blas_kernel)
                 : _f("CPU: {} (/proc/cpuinfo 'model name'); OpenBLAS kernel in use: {}, the code path OpenBLAS "
                      "picked, named after the CPU family it was written for, not this CPU", r.cpu_model,
                      r.blas_kernel));
  const std::string threads = r.threads == 1 ? _("thread") : _("threads");
  nar.result(_f("how: {} {} × {} accumulators × {} lanes × 2 flops × {} steps = {:.3g} GFLOP in {:.4f} s (the best "
                "round) = {:.0f} GFLOP/s", r.threads, threads, r.fma_accumulators, r.lanes, r.fma_iterations,
                r.fma_flops * 1e-9, r.fma_seconds_before, r.fma_before));
  if (r.clock_ghz > 0)
    nar.result(_f("the title's formula with the clock the OS reports ({:.2f} GHz, /proc/cpuinfo): {} · {} · 2 · "
                  "FMAs/cycle · {:.2f} GHz = {:.0f} GFLOP/s at one vector FMA per cycle per thread, {:.0f} at two; "
                  "the loop's {:.0f} is {:.2f} per cycle per thread. This CPU's FMA units per core, its clock "
                  "under load and other programs' share of its {} CPUs (load average {:.1f} at the time) all sit "
                  "in that gap; this run does not tell them apart.", r.clock_ghz, r.threads, r.lanes, r.clock_ghz,
                  r.theory_gflops(1.0), r.theory_gflops(2.0), r.fma_before, r.measured_fma_per_cycle(), r.cpus,
                  r.load_before));
  else
    nar.result(_("the OS reports no clock for this CPU (no 'cpu MHz' in /proc/cpuinfo): the formula's Hz and "
                 "FMAs/cycle are not known here, only the loop's measured rate"));
  nar.result(_f("OpenBLAS {} on {} threads: sgemm {:.0f} GFLOP/s measured now (best of 5, {:.0f}% of the FMA loop) "
                "— the practical roof for attention's two products", r.blas_kernel, r.blas_threads, r.sgemm_before,
                100.0 * r.sgemm_before / r.fma_before));
  if (r.sgemm_before > r.fma_before)
    nar.result(_("warning: sgemm ran faster than the FMA-peak loop: other programs slowed the loop, so this run's "
                 "peak is too low (it is measured again after the sweep)"));
  // Only the kernel in use is timed: what another kernel would give is said as likely, not measured.
  if (r.kernel_from_user)
    nar.result(r.better_kernel.empty()
                   ? _f("kernel in use: {}, chosen by the environment variable OPENBLAS_CORETYPE, set in the "
                        "shell that started this program (this CPU's best)", r.blas_kernel)
                   : _f("kernel in use: {}, chosen by the environment variable OPENBLAS_CORETYPE, set in the "
                        "shell that started this program; this CPU can run {}-class kernels (after `unset "
                        "OPENBLAS_CORETYPE` OpenBLAS chooses one for itself, {} or a newer one): sgemm and the naive rows likely run below "
                        "what the CPU can do (not measured: sgemm is timed with {} only); the tiled kernel runs "
                        "its own {} code, not OpenBLAS's", r.blas_kernel, r.better_kernel, r.better_kernel, r.blas_kernel, r.unit));
  else if (!r.better_kernel.empty())
    nar.result(_f("warning: OpenBLAS runs its {} kernel, but this CPU's best is {} (OPENBLAS_CORETYPE={} would use it): "
                  "sgemm is likely below what the CPU can do (not measured: sgemm is timed with {} only)",
                  r.blas_kernel, r.better_kernel, r.better_kernel, r.blas_kernel));
  nar.result(_f("memory copy: {:.2f} GB/s — the roof for anything that streams an n×n matrix", r.copy_gbs));
}

namespace {
// What the softmax's excess over its cached twin says, against the spread of their runs.
std::string softmax_gap_words(const NaivePhases& p) {
  const double gap = 100.0 * p.memory_gap_measured.measured, spread = 100.0 * p.softmax_spread();
  if (p.memory_gap_measured.holds())
    return _f("the other {:.0f}% is what the n×n matrix's trips through memory add (more than the {:.0f}% by which "
              "a median run of either exceeded its best, out of {} runs each)", gap, spread, p.softmax_runs);
  if (p.memory_gap_measured.outcome == Outcome::fails)
    return _f("the other {:.0f}% is less than the {:.0f}% by which a median run of either exceeded its best (out "
              "of {} runs each): this run cannot tell memory's part from the machine's noise", gap, spread,
              p.softmax_runs);
  return _f("the other {:.0f}% comes from one run each, with no spread to judge it by: memory's part is not "
            "measured", gap);
}
}  // namespace

namespace {
// "a–b", or one figure when both print the same.
std::string ratio_range(double a, double b) {
  const std::string x = fmt::format("{:.1f}", a), y = fmt::format("{:.1f}", b);
  return x == y ? x : x + "–" + y;
}
// Step 2's verdict that the softmax's cache misses (memory latency, not bandwidth) limit it.
bool softmax_cache_misses(const NaivePhases& p) {
  const NaivePass& slow = p.slowest();
  return !p.memory_sets_speed.holds() && &slow == &p.softmax && slow.seconds > 0 &&
         p.cached_softmax_seconds < (1.0 - kNearShare) * slow.seconds && !p.softmax_exp_bound.holds();
}
// A flop-per-byte figure: whole from 10 up (16, 48, 128), else two significant digits (0.25, 4.5).
std::string intensity(double x) { return x >= 10 ? fmt::format("{:.0f}", x) : fmt::format("{:.2g}", x); }
}  // namespace

void report_naive_phases(Narrator& nar, const NaivePhases& p) {
  nar.say(_f("per head: S is n×n floats, and P overwrites it; at n = 16384 that is {} per head",
             format_bytes(16384.0 * 16384.0 * 4)));
  nar.say(_f("each element of S is written, read, written as P and read again: 16 bytes per 4·d = {} flops of the "
             "4·n²·d count (d/4 flop per byte), so at d = {} memory at {:.2f} GB/s would cap it near {:.1f} "
             "GFLOP/s (step 5 sets this against the FMA peak of the whole run)", 4 * p.d, p.d, p.copy_gbs,
             p.memory_cap_gflops()));
  nar.say(_f("measured, pass by pass, at n = {}, d = {}, {} (best of {}); 'at copy speed': the pass's least "
             "memory traffic at the copy bandwidth; 'in cache': the same number of row softmaxes, each thread "
             "reusing one row that stays in its cache", p.n, p.d,
             p.heads == 1 ? std::string(_("1 head")) : _f("{} heads", p.heads), p.repeats));
  Table t({_("pass"), _("time ms"), _("share"), "GFLOP/s", _("memory"), _("at copy speed ms"), _("in cache ms")});
  Mat rec = xt::zeros<float>({std::size_t(3), std::size_t(5)});
  std::size_t i = 0;
  for (const NaivePass* s : {&p.qk, &p.softmax, &p.pv}) {
    const bool sm = s == &p.softmax;
    t.add({s->name, fmt::format("{:.1f}", s->seconds * 1e3), fmt::format("{:.0f}%", 100.0 * s->seconds / p.seconds()),
           s->flops > 0 ? fmt::format("{:.1f}", s->flops / s->seconds * 1e-9) : "—", format_bytes(s->bytes),
           fmt::format("{:.1f}", s->memory_seconds * 1e3), sm ? fmt::format("{:.1f}", p.cached_softmax_seconds * 1e3) : "—"});
    const double vals[] = {s->seconds, s->flops, s->bytes, s->memory_seconds, sm ? p.cached_softmax_seconds : 0.0};
    for (std::size_t c = 0; c < 5; ++c) rec(i, c) = float(vals[c]);
    ++i;
  }
  nar.table(t, /*as_result=*/true);
  nar.record("naive_phases", rec);
  if (p.sgemm_gflops > 0 && p.qk.seconds > 0 && p.pv.seconds > 0 && p.softmax.seconds > 0) {
    const double qk = p.qk.flops / p.qk.seconds * 1e-9, pv = p.pv.flops / p.pv.seconds * 1e-9;
    const double scores = double(p.heads) * double(p.n) * double(p.n);
    nar.result(_f("the products ran at {:.1f} and {:.1f} GFLOP/s, {:.0f}% and {:.0f}% of step 1's sgemm (a square "
                  "2048³ product): Q·Kᵀ sums only d = {} terms per score, and P·V has only d = {} output columns, "
                  "so each number loaded is reused fewer times; the softmax pass took {:.1f} ns of wall time per "
                  "score ({:.3g} scores: its max, exp and sum)", qk, pv, 100.0 * qk / p.sgemm_gflops,
                  100.0 * pv / p.sgemm_gflops, p.d, p.d, p.softmax.seconds / scores * 1e9, scores));
  }
  const double mem = p.qk.memory_seconds + p.softmax.memory_seconds + p.pv.memory_seconds;
  nar.result(_f("all three: {:.1f} GFLOP/s; streaming their memory at copy speed would take {:.0f}% of their time "
                "(claim 'memory sets its speed': at least {:.0f}%): {}", p.gflops(), 100.0 * mem / p.seconds(),
                100.0 * kMemoryBoundShare, outcome_word(p.memory_sets_speed.outcome)));
  if (p.memory_sets_speed.holds()) return;
  const NaivePass& slow = p.slowest();
  if (&slow == &p.softmax && p.cached_softmax_seconds > (1.0 + kNearShare) * slow.seconds)
    nar.result(_f("the limit here is not memory: the softmax takes {:.0f}% of the time, and the same exps on one "
                  "cached row took longer still ({:.1f} ms against {:.1f} ms, {:.0f}% more): without the memory traffic it was no faster, so "
                  "memory adds nothing this run can measure, and the gap itself is this machine's noise",
                  100.0 * slow.seconds / p.seconds(), p.cached_softmax_seconds * 1e3, slow.seconds * 1e3,
                  100.0 * (p.cached_softmax_seconds / slow.seconds - 1.0)));
  else if (&slow == &p.softmax && p.cached_softmax_seconds >= (1.0 - kNearShare) * slow.seconds)
    nar.result(_f("the limit here is the softmax's arithmetic: {:.0f}% of the time, and the same exps on one cached "
                  "row take about as long ({:.1f} ms against {:.1f} ms, within {:.0f}%): memory adds little, within "
                  "this machine's noise", 100.0 * slow.seconds / p.seconds(), p.cached_softmax_seconds * 1e3,
                  slow.seconds * 1e3, 100.0 * kNearShare));
  else if (&slow == &p.softmax)
    nar.result(p.softmax_exp_bound.holds()
                   ? _f("the limit here is mostly the softmax's arithmetic: {:.0f}% of the time, and the same exps "
                        "on one cached row take {:.1f} ms against {:.1f} ms ({:.0f}%) — mostly its exp, max and sum "
                        "passes; {}", 100.0 * slow.seconds / p.seconds(), p.cached_softmax_seconds * 1e3,
                        slow.seconds * 1e3, 100.0 * p.cached_softmax_seconds / slow.seconds, softmax_gap_words(p))
                   : _f("the limit here is the softmax's cache misses, memory latency rather than bandwidth: "
                        "{:.0f}% of the time, and the same exps on one cached row take only {:.1f} ms against "
                        "{:.1f} ms, while streaming its bytes at copy speed would take {:.1f} ms",
                        100.0 * slow.seconds / p.seconds(), p.cached_softmax_seconds * 1e3, slow.seconds * 1e3,
                        slow.memory_seconds * 1e3));
  else
  {
    const NaivePass& other = &slow == &p.qk ? p.pv : p.qk;
    nar.result(_f("the limit here is the products: {} takes {:.0f}% of the time at {:.1f} GFLOP/s, {:.0f}% of sgemm "
                  "({} ran at {:.1f}) — {}", slow.name, 100.0 * slow.seconds / p.seconds(),
                  slow.flops / slow.seconds * 1e-9, 100.0 * slow.flops / slow.seconds * 1e-9 / p.sgemm_gflops,
                  other.name, other.flops / other.seconds * 1e-9,
                  &slow == &p.qk
                      ? _f("each of its dot products has only d = {} terms, so OpenBLAS reuses each loaded number "
                           "less than in a 2048³ product", p.d)
                      : _f("it has only d = {} output columns, so each loaded element of P is used {} times, "
                           "against 2048 in a 2048³ product", p.d, p.d)));
  }
}

void report_online_softmax_example(Narrator& nar, const OnlineSoftmaxExample& e) {
  std::string scores, values;
  for (std::size_t j = 0; j < e.scores.size(); ++j) {
    scores += fmt::format("{}{:g}", j ? ", " : "", e.scores[j]);
    values += fmt::format("{}{:g}", j ? ", " : "", e.values[j]);
  }
  nar.say(_("per query row, for each tile j of keys: m' = max(m, rowmax S_ij); ℓ = e^(m−m')·ℓ + Σ e^(S_ij−m'); "
            "O = e^(m−m')·O + e^(S_ij−m')·V_j; m = m'. After the last tile O / ℓ is the softmax-weighted sum of "
            "the values, exactly as softmax(S)·V."));
  nar.say(_f("by hand, one row: scores s = ({}), values v = ({}), {} keys per tile", scores, values,
             e.tiles.empty() ? 0 : e.tiles.front().end - e.tiles.front().begin));
  Table t({_("tile"), _("keys"), "m", "e^(m−m')", "ℓ", "O"});
  Mat rec = xt::zeros<float>({e.tiles.size(), std::size_t(6)});
  for (std::size_t i = 0; i < e.tiles.size(); ++i) {
    const OnlineSoftmaxTile& x = e.tiles[i];
    t.add({std::to_string(i), fmt::format("{}–{}", x.begin, x.end - 1), fmt::format("{:.2f}", x.m),
           i == 0 ? "—" : fmt::format("{:.3f}", x.rescale), fmt::format("{:.3f}", x.l), fmt::format("{:.3f}", x.o)});
    const double vals[] = {double(x.begin), double(x.end), x.m, x.rescale, x.l, x.o};
    for (std::size_t c = 0; c < 6; ++c) rec(i, c) = float(vals[c]);
  }
  nar.table(t, /*as_result=*/true);
  nar.record("online_softmax_example", rec);
  nar.result(_f("after the last tile O / ℓ = {:.4f}; the plain softmax(s)·v of the same row = {:.4f} "
                "(the same within {:.0e}: {})", e.online, e.plain, kTiledTol, outcome_word(e.same.outcome)));
}

void report_fast_kernel_checks(Narrator& nar, const std::vector<FastKernelCheck>& checks, const std::string& path, int threads) {
  nar.say(_f("a block of 96 query rows meets the keys 256 at a time; each row keeps its running max m, sum ℓ and "
             "output O; threads ({}) take (head, query block) items one at a time. The kernel has two paths, "
             "and this CPU runs the {} one (AVX-512: x86's 512-bit vector instructions, 16 floats each; avx2: "
             "256-bit, 8 floats).", threads, path));
  const std::string avx512 =
      _("Kᵀ is packed once per head into panels of 32 keys stored side by side, so the inner loop reads them "
        "in order; S = Q·Kᵀ keeps each row's max while it is stored; P overwrites S in the layout P·V reads; "
        "the rescale e^(m−m') is applied as O is loaded into registers; exp is a degree-6 polynomial");
  const std::string portable =
      _("each tile's two products, S = Q·Kᵀ and O += P·V, are single-threaded OpenBLAS sgemm calls made from "
        "the kernel's own threads; exp is std::exp2 per score, as a scalar call like the naive pass's; the "
        "rescale e^(m−m') multiplies a row of O after each tile");
  nar.say(path == "avx512"
              ? _f("AVX-512 path (the one timed in step 4): {}. The portable path, the fallback without "
                   "AVX-512 (not run here): {}.", avx512, portable)
              : _f("portable path (the one timed in step 4): {}. The AVX-512 path (not run here: this CPU "
                   "lacks AVX-512): {}.", portable, avx512));
  for (const FastKernelCheck& c : checks) {
    nar.result(_f("n = {}, d = {}, {}: max |tiled − reference (double)| = {:.1e} (≤ {:.0e}: {})", c.n, c.d,
                  c.causal ? _("causal") : _("non-causal"), c.max_diff, kTiledTol, outcome_word(c.exact.outcome)));
    if (!c.causal) {
      nar.record("check_output", c.output);
      nar.record("check_reference", c.reference);
    }
  }
}

void report_sweep(Narrator& nar, const std::vector<AttentionBenchRow>& rows, const Roofs& r) {
  for (const char* impl : {"naive", "tiled"}) {  // one line per implementation: its skipped sizes, the largest's why
    std::string sizes;
    const AttentionBenchRow* largest = nullptr;
    std::size_t count = 0;
    for (const auto& row : rows) {
      if (!row.skipped || row.impl != impl) continue;
      ++count;
      if (largest == nullptr || row.n > largest->n || (row.n == largest->n && row.d > largest->d)) largest = &row;
      const std::string n = std::to_string(row.n);
      if (sizes.find(n) == std::string::npos) sizes += (sizes.empty() ? "" : ", ") + n;
    }
    if (largest == nullptr) continue;
    const std::string why =
        largest->over_limit
            ? _f("needs {:.0f} MiB for the n×n matrices of {} heads (limit {:.0f} MiB, --max-naive-mib)",
                 largest->need_mib, largest->heads, largest->have_mib)
            : _f("needs {:.0f} MiB, {:.0f} MiB available", largest->need_mib, largest->have_mib);
    nar.say(_f("skipped {} n = {} (rows: {}; the largest, n = {}, d = {}: {})", impl, sizes, count, largest->n,
               largest->d, why));
  }
  auto again = [](double before, double after, const Verdict& steady) {  // the step-1 figure beside the new one
    return steady.outcome == Outcome::fails
               ? _f(" (step 1 measured {:.0f}: {:.2f}× apart, more than {:.2f}×: the load moved between the two)",
                    before, steady.measured, kRoofSteadyRatio)
               : _f(" (step 1 measured {:.0f}: within {:.2f}× of it)", before, kRoofSteadyRatio);
  };
  nar.result(_f("sgemm again after the sweep: {:.0f} GFLOP/s{}; percentages use the better, {:.0f}", r.sgemm_after,
                again(r.sgemm_before, r.sgemm_after, r.sgemm_steady), r.sgemm()));
  nar.result(_f("FMA peak again after the sweep: {:.0f} GFLOP/s{}; percentages use the better, {:.0f}", r.fma_after,
                again(r.fma_before, r.fma_after, r.peak_steady), r.peak()));
  if (r.peak_within_clock.holds() && r.unit != "avx512")
    nar.result(_f("that peak is {:.2f} vector FMAs per cycle per thread at the {:.2f} GHz /proc/cpuinfo reports "
                  "(at most {:.0f}: no x86 core issues more than two vector FMAs a cycle)", r.best_fma_per_cycle(),
                  r.clock_ghz, kMaxFmaPerCycle));
  else if (r.peak_within_clock.holds())
    nar.result(_f("that peak is {:.2f} vector FMAs per cycle per thread at the {:.2f} GHz /proc/cpuinfo reports "
                  "(at most {:.0f}: no x86 core issues more than two vector FMAs a cycle; for 512-bit FMAs only "
                  "Intel parts with two 512-bit FMA units reach two (Intel's optimization reference manual), "
                  "while parts with one, and AMD's Zen 4, which runs a 512-bit FMA on its two 256-bit pipes "
                  "(AMD's Family 19h software optimization guide), issue one; which this CPU, {}, has is not "
                  "measured here)", r.best_fma_per_cycle(), r.clock_ghz, kMaxFmaPerCycle,
                  r.cpu_model.empty() ? std::string(_("unnamed")) : r.cpu_model));
  else if (r.peak_within_clock.outcome == Outcome::fails)
    nar.result(_f("that peak is {:.2f} vector FMAs per cycle per thread at the {:.2f} GHz /proc/cpuinfo reports, "
                  "more than the {:.0f} FMA units a core has: the cores ran above that clock (turbo), at least "
                  "{:.2f} GHz with {:.0f} FMAs per cycle", r.best_fma_per_cycle(), r.clock_ghz, kMaxFmaPerCycle,
                  r.clock_ghz * r.best_fma_per_cycle() / kMaxFmaPerCycle, kMaxFmaPerCycle));
  Table tbl({_("impl"), "n", "d", _("causal"), _("time ms"), _("runs"), _("spread"), "GFLOP/s", _("% peak"),
             _("% sgemm"),
             _("work MiB"), _("RSS+ MiB")});
  // A mark on every measured row tells nothing: then no row is marked, and the note below says so.
  std::size_t measured = 0, over_sgemm = 0, over_peak = 0;
  for (const auto& x : rows)
    if (!x.skipped) ++measured, over_sgemm += x.pct_of_sgemm > 100.0, over_peak += x.pct_of_peak > 100.0;
  const bool mark_sgemm = over_sgemm < measured || measured < 2, mark_peak = over_peak < measured || measured < 2;
  Mat sweep = xt::zeros<float>({rows.size(), std::size_t(13)});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& x = rows[i];
    const double vals[] = {x.impl == "tiled" ? 1.0 : 0.0, double(x.n), double(x.d), double(x.heads), x.causal ? 1.0 : 0.0,
                           x.skipped ? NAN : x.seconds, x.skipped ? NAN : x.gflops, x.skipped ? NAN : x.pct_of_sgemm,
                           x.skipped ? NAN : x.pct_of_peak, x.peak_mib, x.skipped ? 1.0 : 0.0,
                           x.skipped ? NAN : x.median_seconds, x.skipped ? NAN : double(x.runs)};
    for (std::size_t c = 0; c < 13; ++c) sweep(i, c) = float(vals[c]);
    if (x.skipped) continue;
    const std::string impl = x.impl +  // the kernels each runs: named under the table
                             (mark_sgemm && x.pct_of_sgemm > 100.0 ? "*" : "") +  // '*': above sgemm, explained below
                             (mark_peak && x.pct_of_peak > 100.0 ? "†" : "");     // '†': above the FMA peak, below
    const std::string spread = x.runs <= 1 ? std::string("—")
                               : fmt::format("{:+.0f}%", 100.0 * (x.median_seconds / x.seconds - 1.0)) +
                                     (row_noisy(x) ? "!" : "");  // '!': noisy, explained below
    tbl.add({impl, std::to_string(x.n), std::to_string(x.d), x.causal ? _("yes") : _("no"),
             fmt::format("{:.1f}", x.seconds * 1e3), std::to_string(x.runs), spread, fmt::format("{:.1f}", x.gflops),
             fmt::format("{:.0f}%", x.pct_of_peak), fmt::format("{:.0f}%", x.pct_of_sgemm),
             fmt::format("{:.1f}", x.peak_mib), x.rss_mib < 0 ? _("n/a") : fmt::format("{:.1f}", x.rss_mib)});
  }
  nar.table(tbl, /*as_result=*/true);
  nar.record("sweep", sweep);
  Vec roofs = xt::zeros<float>({std::size_t(5)});
  const double rv[] = {r.fma_before, r.fma_after, r.sgemm_before, r.sgemm_after, r.copy_gbs};
  for (std::size_t c = 0; c < 5; ++c) roofs(c) = float(rv[c]);
  nar.record("roofs", roofs);
  const SweepSummary s = summarize_sweep(rows);
  // "* above 100% of sgemm (rows: N)", or, when every row is, no mark and the words "every row".
  const std::string above_sgemm = mark_sgemm ? _f("* above 100% of sgemm (rows: {})", s.above_sgemm)
                                             : _f("every row above 100% of sgemm ({} of {}, so none is marked)",
                                                  over_sgemm, measured);
  if (s.above_sgemm > 0)
    nar.result(r.better_kernel.empty()
                   ? _f("{}: the tiled kernel drives the CPU's {} unit with its own code, "
                        "while OpenBLAS's {} kernel reached {:.0f}% of the FMA peak in this run.", above_sgemm, r.unit,
                        r.blas_kernel, 100.0 * r.sgemm() / r.peak())
                   : _f("{}: sgemm runs OpenBLAS's {} kernel, not this CPU's best ({}), "
                        "while the tiled kernel drives the {} unit with its own code: a likely cause, not measured "
                        "here (sgemm is not timed with the other kernel).", above_sgemm, r.blas_kernel,
                        r.better_kernel, r.unit));
  if (!s.within_peak.holds() && s.highest_peak_n > 0) {
    const std::string runs =
        _f("{}; the highest, n = {}, d = {}, {}: {:.1f} GFLOP/s, {:.0f}%; "
           "the peak loop ran for {:.3f} s before the sweep ({:.0f} GFLOP/s, load average {:.1f}) and {:.3f} s "
           "after it ({:.0f} GFLOP/s, load average {:.1f}); the row was timed between them",
           mark_peak ? _f("† above 100% of the FMA peak (rows: {})", s.above_peak)
                     : _f("every row above 100% of the FMA peak ({} of {}, so none is marked)", over_peak, measured),
           s.highest_peak_n, s.highest_peak_d, s.highest_peak_causal ? _("causal") : _("non-causal"),
           s.highest_peak_gflops, s.highest_peak_pct, r.fma_seconds_before, r.fma_before, r.load_before,
           r.fma_seconds_after, r.fma_after, r.load_after);
    nar.result(peak_explained(r, runs));
  }
  else if (s.near_peak.holds())  // below 100%, but close enough that the peak, not the row, is in doubt
    nar.result(_f("against the FMA peak every row stays below 100%, but the highest, n = {}, d = {}, {}, reaches "
                  "{:.0f}% (near it: at least {:.0f}%). The max, exp and sums of attention, left out of the flop "
                  "count, run on the same cores, so that row did nearly all the FMA loop's work and more: the "
                  "peak was more likely measured low under load (its two runs {:.2f}× apart) than nearly "
                  "reached; this run does not measure which.", s.highest_peak_n, s.highest_peak_d,
                  s.highest_peak_causal ? _("causal") : _("non-causal"), s.highest_peak_pct, kNearPeakPct,
                  r.peak_steady.measured));
  else if (s.above_sgemm > 0)
    nar.result(_("against the FMA peak every row stays below 100%."));
  if (std::isfinite(s.trend_ratio)) {  // the first tiled series from its smallest n to its largest
    const std::string look =
        _f("look at the tiled {} rows at d = {}: {:.1f} GFLOP/s at n = {}, {:.1f} at n = {}, {:.0f}% of the first "
           "(a fall when at most {:.0f}%: {}), though a query block's flops per byte do not depend on n (step 5)",
           s.trend_causal ? _("causal") : _("non-causal"), s.trend_d, s.trend_gflops_first, s.trend_n_first,
           s.trend_gflops_last, s.trend_n_last, 100.0 * s.trend_ratio, 100.0 * kTrendFall,
           outcome_word(s.trend_falls.outcome));
    if (!s.trend_falls.holds())
      nar.result(look);
    else if (r.sgemm_steady.outcome == Outcome::fails || r.peak_steady.outcome == Outcome::fails)
      nar.result(_f("{}. The roofs moved during the sweep (sgemm's two runs {:.2f}× apart, the FMA peak's {:.2f}×), "
                    "and the larger sizes ran later: the load may be behind the fall as much as the kernel, and "
                    "this run does not tell them apart.", look, r.sgemm_steady.measured, r.peak_steady.measured));
    else
      nar.result(_f("{}. The roofs held (sgemm's two runs {:.2f}× apart, the FMA peak's {:.2f}×, at most {:.2f}×), so "
                    "the fall is more likely the kernel's own as n grows; its cause is not measured here.", look,
                    r.sgemm_steady.measured, r.peak_steady.measured, kRoofSteadyRatio));
  }
  std::string tiled_path;
  for (const auto& x : rows)
    if (x.impl == "tiled" && !x.skipped) tiled_path = x.path;
  nar.say(tiled_path == "avx512"
              ? _f("impl: naive calls OpenBLAS's {} kernel ({} threads) on whole heads; tiled runs its own AVX-512 "
                   "code (step 3) on its own {} threads", r.blas_kernel, r.blas_threads, r.threads)
              : _f("impl: naive calls OpenBLAS's {} kernel ({} threads) on whole heads; tiled (portable path, step "
                   "3) calls single-threaded OpenBLAS per 96×256 tile from its own {} threads", r.blas_kernel,
                   r.blas_threads, r.threads));
  std::size_t noisy = 0, once_slow = 0, once_asked = 0;
  for (const auto& x : rows) {
    noisy += row_noisy(x);
    if (!x.skipped && x.runs == 1) ++(x.seconds > kRepeatOnceS ? once_slow : once_asked);
  }
  std::string once;
  if (once_slow > 0) once += _f("; {} timed once, their first run over {:.0f} s", once_slow, kRepeatOnceS);
  if (once_asked > 0) once += _f("; {} timed once as --repeats 1 asks", once_asked);
  nar.say(_f("time ms: the best of a row's runs; runs: how many were timed (--repeats, or 2 when the first took "
             "over {:.0f} s, 1 over {:.0f} s, and none begun after 3 s of a row); spread: how much longer the "
             "median run took ('!' marks the {} noisy rows, their median more than {:.0f}% above their best: the "
             "load moved while they ran, and step 5 leaves them out of its figures and verdicts{}; a row timed "
             "once has no spread)", kRepeatAllS, kRepeatOnceS, noisy, 100.0 * (kNoisyRowRatio - 1.0), once));
  nar.say(_("work MiB: working memory the implementation allocates beyond Q, K, V and O (counted from its buffers); "
            "RSS+ MiB: how far the process's resident set peaked above its size at the start of the row's first "
            "run (the peak, VmHWM, is reset before each row; includes thread stacks, allocator slack); 0 when "
            "that run fit in pages the process already held."));
  nar.say(_("% peak: of the better of the two FMA-peak runs; % sgemm: of the better of the two sgemm runs."));
}

void report_sweep_summary(Narrator& nar, const SweepSummary& s, const Roofline& rl, const NaivePhases& p,
                          const Roofs& r) {
  const std::string where = s.has_large ? _("at n ≥ 2048") : _("at the sizes measured, all below 2048");
  const std::string naive =
      s.naive_measured == 0 && s.naive_noisy > 0
          ? _f("naive: no row there left to compare (noisy: {}, skipped: {})", s.naive_noisy, s.naive_skipped)
      : s.naive_measured == 0
          ? _f("naive: skipped at every such size (rows skipped: {}; its n×n matrices exceed --max-naive-mib)",
               s.naive_skipped)
          : s.naive_skipped > 0
                ? _f("naive reaches up to {:.0f}% of sgemm ({:.0f}% of the FMA peak; rows skipped: {})", s.naive_sgemm,
                     s.naive_peak, s.naive_skipped)
                : _f("naive reaches up to {:.0f}% of sgemm ({:.0f}% of the FMA peak)", s.naive_sgemm, s.naive_peak);
  if (s.tiled_measured > 0)
    nar.result(_f("{}: {}; tiled up to {:.0f}% of sgemm ({:.0f}% of the FMA peak; best at n = {}, d = {}, {})", where,
                  naive, s.tiled_sgemm, s.tiled_peak, s.best_n, s.best_d, s.best_causal ? _("causal") : _("non-causal")));
  else
    nar.result(_f("{}: {}; tiled: no row there left to compare", where, naive));
  if (s.tiled_noisy + s.naive_noisy + s.single_run > 0)
    nar.result(_f("rows there: {} tiled and {} naive left out as noisy (step 4's spread); {} timed once, kept, "
                  "with no spread to judge them by", s.tiled_noisy, s.naive_noisy, s.single_run));
  if (s.tiled_measured == 0)
    nar.result(_f("claim 'tiled runs near matrix-product speed': no tiled row there is left to judge it: {}",
                  outcome_word(s.tiled_near_sgemm.outcome)));
  else if (s.near_sgemm_single_only)
    nar.result(_f("claim 'tiled runs near matrix-product speed': the median of its {} rows there is {:.0f}% of sgemm "
                  "(at least {:.0f}%), but every one of them was timed once: {}", s.tiled_measured,
                  s.tiled_sgemm_median, kNearSgemm, single_run_words()));
  else if (s.sgemm_moved)
    nar.result(_f("claim 'tiled runs near matrix-product speed': the median of its {} rows there is {:.0f}% of sgemm "
                  "(at least {:.0f}%), but sgemm itself measured {:.0f} and {:.0f} GFLOP/s, {:.2f}× apart (more "
                  "than {:.2f}×): {}", s.tiled_measured, s.tiled_sgemm_median, kNearSgemm, r.sgemm_before,
                  r.sgemm_after, r.sgemm_steady.measured, kRoofSteadyRatio, outcome_word(s.tiled_near_sgemm.outcome)));
  else
    nar.result(_f("claim 'tiled runs near matrix-product speed': the median of its {} rows there is {}% of sgemm "
                  "(at least {:.0f}%: {}){}", s.tiled_measured, apart_from(s.tiled_sgemm_median, kNearSgemm),
                  kNearSgemm, outcome_word(s.tiled_near_sgemm.outcome),
                  near_bound(s.tiled_sgemm_median, kNearSgemm) || near_bound(s.tiled_sgemm_median, kNearSgemmPartly)
                      ? _f(" — at the edge: within {:.0f}% of a threshold, so the load can tip it", 100.0 * kNearShare)
                      : std::string()));
  if (s.faster_single_only)
    nar.result(_f("at n = {}, the largest size where both ran: tiled {}× as fast as naive (claim: at "
                  "least {:.0f}×), but every pair there has a row timed once: {}", s.speedup_n,
                  ratio_range(s.speedup_min, s.speedup), kSpeedup, single_run_words()));
  else if (s.speedup_n > 0 && s.speedup_pairs > 1)
    nar.result(_f("at n = {}, the largest size where both ran: tiled {}× as fast as naive over {} rows "
                  "(best: d = {}, {}); claim: at least {:.0f}× in every row: {}{}", s.speedup_n,
                  ratio_range(s.speedup_min, s.speedup), s.speedup_pairs, s.speedup_d, s.speedup_causal ? _("causal") : _("non-causal"),
                  kSpeedup, outcome_word(s.tiled_faster.outcome),
                  near_bound(s.speedup_min, kSpeedup)
                      ? _f(" — at the edge: the least row, {:.2f}×, is within {:.0f}% of {:.0f}×, so the load can "
                           "tip it", s.speedup_min, 100.0 * kNearShare, kSpeedup)
                      : std::string()));
  else if (s.speedup_n > 0)
    nar.result(_f("at n = {}, the largest size where both ran: tiled {:.1f}× as fast as naive (claim: at least "
                  "{:.0f}×): {}", s.speedup_n, s.speedup, kSpeedup, outcome_word(s.tiled_faster.outcome)));
  else if (s.tiled_faster.outcome == Outcome::too_noisy)
    nar.result(_f("every size with both a naive and a tiled row has a noisy one: the speedup is {}",
                  outcome_word(s.tiled_faster.outcome)));
  else
    nar.result(_("no size has both a naive and a tiled row: the speedup is not measured"));
  // The roofline with the whole run's roofs.
  nar.say(_f("tiled: a block of {} query rows does 4·{}·n·d flops while K and V stream past it once, 8·n·d bytes "
             "(K and V, n × d floats of 4 bytes each): {}/2 flop per byte", rl.block_rows, rl.block_rows, rl.block_rows));
  nar.result(_f("flops per byte of main-memory traffic: naive d/4 = {} (d = {}), tiled {}/2 = {}; the "
                "ridge where the roofs meet, FMA peak / copy bandwidth = {:.0f} / {:.2f} = {:.1f} flop/B, ± {:.1f}: "
                "the lower FMA peak ({:.0f}) gives {:.1f}, and the copy bandwidth, measured once, is taken as "
                "uncertain by {:.0f}%, so the margin is the larger of the two gaps", intensity(rl.naive_intensity), rl.d,
                rl.block_rows, intensity(rl.tiled_intensity), rl.peak_gflops, rl.copy_gbs, rl.ridge, rl.margin,
                rl.peak_low_gflops, rl.peak_low_gflops / rl.copy_gbs, 100.0 * kRidgeMargin));
  auto side = [&](const Verdict& v, const std::string& on_side, const std::string& off_side, double x) {
    if (v.outcome == Outcome::inconclusive)
      return _f("within the ridge's uncertainty ({} against {:.1f} ± {:.1f}): the roofline cannot say which "
                "roof binds it", intensity(x), rl.ridge, rl.margin);
    return v.holds() ? on_side : off_side;
  };
  const std::string naive_side = side(rl.naive_below_ridge, _("below the ridge: the roofline calls it memory-bound"),
                                      _("above the ridge, so by the roofline memory does not bind it"), rl.naive_intensity);
  const std::string tiled_side = side(rl.tiled_above_ridge, _("above it: compute-bound"),
                                      _("below it: memory-bound even so"), rl.tiled_intensity);
  const bool undecided = rl.naive_below_ridge.outcome == Outcome::inconclusive;
  const bool agree = rl.naive_below_ridge.holds() == p.memory_sets_speed.holds();
  const double share = 100.0 * p.memory_sets_speed.measured;
  const std::string measured =
      undecided ? (p.memory_sets_speed.holds()
                       ? _f("step 2 measured memory at {:.0f}% of its time", share)
                       : _f("step 2 measured memory at only {:.0f}% of its time: {} binds it", share,
                            p.slowest().name))
      : agree ? (p.memory_sets_speed.holds()
                   ? _f("step 2 measured memory at {:.0f}% of its time, as the roofline says", share)
                   : _f("step 2 agrees (memory at {:.0f}% of its time); what binds it instead, {}, lies outside "
                        "the roofline's two roofs and was measured in step 2", share, p.slowest().name))
            : (p.memory_sets_speed.holds()
                   ? _f("yet step 2 measured memory at {:.0f}% of its time: it streams slower than the roofline "
                        "expects", share)
                   : _f("yet step 2 measured memory at only {:.0f}% of its time: {}, far under the flat roof, is "
                        "what binds it", share, p.slowest().name));
  nar.result(_f("naive: {}; {}. Tiled: {}.", naive_side, measured, tiled_side));
  if (rl.separates.holds())
    nar.result(_f("so the roofline puts them on different roofs, naive under memory's slope ({} flop/B) and "
                  "tiled under the flat FMA roof ({} flop/B): by this measure arithmetic per byte can explain "
                  "the speedup", intensity(rl.naive_intensity), intensity(rl.tiled_intensity)));
  else if (rl.separates.outcome == Outcome::fails && rl.naive_below_ridge.outcome == Outcome::fails)
    nar.result(_f("so both sit above the ridge ({} and {} flop/B against {:.1f}): by the roofline both are "
                  "compute-bound, and arithmetic per byte does not explain the speedup; the memory-bandwidth roof "
                  "binds neither, and what holds the naive way back is what step 2 timed pass by pass{}",
                  intensity(rl.naive_intensity), intensity(rl.tiled_intensity), rl.ridge,
                  softmax_cache_misses(p) ? _(" (it found the softmax's cache misses: memory latency, not bandwidth)")
                                          : std::string()));
  else if (rl.separates.outcome == Outcome::fails)
    nar.result(_f("so both sit below the ridge ({} and {} flop/B against {:.1f}): by the roofline both are "
                  "memory-bound, and memory caps the tiled kernel {:.0f}× higher, the ratio of their intensities",
                  intensity(rl.naive_intensity), intensity(rl.tiled_intensity), rl.ridge,
                  rl.tiled_intensity / rl.naive_intensity));
  else
    nar.result(_("so the roofline cannot place both kernels on a roof here: it does not say whether arithmetic "
                 "per byte explains the speedup"));
  const std::string l2 = r.l2_bytes > 0 ? _f(", within this core's {} L2 cache, as the C library reports it: sysconf(_SC_LEVEL2_CACHE_SIZE)",
                                             format_bytes(double(r.l2_bytes)))
                                        : std::string();
  nar.say(_f("the naive version writes and reads every n×n matrix in full and calls the library's exp once per "
             "score (step 2 timed each pass); the tiled one works on a 96×256 tile of S ({}{}), reads Q, K, V "
             "once per query block and {}. Its softmax (exp, max, sum) is the remaining non-FMA work.",
             format_bytes(96.0 * 256 * 4), l2,
             r.tiled_path == "avx512" ? _("computes exp as a vectorised polynomial (its AVX-512 path)")
                                      : _("calls std::exp2 once per score (its portable path, the one run here)")));
}

void report_naive_recheck(Narrator& nar, const NaiveRecheck& c) {
  if (c.agree.outcome == Outcome::inconclusive) return;  // no naive row of step 2's size in the sweep
  const std::string both = _f("step 2's three passes at n = {}, d = {} took {:.0f} ms together, step 4's naive "
                              "row of the same size (non-causal, best of {} runs) {:.0f} ms", c.n, c.d,
                              c.phases_seconds * 1e3, c.row_runs, c.row_seconds * 1e3);
  nar.result(c.agree.holds()
                 ? _f("{}: within {:.2f}× of each other, the same work timed pass by pass and whole", both,
                      kRoofSteadyRatio)
                 : _f("{}: {:.2f}× apart, more than {:.2f}×: the same three passes (step 4 runs them whole, "
                      "without the pauses between them) timed at other moments of this shared machine's load, "
                      "so each naive figure is one moment's, and the share of each pass is step 2's",
                      both, c.agree.measured, kRoofSteadyRatio));
}

std::string ch11_why_faster(const NaivePhases& p, const NaiveRecheck& c, const Roofs& r) {
  if (p.memory_sets_speed.holds())
    return _("FlashAttention's point is not fewer flops — it is the same flops without the n×n round trip "
             "through memory (Dao et al. 2022), and here memory is what held the naive way back.");
  const std::string lead = _f("on a GPU FlashAttention's point is the n×n round trip through memory (Dao et al. "
                              "2022); on this CPU step 2 found the naive way held back by {}, not by memory "
                              "bandwidth{}", p.slowest().name,
                              softmax_cache_misses(p) ? _(" (the softmax's cache misses are memory latency)")
                                                      : std::string());
  const bool avx512 = r.tiled_path == "avx512";
  // What the tiled kernel does differently, by the path that ran: on the portable path its exp is
  // the same scalar call as the naive pass's, and its products are OpenBLAS too.
  const std::string softmax = avx512 ? _("its fused, vectorised softmax")
                                     : _("its fused softmax on tiles that stay in cache (its exp is std::exp2 per "
                                         "score, as in the naive pass)");
  if (c.products_slower.holds())
    return avx512 ? _f("{}; and its two products alone took {:.0f} ms, {:.1f}× the tiled kernel's whole run at the "
                       "same size ({:.0f} ms, step 4), so the tiled kernel wins by {} and by its own {} products "
                       "against OpenBLAS's {} kernel, in shares this run does not split.", lead,
                       c.products_seconds * 1e3, c.products_slower.measured, c.tiled_seconds * 1e3, softmax, r.unit,
                       r.blas_kernel)
                  : _f("{}; and its two products alone took {:.0f} ms, {:.1f}× the tiled kernel's whole run at the "
                       "same size ({:.0f} ms, step 4), so the tiled kernel wins by {} and by OpenBLAS products on "
                       "small tiles, one per thread, against whole-head products, in shares this run does not "
                       "split.", lead, c.products_seconds * 1e3, c.products_slower.measured, c.tiled_seconds * 1e3,
                       softmax);
  if (c.products_slower.outcome == Outcome::fails)
    return _f("{}; its two products alone took {:.0f} ms against the tiled kernel's whole {:.0f} ms (step 4), so "
              "the tiled kernel wins mostly by {}.", lead, c.products_seconds * 1e3, c.tiled_seconds * 1e3, softmax);
  return _f("{}, so the tiled kernel likely wins by {} (no tiled row of step 2's size to compare the products "
            "with).", lead, softmax);
}

void report_gpu(Narrator& nar, const GpuStep& g) {
  using S = GpuStep::State;
  if (g.state == S::not_built) {
    nar.result(_("GPU section skipped: this program was built without -DATTN_CUDA=ON"));
    return nar.say(_("on a machine with an NVIDIA GPU, `cmake --preset cuda && cmake --build --preset cuda` builds "
                     "it with CUDA (NVIDIA's GPU programming toolkit); this step then times the same attention "
                     "with the kernels in common/cuda against cuBLAS, NVIDIA's matrix-product library, in TFLOP/s "
                     "(10¹² flops per second). No GPU figures are shown here: none were measured in this run."));
  }
  if (g.state == S::no_device) return nar.result(_f("GPU section skipped: no CUDA device ({})", g.error));
  if (g.state == S::no_dims) return nar.result(_("GPU section skipped: the CUDA kernels take d = 64 or 128 (see --dims)"));
  nar.result(_f("{} (sm_{}, {} SMs); roofs at {}³:", g.device, g.compute_capability, g.multiprocessors, g.gemm));
  nar.result(_f("cuBLAS SGEMM {:.1f} TFLOP/s, BF16 GEMM (FP32 accumulate) {:.1f} TFLOP/s", g.sgemm_tflops, g.bf16_tflops));
  Table tbl({_("kernel"), "n", "d", _("causal"), "BH", "TFLOP/s", _("% roof"), _("roof")});
  for (const auto& x : g.rows)
    tbl.add({x.kernel, std::to_string(x.n), std::to_string(x.d), x.causal ? _("yes") : _("no"), std::to_string(x.bh),
             fmt::format("{:.1f}", x.tflops), fmt::format("{:.0f}%", x.pct_of_roof), x.roof});
  nar.table(tbl, /*as_result=*/true);
  nar.say(_("BH = batch × heads per launch (about 256k query rows); TFLOP/s count 4·n²·d per head (backward: 2.5×); "
            "the BF16 kernels are compared with the BF16 GEMM, the FP32 ones with SGEMM."));
  if (!g.rows.empty()) {
    // What each rung changed and what it bought, at the largest n of the largest d (full mask if measured).
    const GpuAttentionRow* ref = &g.rows.front();
    for (const auto& x : g.rows)
      if (std::tie(x.d, x.n) > std::tie(ref->d, ref->n) || (x.d == ref->d && x.n == ref->n && !x.causal && ref->causal))
        ref = &x;
    auto find = [&](const char* kernel) -> const GpuAttentionRow* {
      for (const auto& x : g.rows)
        if (x.kernel == kernel && x.n == ref->n && x.d == ref->d && x.causal == ref->causal) return &x;
      return nullptr;
    };
    nar.say(_f("What each rung changed and bought, at n = {}, d = {}, {}:", ref->n, ref->d,
               ref->causal ? _("causal") : _("full")));
    auto step = [&](const char* from, const char* to, const char* change) {
      const GpuAttentionRow *a = find(from), *b = find(to);
      if (a == nullptr || b == nullptr) return false;
      nar.say(fmt::format("  {} → {}: {}", from, to, tr(change)));
      nar.say(_f("    {:.1f} → {:.1f} TFLOP/s ({:.1f}×; now {:.0f}% of its roof)", a->tflops, b->tflops,
                 b->tflops / a->tflops, b->pct_of_roof));
      return true;
    };
    step("naive", "flash_fp32", N_("one fused pass with an online softmax; the n×n scores never reach memory"));
    if (step("flash_fp32", "flash_bf16", N_("tensor cores (mma.sync: BF16 in, FP32 sums), 128 rows over 8 warps,"))) {
      nar.say(_("    Q in registers, K/V by ldmatrix (.trans for V) through a 3-stage cp.async pipeline,"));
      nar.say(_("    exp2 with the scale folded in, the next tile's Q·Kᵀ issued before this softmax"));
    }
    if (step("flash_bf16", "flash_hopper", N_("Hopper's own path: TMA copies, wgmma from shared memory,")))
      nar.say(_("    a producer warpgroup feeding two consumers through mbarriers, softmax under the other's GEMM"));
    step("backward_fp32", "backward_bf16", N_("on tensor cores: 5 products in one kernel, dQ by atomics"));
  }
  nar.say(_("Goals at n ≥ 4096, d = 128: flash_bf16 ≥ 45% of BF16 GEMM, flash_fp32 ≥ 75% and backward_fp32 ≥ 60% of "
            "SGEMM. The full sweep with checks and PyTorch beside it: scripts/cuda-check."));
}

std::vector<std::string> ch11_takeaway(const Roofs& r, const NaivePhases& p, const SweepSummary& s,
                                       const std::vector<FastKernelCheck>& checks) {
  std::vector<std::string> out;
  out.push_back(_f("Best of this run: FMA peak {:.0f} GFLOP/s ({}), sgemm {:.0f} ({}); tiled attention {}: median "
                   "{:.0f}% of sgemm, best {:.0f}% ({:.0f}% of the peak).", r.peak(), r.unit, r.sgemm(),
                   r.blas_kernel, s.has_large ? _("at n ≥ 2048") : _("at the sizes measured, all below 2048"),
                   s.tiled_sgemm_median, s.tiled_sgemm, s.tiled_peak));
  if (!s.within_peak.holds() && s.highest_peak_n > 0)
    out.push_back(r.peak_steady.outcome == Outcome::fails
                      ? _f("{} rows passed the FMA peak (up to {:.0f}%): the two peak runs were {:.2f}× apart, so "
                           "the load moved, and the percentage measures the load's change, not a kernel faster "
                           "than the FMA units (step 4).", s.above_peak, s.highest_peak_pct, r.peak_steady.measured)
                      : _f("{} rows passed the FMA peak (up to {:.0f}%) although its two runs agreed: the loop's "
                           "measured rate falls short of what the cores did at some moment, and this run does not "
                           "say whether the loop or the load is the cause (step 4).", s.above_peak,
                           s.highest_peak_pct));
  const NaivePass& slow = p.slowest();
  out.push_back(p.memory_sets_speed.holds()
                    ? _f("Naive attention at n = {} (step 2's pass-by-pass run): memory sets its speed ({:.1f} "
                         "GFLOP/s).", p.n, p.gflops())
                    : _f("Naive attention at n = {} (step 2's pass-by-pass run): {:.1f} GFLOP/s, limited by {} ({:.0f}% "
                         "of its time), not by memory bandwidth{}.",
                         p.n, p.gflops(), slow.name, 100.0 * slow.seconds / p.seconds(),
                         softmax_cache_misses(p) ? _(" (step 2 found cache misses in the softmax: memory latency)")
                                                 : std::string()));
  if (s.work_n > 0) {
    // Whether the tiled kernel's buffers grew is read from the two sizes, not assumed.
    const bool grows = s.tiled_work_mib > kTiledWorkFlat * s.tiled_work_smallest_mib;
    const std::string what = r.tiled_path == "avx512"
                                 ? _("per thread a Q block, an S tile, O and the packed Kᵀ of a head")
                                 : _("per thread a Q block, one S tile and an O accumulator");
    const std::string tiled =
        grows ? _f("the tiled kernel's grows from {:.1f} MiB at n = {} to {:.1f} MiB at n = {} (d = {}; {})",
                   s.tiled_work_smallest_mib, s.work_smallest_n, s.tiled_work_mib, s.work_n, s.work_d, what)
              : _f("the tiled kernel's stays at {:.1f} MiB from n = {} to n = {} (d = {}; {})", s.tiled_work_mib,
                   s.work_smallest_n, s.work_n, s.work_d, what);
    out.push_back(s.naive_work_skipped
                      ? _f("Working memory: {}; naive would need {:.0f} MiB at n = {} (heads·n²·4 bytes, growing as "
                           "n², counted: that row was skipped).", tiled, s.naive_work_mib, s.work_n)
                      : _f("Working memory: {}; naive {:.0f} MiB at n = {} (heads·n²·4 bytes, growing as n²).", tiled,
                           s.naive_work_mib, s.work_n));
  }
  bool exact = !checks.empty();
  for (const auto& c : checks) exact = exact && c.exact.holds();
  out.push_back(exact ? _("Same numbers, different order of summation: tiled == reference to ~1e-6.")
                      : _("The tiled kernel differed from its reference by more than float rounding in this run."));
  return out;
}

}  // namespace attn
