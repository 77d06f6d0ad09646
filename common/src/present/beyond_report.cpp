// Chapter 12's presentation (see attn/present/beyond_report.hpp).
#include "attn/present/beyond_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "attn/data/mqar.hpp"
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
}  // namespace

void show_ssd_example(Narrator& nar, const SsdExample& e) {
  const Labels rows = ch12_rows(e.x.shape(0));
  nar.show("ssd_x", e.x, rows, {"x0", "x1"}, _("X: one value row per token (P = 2)"));
  nar.show("ssd_b", e.b, rows, {"B"}, _("B_t (N = 1): how strongly token t is written"));
  nar.show("ssd_c", e.c, rows, {"C"}, _("C_t: how strongly the state is read at t"));
  nar.show("ssd_a", Vec(xt::exp(e.log_a)), rows, _("a_t = exp(log a_t): the decay at t"));
  nar.show("ssd_y_scan", e.y_scan, rows, {"y0", "y1"},
           _("recurrent scan: h_t = a_t·h_{t−1} + B_t x_tᵀ, y_t = C_t h_t"));
  nar.say(_f("by hand: h_0 = (1, 0), y_0 = (1, 0); h_1 = 0.5·(1, 0) + (0, 1) = (0.5, 1), y_1 = (0.5, 1); "
             "h_2 = 0.25·(0.5, 1) + 2·(1, 1) = ({:.3f}, {:.2f}).", e.y_scan(2, 0), e.y_scan(2, 1)));
}

void report_ssd_agreement(Narrator& nar, const SsdAgreement& a) {
  Table t({_("form"), _("max |y − y_float64|"), _("cost")}, _("the same map three ways, on T = 1, 7, 50, 129"));
  t.add({_("recurrent scan"), fmt::format("{:.1e}", a.err_scan), "O(T·N·P)"});
  t.add({_("quadratic (L ∘ C Bᵀ) X"), fmt::format("{:.1e}", a.err_quadratic), "O(T²·(N + P))"});
  t.add({_("chunked"), fmt::format("{:.1e}", a.err_chunked), "O(T·Q·(N + P) + T·N·P)"});
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
          _f("one head, N = {}, P = {}, chunk Q = {}, one thread, best of 5", r.n, r.p, r.chunk));
  for (const auto& row : r.rows)
    t.add({std::to_string(row.t), ch12_us(row.scan_s), ch12_us(row.quadratic_s), ch12_us(row.chunked_s)});
  nar.table(t, true);
  nar.result(_f("log-log slopes: scan {:.2f}, quadratic {:.2f}, chunked {:.2f} (1 = linear in T, 2 = quadratic)",
                r.scan_slope, r.quadratic_slope, r.chunked_slope));
  if (r.crossover_t > 0)
    nar.result(_f("crossover: from T = {} the quadratic form is slower than the scan", r.crossover_t));
  else
    nar.result(_("crossover: none in this range; the quadratic form stayed faster than the scan"));
  const std::size_t longest = r.rows.empty() ? 0 : r.rows.back().t;
  switch (r.chunked_faster.outcome) {
    case Outcome::holds:
      nar.result(_f("at T = {} the chunked form is {:.1f}× faster than the scan on this CPU", longest,
                    r.chunked_vs_scan));
      break;
    case Outcome::partly:
      nar.result(_f("at T = {} the chunked form and the scan are on par on this CPU ({:.2f}×)", longest,
                    r.chunked_vs_scan));
      break;
    default:
      nar.result(_f("at T = {} the chunked form is slower than the scan on this CPU ({:.2f}×)", longest,
                    r.chunked_vs_scan));
  }
}

void report_family(Narrator& nar, const FamilyDemo& f) {
  const Labels rows = {"A→v1", "B→v2", "A→v3", "B→v4", "?A"};
  nar.show("family_k", f.k, rows, {"k0", "k1"}, _("keys: A = (1, 0), B = (0, 1); the last token writes nothing"));
  nar.show("family_v", f.v, rows, {"v0", "v1"}, _("values; the query at the end asks for A, whose latest value is v3"));
  Table t({_("mixer"), _("state update"), _("state per head"), _("forgets"), _("read of A"), _("|read − v3|")},
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
  nar.say(_f("keys from 0 … {}, values from {} … {}; the loss is taken only at the queries (chance: 1/{}).",
             vocab / 2 - 1, vocab / 2, vocab - 1, vocab / 2));
}

void report_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v) {
  std::vector<std::string> head{_("model"), "d", _("state at 3·n_max")};
  for (std::size_t n : t.pairs) head.push_back(fmt::format("n={}", n));
  Table tab(head, _f("MQAR accuracy on {} held-out sequences per cell (n = pairs; T = 3n)", t.eval_seqs));
  for (RecallArch a : recall_archs())
    for (std::size_t d : t.widths) {
      std::vector<std::string> row{_(arch_name(a)), std::to_string(d),
                                   ch12_bytes(double(t.at(a, d, t.pairs.back()).state_bytes))};
      for (std::size_t n : t.pairs) row.push_back(fmt::format("{:.2f}", t.at(a, d, n).accuracy));
      tab.add(row);
    }
  nar.table(tab, true);
  const std::size_t wide = t.widths.back(), most = t.pairs.back();
  switch (v.attention_high.outcome) {
    case Outcome::holds:
      nar.result(_f("attention stays high: its lowest accuracy is {:.2f} (≥ 0.9), as in Zoology's Fig. 2",
                    v.attention_high.measured));
      break;
    default:
      nar.result(_f("attention does not stay high here: its lowest accuracy is {:.2f} (bound 0.9)",
                    v.attention_high.measured));
  }
  if (v.ssm_wall.holds())
    nar.result(_f("the wall: at n = {}, d = {} the SSM recalls {:.2f}, attention {:.2f}", most, wide, v.gap_ssm,
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
  if (v.ssm_fewest.holds())
    nar.result(_f("at n = {} the SSM recalls {:.2f}: where its state is ample it learns the task",
                  t.pairs.front(), v.ssm_fewest.measured));
  else
    nar.result(_f("at n = {} the SSM recalls only {:.2f}, where its state is ample: this SSM did not learn "
                  "the lookup at this budget, so its low row is training, not memory alone",
                  t.pairs.front(), v.ssm_fewest.measured));
  switch (v.hybrid_closes_gap.outcome) {
    case Outcome::holds:
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
  if (v.window_falls.holds())
    nar.result(_f("the window (w = 16) falls once the pairs leave it: {:.2f} at n = {}, d = {}",
                  v.window_falls.measured + v.gap_attention, most, wide));
  else
    nar.result(_f("the window (w = 16) holds up at n = {}, d = {}: {:.2f}", most, wide,
                  v.window_falls.measured + v.gap_attention));
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

void report_decode_cost(Narrator& nar, const DecodeCost& c) {
  Table t({_("context"), _("attention µs"), _("KV cache"), _("SSM µs"), _("SSM state")},
          _f("one decode step of one layer, d_model = {}, h = {}, N = {}, one thread", c.d_model, c.heads, c.state_n));
  for (const auto& r : c.rows)
    t.add({std::to_string(r.context), ch12_us(r.attention_s), ch12_bytes(double(r.kv_bytes)), ch12_us(r.ssm_s),
           ch12_bytes(double(r.state_bytes))});
  nar.table(t, true);
  nar.result(_f("log-log slopes of step time against context: attention {:.2f} (grows: {}), SSM {:.2f} "
                "(flat: {})", c.attention_slope, outcome_word(c.attention_grows.outcome), c.ssm_slope,
                outcome_word(c.ssm_flat.outcome)));
  if (!c.rows.empty())
    nar.result(_f("at {} tokens one attention step costs {:.1f}× the SSM step and keeps {} against {}",
                  c.rows.back().context, c.ratio_at_longest, ch12_bytes(double(c.rows.back().kv_bytes)),
                  ch12_bytes(double(c.rows.back().state_bytes))));
}

}  // namespace attn
