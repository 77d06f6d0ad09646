// Chapter 12's presentation (see attn/present/beyond_report.hpp).
#include "attn/present/beyond_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/data/mqar.hpp"
#include "attn/present/sparkline.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
std::string ch12_bytes(double b) {
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}
std::string ch12_us(double s) { return fmt::format("{:.1f}", s * 1e6); }
std::string ch12_pad(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}
// 1e-2, not 1e-02: a learning rate as the README writes it.
std::string ch12_rate(double x) {
  std::string s = fmt::format("{:.0e}", x);
  const std::size_t e = s.find("e-0");
  return e == std::string::npos ? s : s.erase(e + 2, 1);
}
Labels ch12_rows(std::size_t n) {
  Labels l;
  for (std::size_t i = 0; i < n; ++i) l.push_back("t" + std::to_string(i));
  return l;
}
const char* arch_name(RecallArch a) {
  switch (a) {
    case RecallArch::attention: return N_("attention");
    case RecallArch::sliding_window: return N_("window");
    case RecallArch::linear_attention: return N_("linear attn");
    case RecallArch::ssm: return N_("SSM");
    case RecallArch::hybrid: return N_("hybrid");
  }
  return "?";
}
// The best-run and median-run ratios as "1300–1800", or one figure when both round alike.
// "810–840": the attention / SSM step ratio from the best and the median runs, at the longest
// context timed steadily (ratio_context).
std::string ratio_range(const DecodeCost& c) {
  const std::string lo = two_significant(std::min(c.ratio_best, c.ratio_median));
  const std::string hi = two_significant(std::max(c.ratio_best, c.ratio_median));
  return lo == hi ? lo : lo + "–" + hi;
}
}  // namespace

std::string window_gap_cause(const RecallTable& t, const RecallVerdicts& v, std::size_t d) {
  const std::size_t win = t.steps_of(RecallArch::sliding_window, d), att = t.steps_of(RecallArch::attention, d);
  const std::string steps = win < att ? _f("The window ran fewer steps ({} against attention's {})", win, att)
                                      : _f("Not a shorter run: the window ran {} steps, attention {}", win, att);
  if (!std::isfinite(v.blind_share)) return steps + ".";
  return _f("{}; in training's mix of pair counts, drawn alike, {:.0f}% of the training loss's weight (each "
            "batch's loss a mean over its queries; the pair counts' shares of queries beyond reach averaged, "
            "counted on step 6's sequences) falls on queries whose value is beyond the window's reach, a likely "
            "cause.", steps, 100 * v.blind_share);
}

std::string recall_steps_range(const RecallTable& t, bool ssm) {
  std::size_t lo = 0, hi = 0;
  for (const RecallTrainedSteps& r : t.steps)
    if ((r.arch == RecallArch::ssm) == ssm && r.steps > 0) {
      lo = lo == 0 ? r.steps : std::min(lo, r.steps);
      hi = std::max(hi, r.steps);
    }
  if (hi == 0) return "?";
  return lo == hi ? std::to_string(hi) : fmt::format("{}–{}", lo, hi);
}

std::string ssd_speedup_withheld() {
  return _("the chunked speed-up is not quoted: the scan's or the chunked timings grew off their cost in this "
           "run");
}

std::string two_significant(double x) {
  if (!std::isfinite(x) || x <= 0) return fmt::format("{:.2g}", x);
  const int digits = int(std::floor(std::log10(x)));
  const double unit = std::pow(10.0, digits - 1);
  const double r = std::round(x / unit) * unit;
  return digits >= 1 ? fmt::format("{:.0f}", r) : fmt::format("{:.{}f}", r, 1 - digits);
}

std::string recall_takeaway(const RecallTable& t, const RecallVerdicts& v) {
  const std::string line = _f("MQAR at n = {}, d = {}: attention {:.2f}, SSM {:.2f}, hybrid {:.2f}.", t.pairs.back(),
                              t.widths.back(), v.gap_attention, v.gap_ssm, v.gap_hybrid);
  if (v.ssm_fewest.outcome == Outcome::fails)
    return _f("{} {}", line, _f("The SSM recalls only {:.2f} even at n = {}: its shortfall is training as well as "
                                "state.", v.ssm_fewest.measured, t.pairs.front()));
  // Equal bytes, unequal recall: bytes alone do not set the wall. Where the SSM's own recall rose with
  // its state (step 6), the state's size matters as well, and the sentence says so.
  if (v.same_bytes_differ.holds() && v.ssm_rises_with_state.holds())
    return _f("{} {}", line, _f("The SSM recalls {:.2f} at n = {} but {:.2f} at n = {}; its recall rose by {:.2f} "
                                "with its state (step 6), yet linear attention with about the same bytes ({} "
                                "against {}) keeps {:.2f}: bytes alone do not set the wall (one training seed per "
                                "model; the SSM's recipe differed, step 5, so recipe and mechanism are not "
                                "separated).",
                                v.ssm_fewest.measured, t.pairs.front(), v.gap_ssm, t.pairs.back(),
                                v.ssm_rises_with_state.measured, ch12_bytes(v.bytes_linear),
                                ch12_bytes(v.bytes_ssm), v.acc_linear));
  if (v.same_bytes_differ.holds())
    return _f("{} {}", line, _f("The SSM recalls {:.2f} at n = {} but {:.2f} at n = {}, while linear attention "
                                "with about the same bytes ({} against {}) keeps {:.2f}: bytes alone do not set "
                                "the wall (one training seed per model; the SSM's recipe differed, step 5, so "
                                "recipe and mechanism are not separated).",
                                v.ssm_fewest.measured, t.pairs.front(), v.gap_ssm, t.pairs.back(),
                                ch12_bytes(v.bytes_linear), ch12_bytes(v.bytes_ssm), v.acc_linear));
  return _f("{} {}", line, _f("The SSM recalls {:.2f} at n = {}: where its state is ample it learns the lookup, "
                              "and at n = {} its fixed state runs short.", v.ssm_fewest.measured, t.pairs.front(),
                              t.pairs.back()));
}

void show_ssd_example(Narrator& nar, const SsdExample& e) {
  const Labels rows = ch12_rows(e.x.shape(0));
  nar.say(_("the tensors below are named ssd_*: SSD, the state-space duality of step 2 (Dao & Gu 2024)."));
  nar.show("ssd_x", e.x, rows, {"x0", "x1"}, _("X: one value row per token (P = 2 value channels, N = 1 state entry per channel)"));
  nar.show("ssd_b", e.b, rows, {"B"}, _("B_t (N = 1): how strongly token t is written"));
  nar.show("ssd_c", e.c, rows, {"C"}, _("C_t: how strongly the state is read at t"));
  nar.show("ssd_a", Vec(xt::exp(e.log_a)), rows,
           _("a_t, the decay at t (kept as log a_t = −Δ_t·A ≤ 0, so 0 < a_t ≤ 1)"));
  nar.say(_("Δ_t > 0 is a step size computed from token t, A > 0 a rate learned per head: a long step forgets "
            "more. Keeping log a_t makes every decay a number between 0 and 1."));
  nar.show("ssd_y_scan", e.y_scan, rows, {"y0", "y1"},
           _("recurrent scan: h_t = a_t·h_{t−1} + B_t x_tᵀ, y_t = C_tᵀ h_t"));
  nar.say(_f("by hand: h_0 = (1, 0), y_0 = (1, 0); h_1 = 0.5·(1, 0) + (0, 1) = (0.5, 1), y_1 = (0.5, 1); "
             "h_2 = 0.25·(0.5, 1) + 2·(1, 1) = ({:.3f}, {:.2f}). a_0 multiplies the empty state h_{{−1}} = 0, "
             "so it changes nothing.", e.y_scan(2, 0), e.y_scan(2, 1)));
}

void show_ssd_forms(Narrator& nar, const SsdExample& e) {
  const std::size_t n = e.x.shape(0);
  Labels cols;
  for (std::size_t i = 0; i < n; ++i) cols.push_back("s" + std::to_string(i));
  nar.say(_("∘ is the elementwise product; in L, row t is the output token and column s the input token."));
  nar.show("ssd_mask", e.mask, ch12_rows(n), cols, _("L: cumulative decays below the diagonal (the causal mask)"));
  Mat picture = e.mask;  // the future (s > t) is masked, not faded: drawn as '·'
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t u = t + 1; u < n; ++u) picture(t, u) = -INFINITY;
  HeatmapStyle style;
  style.vmin = 0.0, style.vmax = 1.0;  // decays lie in [0, 1]
  style.masked_legend = _("0 (masked future)");
  nar.heatmap("ssd_mask", picture, ch12_rows(n), cols, _("L as a picture: the past fades; '·' the masked future"),
              style);
  nar.show("ssd_y_quadratic", e.y_quadratic, ch12_rows(n), {"y0", "y1"}, _("quadratic form: the scan's numbers"));
  nar.show("ssd_y_chunked", e.y_chunked, ch12_rows(n), {"y0", "y1"},
           _f("chunked, chunk length T_c = {}: quadratic inside, scan across", e.chunk));
  nar.record("ssd_y_reference", Mat(xt::cast<float>(e.y_reference)));
}

void report_ssd_agreement(Narrator& nar, const SsdAgreement& a) {
  std::string sizes;
  for (const SsdSize& z : ssd_agreement_sizes())
    sizes += fmt::format("{}T = {} (N = {}, P = {}, T_c = {})", sizes.empty() ? "" : ", ", z.t, z.n, z.p, z.chunk);
  nar.say(_f("random X, B, C and decays from --seed, on {}", sizes));
  Table t({_("form"), _("max |y − y_float64|"), _("cost")}, _("the same map three ways"));
  t.add({_("recurrent scan"), fmt::format("{:.1e}", a.err_scan), "O(T·N·P)"});
  t.add({_("quadratic (L ∘ C Bᵀ) X"), fmt::format("{:.1e}", a.err_quadratic), "O(T²·(N + P))"});
  t.add({_("chunked"), fmt::format("{:.1e}", a.err_chunked), "O(T·T_c·(N + P) + T·N·P)"});
  nar.table(t, true);
  const double worst = std::max({a.err_scan, a.err_quadratic, a.err_chunked});
  if (a.agree.holds())
    nar.result(_f("agreement within 1e-5 of the float64 scan: {} (worst {:.1e}, float32 rounding)",
                  outcome_word(a.agree.outcome), worst));
  else
    nar.result(_f("agreement within 1e-5 of the float64 scan: {} (worst {:.1e}): a form is wrong",
                  outcome_word(a.agree.outcome), worst));
}

void report_ssd_timing(Narrator& nar, const SsdTiming& r) {
  Table t({"T", _("scan µs"), _("quadratic µs"), _("chunked µs")},
          _f("one head, N = {}, P = {}, chunk length T_c = {}, one thread, best over 2 passes of 5 runs",
             r.n, r.p, r.chunk));
  for (const auto& row : r.rows)
    t.add({std::to_string(row.t), ch12_us(row.scan_s), ch12_us(row.quadratic_s), ch12_us(row.chunked_s)});
  nar.table(t, true);
  for (const SsdTimingOutlier& o : r.outliers) {
    const std::string form = std::string(o.form) == "scan"        ? _("scan")
                             : std::string(o.form) == "quadratic" ? _("quadratic")
                                                                  : _("chunked");
    const std::string grew = _f("{}: from T = {} to {} the time grew {:.1f}× where its cost predicts {:.0f}×",
                                form, o.from_t, o.to_t, o.growth, o.expected);
    bool others_on_cost = true;  // the other two forms, timed in the same passes, grew as their costs say here
    for (const SsdTimingOutlier& q : r.outliers)
      others_on_cost = others_on_cost && (q.from_t != o.from_t || std::string(q.form) == o.form);
    nar.result(std::string(o.form) != "quadratic"
                   ? _f("{} — most likely other programs' load on this shared machine", grew)
               : others_on_cost
                   ? _f("{} — the scan and the chunked form, timed in the same passes, grew as their costs say "
                        "over that interval, so the cause lies in the quadratic form's own T × T work (its matrix, "
                        "{} at T = {}, outgrowing a cache is one candidate; not measured)", grew,
                        ch12_bytes(4.0 * double(o.to_t) * double(o.to_t)), o.to_t)
                   : _f("{} — other programs' load on this shared machine, or its T × T matrix ({} at T = {}) "
                        "outgrowing a cache: this run does not tell them apart", grew,
                        ch12_bytes(4.0 * double(o.to_t) * double(o.to_t)), o.to_t));
  }
  // Each slope from its form's accepted lengths: the ends of its intervals named above are left out.
  auto slope = [&](const std::string& form, double value, std::size_t points, int exponent, const Verdict& v) {
    return points >= kSsdFitPoints
               ? _f("{} {:.2f} over {} lengths (expected {}: {})", form, value, points, exponent, outcome_word(v.outcome))
               : _f("{}: {} of {} lengths accepted, too few to fit ({})", form, points, r.rows.size(),
                    outcome_word(v.outcome));
  };
  nar.result(_f("log-log slopes against T, each a least-squares line through its form's accepted lengths{}: {}, {}, "
                "{}; within {:.2f} of the exponent holds, within {:.2f} partly; fewer than {} lengths: not judged",
                r.outliers.empty() ? _f(" (all {})", r.rows.size())
                                   : std::string(_(" (both ends of each interval named above are left out of "
                                                   "that form's line)")),
                slope(_("scan"), r.scan_slope, r.scan_points, 1, r.scan_linear),
                slope(_("quadratic"), r.quadratic_slope, r.quadratic_points, 2, r.quadratic_square),
                slope(_("chunked"), r.chunked_slope, r.chunked_points, 1, r.chunked_linear), r.scan_linear.bound,
                r.scan_linear.partly, kSsdFitPoints));
  if (r.crossover_t > 0)
    nar.result(_f("crossover in this run: from T = {} the quadratic form is slower than the scan",
                  r.crossover_t));
  else
    nar.result(_("crossover in this run: none in this range; the quadratic form stayed faster than the scan"));
  const std::size_t longest = r.rows.empty() ? 0 : r.rows.back().t;
  if (!r.speedup_clean.holds()) {  // the takeaway's rule (ssd_takeaway)
    nar.result(_f("at T = {}: {} (above)", longest, ssd_speedup_withheld()));
    return;
  }
  switch (r.chunked_faster.outcome) {
    case Outcome::holds:
      nar.result(_f("at T = {} the chunked form is {:.1f}× faster than the scan on this CPU in this run",
                    longest, r.chunked_vs_scan));
      break;
    case Outcome::partly:
      nar.result(_f("at T = {} the chunked form and the scan are on par on this CPU in this run ({:.2f}×)",
                    longest, r.chunked_vs_scan));
      break;
    default:
      nar.result(_f("at T = {} the chunked form is slower than the scan on this CPU in this run ({:.2f}×)",
                    longest, r.chunked_vs_scan));
  }
}

void report_family(Narrator& nar, const FamilyDemo& f) {
  const Labels rows = {"K1→v1", "K2→v2", "K1→v3", "K2→v4", "?K1"};
  nar.show("family_k", f.k, rows, {"k0", "k1"},
           _("keys: K1 = (1, 0), K2 = (0, 1); the last token, the query, has key 0 and value 0"));
  nar.show("family_v", f.v, rows, {"v0", "v1"},
           _("values; the query at the end asks for K1, whose latest value is v3"));
  nar.say(_f("the query is q = ({:.0f}, {:.0f}). Softmax scores q·k·{:.3f} (1/√N); linear attention reads "
             "φ(q)ᵀS / φ(q)ᵀz with φ(x) = elu(x) + 1 (elu(x) = x for x > 0, eˣ − 1 otherwise, so φ > 0) and z = Σ φ(k); "
             "the decay is {:.1f} per token; the delta rule writes with strength β = {:.0f}.", f.q(4, 0), f.q(4, 1), f.softmax_scale, f.decay, f.beta));
  nar.say(_f("the query token writes nothing into the decay and delta states (its key is 0), but the decay still "
             "multiplies S by {:.1f} once more before the read; softmax still gives its zero key a weight (e⁰ = 1) "
             "and linear attention adds φ(0) = (1, 1) to z.", f.decay));
  nar.say(_("mixer: the sub-layer of a block that mixes information across positions — softmax attention, or the "
            "recurrence that replaces it (the rest of the block works on each position alone)."));
  Table t({_("mixer"), _("state update"), _("state per head"), _("forgets"), _("read of K1"), "max_i |read_i − v3_i|"},
          _("the same five tokens through each mixer (N = P = 2)"));
  for (const auto& m : f.members) {
    std::string update, forgets;
    if (m.id == "softmax") {
      update = _("append k_t, v_t to the cache");
      forgets = _("nothing: the cache grows");
    } else if (m.id == "linear") {
      update = "S += φ(k) vᵀ, z += φ(k)";
      forgets = _("nothing: writes add up");
    } else if (m.id == "decay") {
      update = fmt::format("S = {:.1f}·S + k vᵀ", f.decay);
      forgets = _("everything, a little each step");
    } else {
      update = "S += β k (v − Sᵀk)ᵀ";
      forgets = _("the old value at the written key");
    }
    nar.record("family_" + m.id, m.outputs);
    t.add({m.id, update, fmt::format(_("{} floats"), m.state_floats), forgets,
           fmt::format("({:.2f}, {:.2f})", m.outputs(4, 0), m.outputs(4, 1)), fmt::format("{:.2f}", m.read_error)});
  }
  nar.table(t, true);
  nar.result(_f("delta rule reads exactly v3 (error ≤ 1e-5): {}; linear attention returns a blend (error ≥ 0.5): {}",
                outcome_word(f.delta_overwrites.outcome), outcome_word(f.linear_mixes.outcome)));
  if (f.delta_crowded.holds())
    nar.result(_f("add a third key K3 = ({:.1f}, {:.1f}), not orthogonal to K1, and write K3 → v5 = ({:.0f}, {:.0f}): "
                  "the delta rule's read of K1 is now off by {:.2f}. Three keys do not fit apart in N = 2 "
                  "dimensions: step 6's recall wall in miniature.", f.crowded_k(0, 0), f.crowded_k(0, 1),
                  f.crowded_v(0, 0), f.crowded_v(0, 1), f.crowded_error));
  else
    nar.result(_f("add a third key K3 = ({:.1f}, {:.1f}) and write K3 → v5: the delta rule still reads K1 within "
                  "{:.2f} of v3", f.crowded_k(0, 0), f.crowded_k(0, 1), f.crowded_error));
  const Vec& w = f.softmax_weights;
  nar.result(_f("softmax weighs the two K1 tokens alike ({:.3f} and {:.3f}; each K2 token {:.3f}, the query {:.3f}): "
                "it averages v1 and v3 and has no idea of the latest write. In MQAR (next step) each key is "
                "written once, and there softmax's lookup is sharp.", w(0), w(2), w(1), w(4)));
}

void show_mqar_task(Narrator& nar, std::size_t vocab) {
  Rng rng(3);
  const MqarBatch b = mqar_batch(1, 4, vocab, rng);
  std::string in, out;
  for (std::size_t i = 0; i < b.seq_len; ++i) {
    in += fmt::format("{:>4}", b.tokens[i]);
    out += b.targets[i] < 0 ? std::string("   ·") : fmt::format("{:>4}", b.targets[i]);
  }
  nar.block(fmt::format("  {:<8}{}\n  {:<8}{}\n", _("input"), in, _("target"), out));
  nar.say(_f("σ is a random order of the n keys. Each sequence draws its n keys afresh (distinct) from 0 … {} and "
             "its values from {} … {}, so no pair can be learned by heart: it must be read from the context. The "
             "loss is taken only at the queries (chance accuracy: 1/{}; naming some value of the sequence: 1/n).",
             vocab / 2 - 1, vocab / 2, vocab - 1, vocab / 2));
}

void show_mqar_recipe(Narrator& nar, const RecallTrainConfig& tc, bool trained_now, const RecallTable& t,
                      const RecallModelConfig& cfg) {
  nar.say(_f("what it took to learn at this size (README, training notes): a peak learning rate of 1e-2 (at "
             "1e-3 attention at d = 32 learned nothing, 0.04 at 4 pairs after 1500 steps), and a short "
             "convolution before every mixer, as Mamba and Based (Arora et al. 2024) have: a causal convolution "
             "over the last k_conv = {} tokens, channel by channel.", cfg.conv_taps));
  if (trained_now)
    nar.say(_f("this run's training: a peak rate of {} (the SSM from d = 64: {}); it stops early once every "
               "pair count reaches {:.2f} on {} stopping sequences (a set apart from step 6's), checked every "
               "{} steps, and otherwise after {} steps ({} for the SSM): the steps column of step 6.",
               ch12_rate(tc.lr), ch12_rate(tc.ssm_lr_from_64), tc.stop_accuracy, tc.eval_seqs, tc.eval_every,
               tc.max_steps, tc.ssm_max_steps));
  else
    nar.say(_f("each shipped model stopped early once every pair count reached {:.2f} on {} stopping sequences "
               "(a set apart from step 6's), checked every {} steps, or ran out of steps: their checkpoints "
               "record {} steps, the SSMs {} (step 6's steps column); they trained at a peak learning rate of "
               "{}, {} at {}.", tc.stop_accuracy, tc.eval_seqs, tc.eval_every,
               recall_steps_range(t, false), recall_steps_range(t, true), ch12_rate(recall_shipped_recipe().lr),
               !t.widths.empty() && t.widths.back() > 64 ? _("the SSM at d = 64 and wider") : _("the SSM at d = 64"),
               ch12_rate(recall_shipped_recipe().ssm_lr_from_64)));
  const RecallTrainConfig& steps = trained_now ? tc : recall_shipped_recipe();
  nar.say(_f("the SSM needed more (README.md, \"Chapter 12's 15 MQAR models\": the authors' --train sweeps, "
             "not rerun here): a learning rate in a narrow window (on 4 pairs alone "
             "at d = 32, 5e-3 recalled 0.27 after 3000 steps and 1e-2 0.86; 2e-2 recalled 0.05 and 3e-2 0.01, "
             "diverged; on the mix of 4–32 pairs d = 64 reached 0.55 at 32 pairs with 5e-3, 0.25 with 1e-2), and "
             "more steps: at 1e-2 on 4 pairs alone d = 32 recalled 0.24 after 600 steps, 0.69 after 1500 and "
             "0.86 after 3000, so the SSMs get {} steps where the others get {}.", steps.ssm_max_steps,
             steps.max_steps));
}

void report_recall_curve(Narrator& nar, RecallArch arch, std::size_t d_model, const RecallCurve& c,
                         std::size_t vocab_values, std::size_t budget_step) {
  const std::string model = _(arch_name(arch));
  if (c.accuracy.empty())
    return nar.result(_f("the {} at d = {}: its checkpoint stores no training curve (--train records one)", model,
                         d_model));
  const RecallPlateau p = judge_recall_plateau(c);
  const std::vector<float> series(c.accuracy.begin(), c.accuracy.end());
  nar.result(_f("the {} at d = {} as it trained (held-out accuracy on {} pairs every {} steps, from its checkpoint):",
                model, d_model, c.pairs, c.every));
  const auto [lo, hi] = std::minmax_element(c.accuracy.begin(), c.accuracy.end());
  nar.result(fmt::format("  {:.2f} {} {:.2f}", *lo, sparkline(series, 60), *hi));
  // One mark per evaluation when they fit: a caret under the other models' budget step locates it.
  const std::size_t budget_mark = c.every > 0 ? budget_step / c.every : 0;
  if (series.size() <= 60 && budget_mark >= 1 && budget_mark < series.size()) {
    nar.result(fmt::format("  {}{}^ {}", std::string(fmt::format("{:.2f} ", *lo).size(), ' '),
                           std::string(budget_mark - 1, ' '), _f("step {}", budget_step)));
    nar.say(_f("one mark per {} steps, from step {} to {}; ^ marks step {}, where the other models stop at the "
               "latest", c.every, c.every, c.every * series.size(), budget_step));
  }
  nar.say(_f("the labels are the curve's lowest and highest value; its last: {:.2f}", double(c.accuracy.back())));
  nar.result(p.long_plateau.holds()
                 ? _f("from step {} to {} every evaluation lay between {:.2f} and {:.2f} (mean {:.2f}; {:.2f} at "
                      "the first, {:.2f} at the last), within ±{:.2f} of 1/n = {:.2f} (claim 'within that band of 1/n "
                      "for at least {} steps': {}): as if it picked one of the sequence's {} values, not the right "
                      "one (chance over all {} values is {:.3f}); by step {} it recalled {:.2f}",
                      p.plateau_from, p.plateau_to, p.plateau_min, p.plateau_max, p.plateau_mean, p.plateau_first,
                      p.plateau_last, kPlateauBand, p.chance, kPlateauSteps, outcome_word(p.long_plateau.outcome),
                      c.pairs, vocab_values, 1.0 / double(vocab_values), p.final_step, p.final_accuracy)
                 : _f("it stayed near 1/n = {:.2f} (within ±{:.2f}) for {} steps at most (claim 'within that band "
                      "of 1/n for at least {} steps': {}); by step {} it recalled {:.2f}", p.chance, kPlateauBand,
                      p.plateau_steps, kPlateauSteps, outcome_word(p.long_plateau.outcome), p.final_step,
                      p.final_accuracy));
  const double at_budget = recall_curve_at(c, budget_step);
  if (std::isfinite(at_budget) && budget_step < p.final_step)
    nar.result(_f("at step {}, where the other models' training stops at the latest, it recalled {:.3f}; the "
                  "{} steps after it, to {:.3f} at step {}, added {:+.3f}", budget_step, at_budget,
                  p.final_step - budget_step, p.final_accuracy, p.final_step, p.final_accuracy - at_budget));
}

void report_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v, const RecallModelConfig& cfg,
                   const std::string& source) {
  const std::size_t wide = t.widths.back(), most = t.pairs.back();
  nar.say(_f("models loaded from {}; the steps column is read from each checkpoint.", source));
  nar.say(_f("every model has 2 layers; d is its width. SSM: N = {}, H = d/{} heads of P = {}, state H·N·P; "
             "linear attention: the same heads, state H·(P² + P); window: w = {}; hybrid: an SSM layer, then an "
             "attention layer. The bytes are what one sequence keeps at T = 3·{} = {}: both layers' KV caches or "
             "states, and each short convolution's last k_conv − 1 = {} inputs.",
             cfg.state_n, cfg.d_k, cfg.d_k, cfg.window, most, 3 * most, cfg.conv_taps - 1));
  nar.say(_f("against step 4's family: SSM is step 1's selective layer (step 4's 'decay', with a_t, B_t and C_t "
             "computed from the token); linear attn is step 4's 'linear'; window is softmax attention over the "
             "last w = {} tokens; step 4's delta rule is not trained here.", cfg.window));
  std::vector<std::string> head{_("model"), "d", _("steps"), _("bytes")};
  for (std::size_t n : t.pairs) head.push_back(fmt::format("n={}", n));
  Table tab(head, _f("MQAR accuracy on {} evaluation sequences per cell, not the stopping set (n = pairs; T = 3n)",
                     t.eval_seqs));
  for (RecallArch a : recall_archs())
    for (std::size_t d : t.widths) {
      std::vector<std::string> row{_(arch_name(a)), std::to_string(d), std::to_string(t.steps_of(a, d)),
                                   ch12_bytes(double(t.at(a, d, most).state_bytes))};
      for (std::size_t n : t.pairs) row.push_back(fmt::format("{:.2f}", t.at(a, d, n).accuracy));
      tab.add(row);
    }
  if (t.window_ceiling.size() == t.pairs.size()) {
    std::vector<std::string> row{_("one-layer reach"), "", "", ""};
    for (double c : t.window_ceiling) row.push_back(fmt::format("{:.2f}", c));
    tab.add(row);
  }
  nar.table(tab, true);
  if (t.window_ceiling.size() == t.pairs.size())
    nar.say(_f("one-layer reach: the share of these queries whose value lies among the w = {} tokens a window "
               "query sees (two layers and the convolutions can carry a little more, so a model may pass it).",
               cfg.window));
  // the picture of Based's Fig. 2: accuracy at the most pairs against the bytes of state
  std::vector<const RecallCell*> by_bytes;
  for (const auto& c : t.cells)
    if (c.pairs == most) by_bytes.push_back(&c);
  std::stable_sort(by_bytes.begin(), by_bytes.end(),
                   [](const RecallCell* a, const RecallCell* b) { return a->state_bytes < b->state_bytes; });
  std::string chart = fmt::format("  {}\n", _f("accuracy at n = {} against the bytes of state, smallest first "
                                                "(each █ is 0.05)", most));
  for (const RecallCell* c : by_bytes) {
    std::string bar;
    for (long i = 0; i < std::lround(c->accuracy * 20); ++i) bar += "█";
    chart += fmt::format("  {:>9}  {}{}  {:.2f} {}\n", ch12_bytes(double(c->state_bytes)), ch12_pad(_(arch_name(c->arch)), 12),
                         fmt::format("{:>3}", c->d_model), c->accuracy, bar);
  }
  nar.block(chart);
  switch (v.attention_high.outcome) {
    case Outcome::holds:
      nar.result(_f("attention stays high: its lowest accuracy is {:.2f} (≥ 0.9), as in Zoology's Fig. 2",
                    v.attention_high.measured));
      break;
    default:
      nar.result(_f("attention does not stay high here: its lowest accuracy is {:.2f} (bound 0.9)",
                    v.attention_high.measured));
  }
  if (v.ssm_fewest.holds())
    nar.result(_f("at n = {}, d = {} the SSM recalls {:.2f}: where its state is ample it learns the lookup",
                  t.pairs.front(), wide, v.ssm_fewest.measured));
  else if (v.ssm_fewest.outcome == Outcome::partly)
    nar.result(_f("at n = {} the SSM recalls {:.2f} at d = {}: where its state is ample it learns most of the "
                  "lookup, not all of it in {} steps", t.pairs.front(), v.ssm_fewest.measured, wide,
                  t.steps_of(RecallArch::ssm, wide)));
  else
    nar.result(_f("at n = {} the SSM recalls only {:.2f}, where its state is ample: this SSM did not learn "
                  "the lookup at this budget, so its low row is training, not memory alone",
                  t.pairs.front(), v.ssm_fewest.measured));
  if (v.ssm_wall.holds() && v.ssm_fewest.outcome != Outcome::fails)
    nar.result(_f("the wall: at n = {}, d = {} the SSM recalls {:.2f}, attention {:.2f}", most, wide, v.gap_ssm,
                  v.gap_attention));
  else if (v.ssm_wall.holds())
    nar.result(_f("at n = {}, d = {} the SSM recalls {:.2f}, attention {:.2f}: a gap, but not yet a wall of "
                  "memory, since the SSM fails where its state is ample too", most, wide, v.gap_ssm,
                  v.gap_attention));
  else
    nar.result(_f("no wall at n = {}, d = {}: the SSM recalls {:.2f}, attention {:.2f} (gap under 0.1)", most, wide,
                  v.gap_ssm, v.gap_attention));
  switch (v.ssm_rises_with_state.outcome) {
    case Outcome::holds:
      nar.result(_f("more state, more recall: the SSM's accuracy at n = {} rises by {:.2f} from the narrowest "
                    "to the widest model", most, v.ssm_rises_with_state.measured));
      break;
    case Outcome::fails:
      nar.result(_f("more state did not help: the SSM's accuracy at n = {} falls by {:.2f} from the narrowest "
                    "to the widest model", most, -v.ssm_rises_with_state.measured));
      break;
    default:
      nar.result(_f("the separation by state size did not appear: the SSM's accuracy at n = {} changes by {:+.2f} "
                    "from the narrowest to the widest model (within 0.05)", most, v.ssm_rises_with_state.measured));
  }
  if (v.linear_rises_with_state.holds())
    nar.result(_f("linear attention shows the trade-off: at n = {} its accuracy rises by {:.2f} as its state "
                  "grows from the narrowest to the widest model", most, v.linear_rises_with_state.measured));
  else
    nar.result(_f("linear attention's accuracy at n = {} does not rise with its state ({:+.2f})", most,
                  v.linear_rises_with_state.measured));
  switch (v.same_bytes_differ.outcome) {
    case Outcome::holds:
      nar.result(_f("bytes are not the whole story: at n = {}, d = {} linear attention ({}) recalls {:.2f} and the "
                    "SSM ({}) {:.2f}: at these bytes the SSM's shortfall is how its state is written and trained, "
                    "not its size (its training recipe differed, step 5; this run does not separate the two)",
                    most, wide,
                    ch12_bytes(v.bytes_linear), v.acc_linear, ch12_bytes(v.bytes_ssm), v.gap_ssm));
      break;
    case Outcome::fails:
      nar.result(_f("at n = {}, d = {} the SSM ({}) recalls {:.2f}, more than linear attention ({}, {:.2f}), "
                    "with about the same bytes", most, wide, ch12_bytes(v.bytes_ssm), v.gap_ssm,
                    ch12_bytes(v.bytes_linear), v.acc_linear));
      break;
    default:
      nar.result(_f("at n = {}, d = {} linear attention ({}) and the SSM ({}) recall {:.2f} and {:.2f}: with "
                    "these bytes the two kinds of state are on par (within 0.1, or bytes too far apart to compare)",
                    most, wide, ch12_bytes(v.bytes_linear), ch12_bytes(v.bytes_ssm), v.acc_linear, v.gap_ssm));
  }
  switch (v.hybrid_closes_gap.outcome) {
    case Outcome::holds:
      if (v.hybrid_closes_gap.measured >= 1.0)
        nar.result(_f("one attention layer closes all of the SSM's gap at n = {}, d = {}: the hybrid recalls {:.2f}, "
                      "attention {:.2f}", most, wide, v.gap_hybrid, v.gap_attention));
      else
        nar.result(_f("one attention layer closes {:.0f}% of the SSM's gap at n = {}, d = {} (hybrid {:.2f})",
                      100 * v.hybrid_closes_gap.measured, most, wide, v.gap_hybrid));
      break;
    case Outcome::partly:
      nar.result(_f("one attention layer closes part of the gap: {:.0f}% at n = {}, d = {} (hybrid {:.2f})",
                    100 * v.hybrid_closes_gap.measured, most, wide, v.gap_hybrid));
      break;
    case Outcome::fails:
      nar.result(_f("the hybrid closes only {:.0f}% of the gap at n = {}, d = {} (hybrid {:.2f})",
                    100 * v.hybrid_closes_gap.measured, most, wide, v.gap_hybrid));
      break;
    default:
      nar.result(_("the hybrid's share of the gap is not measurable: attention and the SSM are within 0.05"));
  }
  nar.result(_("each model here was trained once, with one seed: how far another seed would move these "
               "accuracies is not measured, so the two sentences above are one seed's evidence, not a proof"));
  const double window_most = v.window_falls.measured + v.gap_attention;
  if (v.window_falls.holds())
    nar.result(_f("the window (w = {}) falls once the pairs leave it: {:.2f} at n = {}, d = {}", cfg.window,
                  window_most, most, wide));
  else
    nar.result(_f("the window (w = {}) holds up at n = {}, d = {}: {:.2f}", cfg.window, most, wide, window_most));
  if (v.window_at_ceiling.outcome != Outcome::inconclusive) {
    const std::size_t k = std::size_t(std::find(t.pairs.begin(), t.pairs.end(), v.window_ceiling_pairs) -
                                      t.pairs.begin());
    const std::string off = _f("the best window model is within {:.2f} of its one-layer reach wherever pairs leave "
                               "the window (the farthest at n = {}: reach {:.2f}; claim 'within 0.05': {})",
                               v.window_at_ceiling.measured,
                               v.window_ceiling_pairs, t.window_ceiling.at(k),
                               outcome_word(v.window_at_ceiling.outcome));
    nar.result(v.window_at_ceiling.holds() ? _f("{}: its reach sets its accuracy", off)
               : v.window_at_ceiling.outcome == Outcome::partly ? _f("{}: its reach sets most of its accuracy", off)
                                                                : _f("{}: its reach alone does not set it", off));
  }
  if (v.window_full_pairs > 0) {
    const std::size_t n4 = v.window_full_pairs, dw = v.window_gap_width;
    const double att = t.at(RecallArch::attention, dw, n4).accuracy;
    const double win = t.at(RecallArch::sliding_window, dw, n4).accuracy;
    if (v.window_matches_attention.holds())
      nar.result(_f("at n = {} (T = {} ≤ w) the window is full attention, and recalls as attention does at every "
                    "width (at worst {:.2f} against {:.2f}, at d = {})", n4, 3 * n4, win, att, dw));
    else
      nar.result(_f("at n = {} (T = {} ≤ w) the window computes exactly what full attention does, yet at d = {} "
                    "it recalls {:.2f} against attention's {:.2f}: with the same computation the gap can only be "
                    "training. {}", n4, 3 * n4, dw, win, att, window_gap_cause(t, v, dw)));
  }
}

void export_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v) {
  const std::vector<RecallArch> archs = recall_archs();
  Tensor3 acc = xt::zeros<float>({archs.size(), t.widths.size(), t.pairs.size()}), bytes = acc;
  std::string arch_list, width_list, pair_list;
  for (std::size_t i = 0; i < archs.size(); ++i) {
    arch_list += fmt::format("{}\"{}\"", i ? ", " : "", recall_arch_id(archs[i]));
    for (std::size_t j = 0; j < t.widths.size(); ++j)
      for (std::size_t k = 0; k < t.pairs.size(); ++k) {
        const RecallCell& c = t.at(archs[i], t.widths[j], t.pairs[k]);
        acc(i, j, k) = float(c.accuracy);
        bytes(i, j, k) = float(c.state_bytes);
      }
  }
  for (std::size_t j = 0; j < t.widths.size(); ++j) width_list += fmt::format("{}{}", j ? ", " : "", t.widths[j]);
  for (std::size_t k = 0; k < t.pairs.size(); ++k) pair_list += fmt::format("{}{}", k ? ", " : "", t.pairs[k]);
  nar.record("mqar_accuracy", acc);
  nar.record("mqar_state_bytes", bytes);
  nar.manifest_field("mqar", fmt::format("{{\"archs\": [{}], \"widths\": [{}], \"pairs\": [{}], "
                                         "\"attention_high\": \"{}\", \"ssm_wall\": \"{}\", "
                                         "\"hybrid_closes_gap\": \"{}\"}}",
                                         arch_list, width_list, pair_list, outcome_id(v.attention_high.outcome),
                                         outcome_id(v.ssm_wall.outcome), outcome_id(v.hybrid_closes_gap.outcome)));
}

namespace {
// The steepest step's runs: their spread at both ends, and the step timed again.
void report_steepest_check(Narrator& nar, const DecodeCost& c) {
  nar.result(_f("checked: at {} and {} tokens the median run took up to {:.2f}× the best (steady when at most "
                "{:.2f}×: {}); timed again, the two contexts alternately, the step grew ×{:.1f} against ×{:.1f} "
                "the first time (the same within {:.2f}×: {})", c.steepest_from, c.steepest_to, c.steepest_spread,
                kDecodeSteadyRatio, outcome_word(c.steepest_steady.outcome), c.steepest_repeat_growth,
                c.steepest_growth, kDecodeSteadyRatio, outcome_word(c.steepest_repeats.outcome)));
}
}  // namespace

void report_decode_cost(Narrator& nar, const DecodeCost& c) {
  Table t({_("context"), _("attention µs"), _("median"), _("KV cache"), _("SSM µs"), _("median"), _("SSM state")},
          _f("one layer, one decode step after T tokens: d_model = {}, H = {} heads, P = {}, N = {}, one thread",
             c.d_model, c.heads, c.heads ? c.d_model / c.heads : 0, c.state_n));
  for (const auto& r : c.rows)
    t.add({std::to_string(r.context), ch12_us(r.attention_s),
           ch12_us(r.attention_median_s > 0 ? r.attention_median_s : r.attention_s), ch12_bytes(double(r.kv_bytes)),
           ch12_us(r.ssm_s), ch12_us(r.ssm_median_s > 0 ? r.ssm_median_s : r.ssm_s),
           ch12_bytes(double(r.state_bytes))});
  nar.table(t, true);
  nar.say(_f("µs: the best of {} runs; median: their median", c.runs));
  if (!c.rows.empty() && c.rows.back().attention_s > 0) {
    const double rate = double(c.rows.back().kv_bytes) / c.rows.back().attention_s * 1e-9;
    const std::string at = _f("as a rate: at {} tokens the step reads its {} KV cache in {} µs, {:.2f} GB/s (KV "
                              "bytes / best time)", c.rows.back().context,
                              ch12_bytes(double(c.rows.back().kv_bytes)), ch12_us(c.rows.back().attention_s), rate);
    nar.say(c.copy_gbs > 0
                ? _f("{}; a 256 MiB memory copy timed in this step ran at {:.2f} GB/s (bytes read and written, "
                     "one thread), so the step reads at {:.0f}% of that", at, c.copy_gbs, 100.0 * rate / c.copy_gbs)
                : at);
  }
  if (c.rows.size() > 1) {  // the SSM step's work does not depend on the context: its spread is the machine's
    double lo = c.rows.front().ssm_s, hi = lo;
    for (const auto& r : c.rows) lo = std::min(lo, r.ssm_s), hi = std::max(hi, r.ssm_s);
    nar.say(_f("the SSM step does the same work at every context, yet its best runs range {}–{} µs (×{:.1f}): "
               "this run's noise on a step this short", ch12_us(lo), ch12_us(hi), lo > 0 ? hi / lo : NAN));
  }
  // The verdicts beside attention's slope judge the fit over the accepted contexts; the whole table's
  // slope is printed apart when the two differ (the step checked below, timed again, disagreed).
  const std::string ssm_part = _f("SSM {:.2f} (flat when ≤ {:.1f}: {})", c.ssm_slope, c.ssm_flat.bound,
                                  outcome_word(c.ssm_flat.outcome));
  const std::string judged = _f("grows when ≥ {:.1f}: {}; within {:.2f} of the 1 that T·d counts: {}",
                                c.attention_grows.bound, outcome_word(c.attention_grows.outcome),
                                c.attention_linear.bound, outcome_word(c.attention_linear.outcome));
  if (c.attention_fit_points == c.rows.size())
    nar.result(_f("log-log slopes of step time against context: attention {:.2f} ({}), {}", c.attention_fit_slope,
                  judged, ssm_part));
  else if (c.attention_fit_points >= kSsdFitPoints) {
    std::string at;
    for (std::size_t ctx : c.attention_fit_contexts) at += (at.empty() ? "" : ", ") + std::to_string(ctx);
    nar.result(_f("log-log slopes of step time against context: attention {:.2f} over {} tokens ({}), {}",
                  c.attention_fit_slope, at, judged, ssm_part));
    nar.result(_f("(attention over all {} contexts: {:.2f}, not judged: it includes the two ends of the step "
                  "checked below, whose second timing disagreed with the first)", c.rows.size(), c.attention_slope));
  } else {
    nar.result(_f("log-log slopes of step time against context: attention {:.2f} over all {} contexts, not "
                  "judged; {}", c.attention_slope, c.rows.size(), ssm_part));
    nar.result(_f("(attention's slope is not judged: the step checked below, timed again, disagreed with its "
                  "first timing, and without its two ends {} contexts remain, too few for a fit)",
                  c.attention_fit_points));
  }
  if (c.attention_linear.holds()) {
    nar.result(_f("attention's slope {:.2f} is within {:.2f} of the 1 that its T·d term counts: each step reads "
                  "every cached key and value once", c.attention_fit_slope, c.attention_linear.bound));
    if (c.steepest_to > 0)
      nar.result(_f("the slope is one fit over the whole table; its steepest step is {} → {} tokens: ×{:.1f} in "
                    "time for ×{:.0f} in context (KV cache {} → {})", c.steepest_from, c.steepest_to,
                    c.steepest_growth, c.steepest_context_growth, ch12_bytes(double(c.steepest_kv_from)),
                    ch12_bytes(double(c.steepest_kv_to))));
    if (c.steepest_to > 0) report_steepest_check(nar, c);
  } else if (c.attention_slope > 1.0 && c.steepest_to > 0) {
    nar.result(_f("attention's slope over the whole table, {:.2f}, is steeper than the 1 that its T·d term counts; "
                  "the steepest step is "
                  "{} → {} tokens: ×{:.1f} in time for ×{:.0f} in context (KV cache {} → {})", c.attention_slope,
                  c.steepest_from, c.steepest_to, c.steepest_growth, c.steepest_context_growth,
                  ch12_bytes(double(c.steepest_kv_from)), ch12_bytes(double(c.steepest_kv_to))));
    report_steepest_check(nar, c);
    // The load is named only as one possible cause, when the runs were not steady; a retime that
    // disagrees with steady runs points at the order of the runs (read_steepest_jump).
    const DecodeJumpReading jump = read_steepest_jump(c);
    switch (jump) {
      case DecodeJumpReading::order_dependent:
        nar.result(_f("so the jump depends on how the step is timed; its runs were steady, so no burst of load "
                      "shows in them: timed back to back, a run may find the KV cache still in the CPU's caches "
                      "from the run before; timed alternately, the other context's KV cache ({} or {}) has just "
                      "displaced it. This program does not measure the caches, so no cause is named",
                      ch12_bytes(double(c.steepest_kv_from)), ch12_bytes(double(c.steepest_kv_to))));
        break;
      case DecodeJumpReading::unsteady_apart:
        nar.result(_("so the first timing is not the step's cost alone: its runs were not steady, so the machine's "
                     "load may have moved it, and so may the order of the runs (back to back, a run may find the KV "
                     "cache still in the CPU's caches; alternately, the other context has just displaced it); this "
                     "program measures neither, so no cause is named"));
        break;
      case DecodeJumpReading::unsteady_alone:
        nar.result(_("its ends' runs were not steady and the step was not timed again: the load may have moved "
                     "it, and no cause is named"));
        break;
      case DecodeJumpReading::reproduced:
        nar.result(_f("its ends' runs were not steady, yet timed again, alternately, the jump reproduced (×{:.1f} "
                      "against ×{:.1f}): a real cost of the step at a KV cache of {}, not the load; its cause (the "
                      "caches, the TLB, the step's pattern of reads) is not measured here", c.steepest_repeat_growth,
                      c.steepest_growth, ch12_bytes(double(c.steepest_kv_to))));
        break;
      case DecodeJumpReading::unchecked:
        nar.result(_("the jump was not checked against a second timing: no cause is named for it"));
        break;
      case DecodeJumpReading::measured:
        break;
    }
    if (jump == DecodeJumpReading::measured) {  // a cost the step repeats: a cause is worth naming
      if (c.jump_at_cache.holds())
        nar.result(_f("that is where the KV cache outgrows this core's {} L2 cache: each step then fetches it "
                      "from farther away, a likely cause", ch12_bytes(double(c.cache_bytes))));
      else if (c.jump_at_cache.outcome == Outcome::fails)
        nar.result(_f("the KV cache was already larger than this core's {} L2 cache before that step: caches "
                      "beyond L2, which this program does not measure, or other programs' load",
                      ch12_bytes(double(c.cache_bytes))));
      else
        nar.result(_("this program does not know the cache sizes here: caches or other programs' load"));
    }
  } else
    nar.result(_f("attention's slope {:.2f} is off the 1 that its T·d term counts: the d² projections, caches "
                  "and the machine's load move timings this short", c.attention_slope));
  if (c.rows.empty()) return;
  const std::string bytes = _f("at {} tokens the KV cache keeps {} against the state's {}, {:.0f}× the bytes",
                               c.rows.back().context, ch12_bytes(double(c.rows.back().kv_bytes)),
                               ch12_bytes(double(c.rows.back().state_bytes)), c.bytes_ratio_at_longest);
  if (c.longest_steady.holds())
    nar.result(_f("{}; one attention step cost {}× the SSM step in this run (best and median of {} runs; it "
                  "moves with the load)", bytes, ratio_range(c), c.runs));
  else if (c.ratio_context > 0 && std::isinf(c.longest_spread))
    nar.result(_f("{}; the time there ends the step checked above, which failed its checks, so its ratio would "
                  "not be a measured cost; at {} tokens, the longest context outside that step, one attention step "
                  "cost {}× the SSM step (best and median of {} runs)", bytes, c.ratio_context, ratio_range(c),
                  c.runs));
  else if (c.ratio_context > 0)
    nar.result(_f("{}; the step times there are not steady (a median run up to {:.2f}× the best, more than "
                  "{:.2f}×), so their ratio would measure the load; at {} tokens, the longest context timed "
                  "steadily, one attention step cost {}× the SSM step (best and median of {} runs)", bytes,
                  c.longest_spread, kDecodeSteadyRatio, c.ratio_context, ratio_range(c), c.runs));
  else
    nar.result(_f("{}; no context's step times are steady (a median run within {:.2f}× the best, for both "
                  "steps), so this run gives no ratio of their costs", bytes, kDecodeSteadyRatio));
}

std::string decode_cost_takeaway(const DecodeCost& c) {
  if (c.rows.empty()) return "";
  if (c.ratio_context == 0)
    return _f("at {} tokens the KV cache holds {:.0f}× the SSM state's bytes (no step time in this run was "
              "steady enough to compare): hybrids keep a few attention layers.", c.rows.back().context,
              c.bytes_ratio_at_longest);
  if (c.ratio_context == c.rows.back().context)
    return _f("at {} tokens the KV cache holds {:.0f}× the SSM state's bytes, and an attention step took {}× "
              "as long in this run: hybrids keep a few attention layers.", c.rows.back().context,
              c.bytes_ratio_at_longest, ratio_range(c));
  return _f("at {} tokens the KV cache holds {:.0f}× the SSM state's bytes; at {} tokens, the longest context "
            "timed steadily, an attention step took {}× as long in this run: hybrids keep a few attention "
            "layers.", c.rows.back().context, c.bytes_ratio_at_longest, c.ratio_context, ratio_range(c));
}

std::string ssd_takeaway(const SsdAgreement& a, const SsdTiming& r) {
  const std::string agree = _f("scan, masked attention and chunks compute one map (worst error {:.1e})",
                               a.agree.measured);
  if (r.rows.empty()) return agree + ".";
  if (r.speedup_clean.holds())
    return _f("{}; in this run the chunked form ran at {:.1f}× the scan's speed at T = {} (timings move with the "
              "load).", agree, r.chunked_vs_scan, r.rows.back().t);
  return _f("{}; {} (step 3).", agree, ssd_speedup_withheld());
}

}  // namespace attn
