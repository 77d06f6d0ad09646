// Chapter 02's reports (see attn/present/ch02_report.hpp).
#include "attn/present/ch02_report.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/attention/alignment.hpp"
#include "attn/present/chapters.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {

std::string us(double seconds) { return fmt::format("{:.1f}", seconds * 1e6); }

const char* metric_word(const std::string& id) {
  return id == "bleu" ? "BLEU" : id == "exact" ? _("exact match") : _("token accuracy");
}

std::string gap_cell(const MetricGap& g) { return fmt::format("{:+.1f} ({})", g.gap, g.bucket); }

const char* match_word(const Verdict& v) {
  return sentence_for(v.outcome, _("matches"), _("does not match"),
                      v.outcome == Outcome::partly ? _("comes close to") : _("cannot be compared with"));
}

// The step 4 table's last column: the verdict in one or two words.
const char* verdict_cell(const Verdict& v) {
  return sentence_for(v.outcome, _("match"), _("no match"),
                      v.outcome == Outcome::partly ? _("close") : _("not comparable"));
}

Vec reference_vec(const SentencePair& pair) {
  Vec r = Vec::from_shape({pair.alignment.size()});
  for (std::size_t i = 0; i < pair.alignment.size(); ++i) r(i) = float(pair.alignment[i]);
  return r;
}

}  // namespace

void report_scores(Narrator& nar, const ScoreViews& v, const SentencePair& pair, std::size_t step) {
  nar.record("h_t_dot", row_of(v.dot.h_t, 0));
  nar.record("H_dot", v.dot.H);
  nar.show("luong_dot_scores", v.dot.scores, pair.src, _("dot model: h_tᵀh̄_s, no parameters (needs equal sizes)"));
  const Mat& w_a = v.general_model->luong().attention.w_a;
  nar.record("W_a", w_a);
  nar.show("luong_general_scores", v.general.scores, pair.src,
           _f("general model: h_tᵀW_a h̄_s, W_a ({}×{}) trained", w_a.shape(0), w_a.shape(1)));
  const Luong& cat = v.concat_model->luong().attention;
  nar.record("h_t_concat", row_of(v.concat.h_t, 0));
  nar.record("H_concat", v.concat.H);
  nar.record("W_c", cat.w_c);
  nar.record("v_c", cat.v_c);
  nar.show("luong_concat_scores", v.concat.scores, pair.src,
           _f("concat model: v_cᵀtanh(W_c[h_t; h̄_s]), W_c ({}×{}), v_c ({}) trained", cat.w_c.shape(0),
              cat.w_c.shape(1), cat.v_c.size()));
  const int want = step < pair.alignment.size() ? pair.alignment[step] : kNoSource;
  const std::size_t on_word = std::size_t(int(v.dot.top) == want) + std::size_t(int(v.general.top) == want) +
                              std::size_t(int(v.concat.top) == want);
  nar.result(_f("largest score: dot \"{}\", general \"{}\", concat \"{}\"; the word being translated: \"{}\" ({} of 3 on it)",
                pair.src[v.dot.top], pair.src[v.general.top], pair.src[v.concat.top],
                want == kNoSource ? "<eos>" : pair.src[std::size_t(want)], on_word));
  nar.say(_("each model scores with its own trained states and weights (--export DIR saves them as h_t_dot, H_dot; h_t, "
            "H, W_a; h_t_concat, H_concat, W_c, v_c); the scales differ: compare which word each row ranks first; a row's "
            "spread sets how sharp its softmax is (chapter 03, steps 7 and 9)."));
}

void report_windows(Narrator& nar, const WindowModels& m, const SentencePair& pair, std::size_t t, std::size_t shown_d,
                    const Vocab& tv) {
  const WindowViews win = window_views(m.general, m.general_trace, t, shown_d);
  nar.show("alpha_global", win.global, pair.src, _("softmax over every source word"));
  nar.show("alpha_local_m", win.local_m, pair.src,
           _f("same scores, window |s − p_t| ≤ {}, p_t = t − 1 = {} (\"{}\"; s from 0)", shown_d, win.centre,
              pair.src[win.centre]));
  const std::size_t steps = m.general_trace.tape.steps.size();
  const std::size_t r = first_step_outside_window(pair.alignment, pair.src.size(), steps, shown_d);
  if (r < steps) {
    const WindowViews miss = window_views(m.general, m.general_trace, r, shown_d);
    const std::size_t s = std::size_t(pair.alignment[r]);
    nar.show("alpha_local_m_outside", miss.local_m, pair.src,
             _f("local-m at step t = {}: window {}…{} around p_t = {}", r + 1, miss.first, miss.last, miss.centre));
    nar.result(_f("decoder step t = {} translates \"{}\" (s = {}), outside that window: local-m gives it weight {:.3f}, global "
                  "attention {:.3f} — p_t = t cannot follow this reordering", r + 1, pair.src[s], s,
                  double(miss.local_m(s)), double(miss.global(s))));
  } else {
    nar.say(_f("every step's word lies inside its local-m window (D = {}) in this sentence.", shown_d));
  }
  const std::size_t tl = std::min(t, m.local_p_trace.tape.steps.size() - 1);
  const LocalPStepView lp = local_p_step_view(m.local_p_trace, tl);
  const std::size_t D = m.local_p.cfg.luong.half_width;
  nar.show("alpha_local_p", lp.alpha, pair.src,
           _f("the local-p model at step {}: p_t = {:.2f}, D = {}, σ = D/2", tl + 1, lp.p, D));
  nar.say(_f("σ: the Gaussian's standard deviation. Row sum {:.3f}: eq. 10 multiplies the softmax by exp(−(s − p_t)²/2σ²) after normalising, so local-p's "
             "weights need not sum to 1: a row of the map below can be ▓ with no second bright cell.", lp.sum));
  const Labels out = output_words(m.local_p_trace, tv);
  nar.show("local_p_positions", local_p_positions(m.local_p_trace, pair), out, {"p_t", _("true s")},
           _("predicted p_t vs the word translated (from 0; <eos>: S, past the end)"));
  {
    const Mat pos = local_p_positions(m.local_p_trace, pair);
    std::size_t worst = pos.shape(0);
    double miss = 0.0;
    for (std::size_t r = 0; r < pos.shape(0); ++r)
      if (double(pos(r, 1)) < double(pair.src.size()) && std::abs(double(pos(r, 0) - pos(r, 1))) > miss)
        miss = std::abs(double(pos(r, 0) - pos(r, 1))), worst = r;
    if (worst < pos.shape(0)) {
      nar.result(_f("largest miss: \"{}\" translates s = {}, local-p predicted p_t = {:.2f}, {:.2f} positions away "
                    "(window D = {})", out[worst], int(pos(worst, 1)), double(pos(worst, 0)), miss,
                    m.local_p.cfg.luong.half_width));
      // The same output word in the global model, which has no window: does it look at its source?
      const Labels gout = output_words(m.general_trace, tv);
      const std::vector<int> glook = argmax_alignment(m.general_trace.alignment);
      const std::size_t truth = std::size_t(pos(worst, 1));
      if (worst < gout.size() && gout[worst] == out[worst] && worst < glook.size()) {
        const std::size_t g = std::size_t(glook[worst]);
        const double ga = double(m.general_trace.alignment(worst, g));
        nar.say(g == truth
                    ? _f("the global-general model, with no window, looks hardest at \"{}\" (α = {:.2f}), the word "
                         "\"{}\" translates: this miss is local-p's own.",
                         pair.src[g], ga, out[worst])
                    : _f("the global-general model, with no window, writes \"{}\" too while looking hardest at \"{}\" "
                         "(α = {:.2f}), not at \"{}\": both miss that word, so the window is not the cause (the "
                         "map of general_alignment below).",
                         out[worst], pair.src[g], ga, pair.src[truth]));
      }
    }
  }
  nar.heatmap("local_p_alignment", m.local_p_trace.alignment, out, pair.src,
              _("the local-p model's α (rows: output words)"), {0.0, 1.0});
  nar.heatmap("general_alignment", m.general_trace.alignment, output_words(m.general_trace, tv), pair.src,
              _("the global-general model's α, no window (rows: output words)"), {0.0, 1.0});
  nar.record("reference_alignment", reference_vec(pair));
  const AlignmentScore lph = alignment_hits(m.local_p_trace.alignment, pair.alignment),
                       gl = alignment_hits(m.general_trace.alignment, pair.alignment);
  nar.result(_f("largest α on the word being translated: local-p {} of {}, global general {} of {} output words",
                lph.hits, lph.total, gl.hits, gl.total));
  const std::string cut = win.words() < 2 * shown_d + 1
                              ? _f("; {} at step {}, where the sentence's {} cuts the window", win.words(), t + 1,
                                   win.first == 0 ? _("start") : _("end"))
                              : std::string();
  nar.say(_f("D: local-m is shown with D = {} (2D + 1 = {} of the {} words{}) so its window is visibly narrower than "
             "the sentence, on the general model's scores — not a trained local-m model; the local-p model was "
             "trained with D = {} (the paper's D = 10 would cover a whole 10-word sentence).",
             shown_d, 2 * shown_d + 1, pair.src.size(), cut, D));
}

void report_match(Narrator& nar, const std::vector<NamedResult>& results, const std::vector<MatchStudy>& matches) {
  const Table by_length = length_table(results);
  nar.table(by_length, /*as_result=*/true);
  if (const std::string note = two_decimals_note(by_length); !note.empty()) nar.say(note);
  Table t({_("model"), _("BLEU gap"), _("exact-match gap"), _("token-acc. gap"), _("verdict")});
  for (const MatchStudy& m : matches)
    t.add({m.model, gap_cell(m.bleu), gap_cell(m.exact), gap_cell(m.token),
           m.matches.holds() ? std::string(verdict_cell(m.matches))
                             : _f("{} ({})", verdict_cell(m.matches), metric_word(m.worst_metric))});
  nar.table(t, /*as_result=*/true);
  nar.say(_f("gap = model − Bahdanau in points, the largest over the six buckets (bucket in brackets); verdict "
             "against Bahdanau: match, every gap within {:.0f} points; close, within {:.0f}; else no match — set by "
             "the one metric with the largest gap (named in brackets), whatever the other two show.",
             kMatchPoints, kClosePoints));
  const MatchStudy& g = match_of(matches, "luong_general");
  nar.result(_f("global-general vs Bahdanau: largest gap {:+.1f} points ({} at {} words): it {} Bahdanau", g.worst.gap,
                metric_word(g.worst_metric), g.worst.bucket, match_word(g.matches)));
  // Every model whose verdict one or two sentences would change; models with the same figures share
  // one sentence.
  std::vector<std::pair<std::vector<std::string>, std::string>> near_bound;  // models, what holds for each
  for (const MatchStudy& m : matches) {
    const double margin = (m.matches.holds() ? kMatchPoints : kClosePoints) - std::abs(m.worst.gap);
    std::size_t sentences = 0;
    for (const auto& b : result_named(results, "bahdanau").buckets)
      if (b.bucket.label() == m.worst.bucket) sentences = b.sentences;
    if (margin < 0.0 || m.worst_metric != "exact" || sentences == 0) continue;
    const std::size_t more = std::size_t(std::floor(margin / (100.0 / double(sentences)))) + 1;
    if (more > 2) continue;
    const std::string what =
        _f("{:.1f} points inside the {:.0f}-point bound; one sentence of the {} in that bucket is {:.2f} points of "
           "exact match, so {} there would change the verdict",
           margin, m.matches.holds() ? kMatchPoints : kClosePoints, sentences, 100.0 / double(sentences),
           more == 1 ? std::string(_("1 more wrong sentence")) : _f("{} more wrong sentences", more));
    const auto same = std::find_if(near_bound.begin(), near_bound.end(), [&](const auto& e) { return e.second == what; });
    if (same == near_bound.end()) near_bound.push_back({{m.model}, what});
    else same->first.push_back(m.model);
  }
  for (const auto& [models, what] : near_bound)
    nar.say(models.size() == 1
                ? _f("{}: {} (one training run per model).", models.front(), what)
                : _f("{}: each {} (one training run per model).", fmt::join(models, _(" and ")), what));
  for (const MatchStudy& m : matches)
    if (m.best_at_last_step())
      nar.say(_f("{}'s checkpoint is its last training step ({} of {}), where its validation BLEU was still at its "
                 "best: its gaps are judged at that step; it may still have been improving, and a longer run could "
                 "narrow them.", m.model, m.best_step, m.steps));
  const MatchStudy& best = closest_match(matches);
  nar.result(_f("closest to Bahdanau: {} (largest gap {:+.1f} points, {} at {} words)", best.model, best.worst.gap,
                metric_word(best.worst_metric), best.worst.bucket));
}

std::string dot_speed_sentence(const ScoreCostStudy& s) {
  switch (s.dot_faster.outcome) {
    case Outcome::holds:
      return _f("faster than Bahdanau at all {} sizes, each beyond its ratio's spread", s.rows.size());
    case Outcome::fails:
      return _f("slower than Bahdanau beyond the spread at {} of {} sizes", s.rows_slower, s.rows.size());
    default:
      return _f("faster beyond the spread at {} of {} sizes, within it at the others: no verdict for every size",
                s.rows_faster, s.rows.size());
  }
}

void report_score_cost(Narrator& nar, const ScoreCostStudy& s) {
  const bool full = nar.options().full;
  Table st({"S", "hidden", _("Bahdanau µs"), _("dot µs"), "×", _("general µs"), "×", _("concat µs"), "×"});
  Table sp({"S", "hidden", _("Bahdanau"), _("dot"), _("general"), _("concat"), _("dot ×"), _("general ×"),
            _("concat ×"), _("dot vs Bahdanau")});
  Mat times = Mat::from_shape({s.rows.size(), kScoreKinds.size()});
  Mat sizes = Mat::from_shape({s.rows.size(), std::size_t(2)});
  Mat spreads = Mat::from_shape({s.rows.size(), kScoreKinds.size()});
  Mat ratio_spreads = Mat::from_shape({s.rows.size(), kScoreKinds.size()});
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    const ScoreCostRow& x = s.rows[r];
    std::vector<std::string> row = {std::to_string(x.src_len), std::to_string(x.hidden), us(x.seconds[0])};
    std::vector<std::string> srow = {std::to_string(x.src_len), std::to_string(x.hidden)};
    for (std::size_t k = 1; k < kScoreKinds.size(); ++k) row.insert(row.end(), {us(x.seconds[k]), fmt::format("{:.2f}", x.gain(k))});
    for (std::size_t k = 0; k < kScoreKinds.size(); ++k) srow.push_back(fmt::format("{:.2f}", x.spread_of(k)));
    for (std::size_t k = 1; k < kScoreKinds.size(); ++k) srow.push_back(fmt::format("{:.2f}", x.gain_spread(k)));
    srow.push_back(sentence_for(s.dot_row_faster[r].outcome, _("faster, beyond it"), _("slower, beyond it"),
                                _("within it")));
    for (std::size_t k = 0; k < kScoreKinds.size(); ++k)
      times(r, k) = float(x.seconds[k]), spreads(r, k) = float(x.spread_of(k)),
      ratio_spreads(r, k) = float(x.gain_spread(k));
    sizes(r, 0) = float(x.src_len), sizes(r, 1) = float(x.hidden);
    st.add(row);
    sp.add(srow);
  }
  nar.table(st, /*as_result=*/true);
  nar.record("score_times", times);
  nar.record("score_sizes", sizes);
  nar.record("score_spreads", spreads);
  nar.record("score_ratio_spreads", ratio_spreads);
  nar.say(_("× = Bahdanau's time / this one's (above 1: faster than Bahdanau). A = hidden/2 (the attention "
            "width); Bahdanau's U_a·h̄_s is precomputed once per sentence, and so is concat's product of h̄_s with "
            "the rows of W_c that multiply it; median of 7 rounds of 40–150 calls, the four kinds timed in turn "
            "within each round; 1 OpenBLAS thread."));
  if (full) {
    nar.say(_("each timing's spread (columns Bahdanau to concat): its second-slowest round ÷ its second-fastest; "
              "a ratio's spread (dot ×, general ×, concat ×): the same for that kind's × round by round (both "
              "timed in the same round, under the same load). Dot is faster beyond the spread where its × exceeds "
              "its ratio's spread, slower beyond it where 1/× does."));
    nar.table(sp, /*as_result=*/true);
    nar.result(_f("dot vs Bahdanau: {:.2f}× at S = {}, {:.2f}× at S = {} (hidden {}); {:.2f}× at hidden {} (S = {}) — "
                  "{}",
                  s.dot_short, s.short_len, s.dot_long, s.long_len, s.small_hidden, s.dot_wide, s.wide_hidden,
                  s.wide_len, dot_speed_sentence(s)));
    nar.result(_f("dot's own time grows {:.1f}× from S = {} to S = {}, where its S·hidden multiply-adds predict "
                  "{:.0f}×: {:.2f}× apart (criterion: within 1.5×, judged against the two dot timings' spreads "
                  "multiplied, {:.2f}×): {}", s.dot_growth, s.short_len, s.long_len, s.predicted_growth, s.growth_off,
                  s.growth_noise,
                  sentence_for(s.dot_follows_cost.outcome, _("S·hidden explains it (within 1.5×)"),
                               _("S·hidden alone does not explain it (call overhead, caches, other programs)"),
                               _("no verdict: within the rounds' spread"))));
    nar.result(_f("dot's × went from {:.2f}× to {:.2f}× from S = {} to S = {} (judged against the two ratios' "
                  "spreads multiplied, {:.2f}×, never taken below 1.10× so that two steady timings do not make a "
                  "tiny change a trend): {}", s.dot_short, s.dot_long, s.short_len, s.long_len, s.trend_noise,
                  sentence_for(s.dot_gain_grows.outcome, _("it rose"), _("it fell"),
                               _("no verdict, within that spread"))));
  }
  report_score_ops(nar, s);
  nar.result(order_sentence(s));
  const ScoreOps &b = s.ops.at(0), &c = s.ops.at(3);
  if (b.multiply_adds == c.multiply_adds && b.tanh == c.tanh && b.exp == c.exp)
    nar.say(_f("Bahdanau and concat count the same work ({:.0f} multiply-adds and {:.0f} tanh calls each at S = {}), "
               "yet Bahdanau ÷ concat ran from {:.2f}× to {:.2f}× over the {} sizes: what separates two equal counts "
               "is not the score's arithmetic but timing noise and the code around it, so no single × here is a "
               "property of a score.",
               b.multiply_adds, b.tanh, s.rows.at(s.ops_row).src_len, s.concat_gain_low, s.concat_gain_high,
               s.rows.size()));
  nar.say(stability_sentence(s));
  if (!full)
    nar.say(_("--full adds each timing's spread and a verdict at each size; on a loaded machine those verdicts "
              "change from run to run, so the lesson reads the order over all rounds instead."));
}

void report_score_ops(Narrator& nar, const ScoreCostStudy& s) {
  const ScoreCostRow& r = s.rows.at(s.ops_row);
  Table t({_("score"), _("multiply-adds"), _("tanh calls"), _("exp calls"), _("µs measured")});
  for (std::size_t k = 0; k < kScoreKinds.size(); ++k)
    t.add({kScoreKinds[k], fmt::format("{:.0f}", s.ops[k].multiply_adds), fmt::format("{:.0f}", s.ops[k].tanh),
           fmt::format("{:.0f}", s.ops[k].exp), us(r.seconds[k])});
  nar.say(_f("what one call computes at S = {}, hidden = {}, A = {}, counted from the code (matrix products and "
             "plain loops alike; the exp calls are the softmax's):", r.src_len, r.hidden, r.hidden / 2));
  nar.table(t, /*as_result=*/true);
  const std::string mads = _f("by multiply-adds alone, general ({:.0f}) would take {:.2f}× Bahdanau's time ({:.0f}); "
                              "measured, Bahdanau ÷ general is {:.2f}× here (ratio spread {:.2f}×)",
                              s.ops[2].multiply_adds, s.general_mads, s.ops[0].multiply_adds, r.gain(2),
                              r.gain_spread(2));
  if (!nar.options().full) {
    nar.result(mads);
    return;
  }
  nar.result(_f("{}: {}", mads, mads_sentence(s)));
  nar.result(_f("the two scores with S·A tanh calls (Bahdanau, concat) against the two without (dot, general), size "
                "by size: {}", tanh_split_sentence(s)));
}

std::string mads_sentence(const ScoreCostStudy& s) {
  switch (s.mads_explain.outcome) {
    case Outcome::holds:
      return _f("multiply-adds pick the faster of the two at all {} sizes", s.rows.size());
    case Outcome::fails:
      return _f("multiply-adds alone pick the wrong one at {} of {} sizes, beyond the spread", s.mads_rows_against,
                s.rows.size());
    default:
      return _("no verdict: within the spread at some sizes");
  }
}

std::string tanh_split_sentence(const ScoreCostStudy& s) {
  switch (s.tanh_split.outcome) {
    case Outcome::holds:
      return _f("both slower than both, beyond each pair's ratio spread, at all {} sizes", s.rows.size());
    case Outcome::fails:
      return _("a score with tanh calls ran faster than one without, beyond the spread: the tanh count does not "
               "order them");
    default:
    {
      std::vector<std::string> sizes;
      for (std::size_t k : s.split_row_index)
        sizes.push_back(_f("S = {} / hidden {}", s.rows[k].src_len, s.rows[k].hidden));
      return s.split_rows == 0 ? _f("both slower than both beyond the spread at none of the {} sizes",
                                    s.rows.size())
                               : _f("both slower than both beyond the spread at {} of {} sizes ({}), within it at "
                                    "the others",
                                    s.split_rows, s.rows.size(), fmt::join(sizes, _(", ")));
    }
  }
}

std::string order_sentence(const ScoreCostStudy& s) {
  switch (s.order_in_rounds.outcome) {
    case Outcome::holds:
      return _f("round by round, over all {} rounds of the {} sizes: both scores with tanh calls (Bahdanau, concat) "
                "took longer than both without (dot, general) in {} of them — in {}",
                s.split_total, s.rows.size(), s.split_rounds,
                s.split_rounds == s.split_total ? _("every round") : _("most rounds"));
    case Outcome::fails:
      return _f("round by round, over all {} rounds of the {} sizes: both scores with tanh calls (Bahdanau, concat) "
                "took longer than both without (dot, general) in only {} of them — not in most rounds",
                s.split_total, s.rows.size(), s.split_rounds);
    default:
      return _("no rounds were kept, so the order cannot be read round by round");
  }
}

std::string stability_sentence(const ScoreCostStudy& s) {
  return _f("what is stable and what is not: a × is one run's figure; each moved by up to {:.2f}× between this "
            "run's rounds (the largest ratio spread, --full's table), and a rerun on a loaded machine moves them as "
            "far or further: read the × as sizes within that spread, not as fixed figures.", s.max_ratio_spread);
}

std::string score_cost_why(const ScoreCostStudy& s) {
  const ScoreCostRow& r = s.rows.at(s.ops_row);
  switch (s.order_in_rounds.outcome) {
    case Outcome::holds:
      return s.general_mads > 1.0
                 ? _f("dot and general compute with matrix products alone; Bahdanau and concat also evaluate tanh on "
                      "S·A = {:.0f} numbers per call (at S = {}, hidden = {}). General does {:.2f}× Bahdanau's "
                      "multiply-adds and still ran faster in most rounds, so here the tanh calls, not the "
                      "multiply-adds, set the cost.",
                      s.ops[0].tanh, r.src_len, r.hidden, s.general_mads)
                 : _f("dot and general compute with matrix products alone; Bahdanau and concat also evaluate tanh on "
                      "S·A = {:.0f} numbers per call (at S = {}, hidden = {}), and they were the slower two in most "
                      "rounds.",
                      s.ops[0].tanh, r.src_len, r.hidden);
    case Outcome::fails:
      return _f("in this run the order held in only {} of {} rounds: the timings are too noisy (or the machine too "
                "loaded) to say what makes one score cheaper than another; a run on a quieter machine can.",
                s.split_rounds, s.split_total);
    default:
      return _("no rounds were timed, so nothing here says what makes one score cheaper than another.");
  }
}

std::string train_claim_words(const TrainStepStudy& s) {
  return s.beyond.holds() ? _("held (at or beyond its upper end)")
                          : sentence_for(s.claim.outcome, _("held"), _("did not hold (below 1.5× beyond the spread)"),
                                         _("got no verdict (1.5× lies within the spread)"));
}

void report_train_steps(Narrator& nar, const TrainStepStudy& s, const StepGainStudy& g, const Seq2SeqConfig& sz) {
  Table tt({_("model"), _("ms / step"), _("spread"), _("Bahdanau ÷ this")});
  Vec step_times = Vec::from_shape({s.ms.size()});
  for (std::size_t k = 0; k < s.ms.size(); ++k) {
    step_times(k) = float(s.ms[k]);
    const double spread = k < s.spreads.size() ? s.spreads[k] : 1.0;
    tt.add({s.models[k], fmt::format("{:.1f}", s.ms[k]), fmt::format("{:.2f}", spread),
            fmt::format("{:.2f}", s.ms[0] / s.ms[k])});
  }
  nar.table(tt, /*as_result=*/true);
  nar.record("step_times", step_times);
  nar.say(_("spread: a model's second-slowest step ÷ its second-fastest; a ratio's spread: Bahdanau's spread × the "
            "model's."));
  nar.result(_f("the source article {}: \"Luong trains 1.5–2× "
                "faster than Bahdanau\" (no published measurement). Here: global-general runs {:.2f}× Bahdanau's speed "
                "per training step (ratio spread {:.2f}×), global-dot {:.2f}× — in this run the claim {}.",
                source_article(), s.general_speedup, s.general_spread, s.dot_speedup, train_claim_words(s)));
  nar.result(_f("fastest per training step in this run: {} ({:.1f} ms)", s.models[s.fastest], s.ms[s.fastest]));
  if (std::isnan(g.call_gain))
    nar.say(_f("step 5 timed no score at S = {}: no per-call figure to set beside the training step.", g.src_len));
  else
    nar.result(_f("global-general's score alone: {:.2f}× Bahdanau's speed per call at S = {} (step 5, ratio spread "
                  "{:.2f}×); its whole training step: {:.2f}× — {}", g.call_gain, g.src_len, g.spread, g.step_gain,
                  sentence_for(g.smaller.outcome, _("the step gains less, beyond that spread"),
                               _("the step gains more, beyond that spread"), _("no verdict: within that spread"))));
  nar.say(_("these are one run's timings: run it again to see how far the ratios move."));
  nar.say(_f("conditions: this CPU, 1 OpenBLAS thread, median of {} steps per model after a warm-up, the models "
             "interleaved step by step, the chapter's model sizes (embedding E {}, encoder 2×{}, decoder {}, "
             "attention A {}), other "
             "programs possibly running at the same time.", s.reps, sz.emb, sz.enc_hidden, sz.dec_hidden, sz.attn));
}

namespace {
// A part of a seq2seq model (parameter_groups' names) as the size table heads it.
std::string part_title(const std::string& part) {
  if (part == "src_emb") return "E_src";
  if (part == "tgt_emb") return "E_tgt";
  if (part == "encoder") return _("encoder");
  if (part == "init") return _("s_0 layer");
  if (part == "attention") return _("attention");
  if (part == "combine") return "W_c (h̃)";
  if (part == "decoder") return _("decoder");
  if (part == "out") return _("output");
  return part;
}
std::string part_titles(const std::vector<std::string>& parts) {
  std::vector<std::string> titles;
  for (const auto& p : parts) titles.push_back(part_title(p));
  return fmt::format("{}", fmt::join(titles, ", "));
}
}  // namespace

void report_model_sizes(Narrator& nar, const ModelSizes& s, const Seq2SeqConfig& widths) {
  std::vector<std::string> parts;  // the columns: every part any model has, in the models' order
  for (const auto& groups : s.parts)
    for (const auto& [part, n] : groups)
      if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
  const std::vector<std::string> canonical = {"src_emb", "tgt_emb", "encoder", "init", "attention", "combine",
                                              "decoder", "out"};
  std::stable_sort(parts.begin(), parts.end(), [&](const std::string& a, const std::string& b) {
    auto at = [&](const std::string& p) { return std::find(canonical.begin(), canonical.end(), p) - canonical.begin(); };
    return at(a) < at(b);
  });
  std::vector<std::string> header = {_("model"), _("parameters")};
  for (const auto& p : parts) header.push_back(part_title(p));
  Table t(header, _("parameters of each model by part, counted from its loaded weights"));
  for (std::size_t i = 0; i < s.names.size(); ++i) {
    std::vector<std::string> row = {s.names[i], std::to_string(s.totals[i])};
    for (const auto& p : parts) {
      const auto it = s.parts[i].find(p);
      row.push_back(it == s.parts[i].end() ? "—" : std::to_string(it->second));
    }
    t.add(row);
  }
  nar.table(t);
  const std::string range = _f("from {} ({}) to {} ({})", s.totals[s.smallest], s.names[s.smallest],
                               s.totals[s.largest], s.names[s.largest]);
  nar.say(s.same_widths
              ? _f("every model has the same widths (embedding E = {}, encoder 2×{}, decoder Hd = {}, attention width A = {}), "
                   "not the same parameter count: {}; the parts whose counts differ: {}",
                   widths.emb, widths.enc_hidden, widths.dec_hidden, widths.attn, range, part_titles(s.parts_differing))
              : _f("the models' widths are not all the same (E, encoder, decoder or A); their counts run {}; the "
                   "parts whose counts differ: {}", range, part_titles(s.parts_differing)));
}

std::string train_step_why(const ModelSizes& s) {
  return s.parts_differing.empty()
             ? std::string(_("every part of the models has the same parameter count (step 1's table): only how "
                             "the attention computes differs, forward and backward."))
             : _f("the parts whose parameter counts differ (step 1's table: {}) cost differently, forward and "
                  "backward; the others are the same size in every model.", part_titles(s.parts_differing));
}

std::string shared_sizes_clause(const ModelSizes& s, const Seq2SeqConfig& widths) {
  const std::size_t n = s.names.size();
  return s.same_widths
             ? _f("all {} share the same bidirectional encoder (2×{}) and widths (step 1's table), data, training "
                  "steps and seed, though not the same parameter count ({} to {})",
                  n, widths.enc_hidden, s.totals[s.smallest], s.totals[s.largest])
             : _f("all {} share data, training steps and seed, but not their widths (step 1's table) nor their "
                  "parameter count ({} to {})", n, s.totals[s.smallest], s.totals[s.largest]);
}

void report_training_records(Narrator& nar, const std::vector<const ChapterModel*>& models) {
  std::size_t loaded = 0;
  for (const ChapterModel* m : models) loaded += !m->trained;
  if (loaded == 0) {
    nar.say(_("the training times above were measured in this run, one model after another."));
    return;
  }
  // The recorded times' range, so that an outlier among them is named rather than left to the reader.
  double lo = 0.0, hi = 0.0;
  std::string lo_name, hi_name;
  for (const ChapterModel* m : models) {
    const auto it = m->metadata.find("train_seconds");
    if (m->trained || it == m->metadata.end()) continue;
    double x = 0.0;
    try { x = std::stod(it->second); } catch (const std::exception&) { continue; }
    if (lo_name.empty() || x < lo) lo = x, lo_name = model_title(m->model.cfg);
    if (hi_name.empty() || x > hi) hi = x, hi_name = model_title(m->model.cfg);
  }
  const std::string range = lo_name.empty() || lo <= 0.0 || lo_name == hi_name
                                ? std::string()
                                : _f(" They run from {:.1f} s ({}) to {:.1f} s ({}), {:.0f}× apart, and the files do "
                                     "not say why.", lo, lo_name, hi, hi_name, hi / lo);
  nar.say(_f("the training times above ({} of {} models) are each checkpoint's own training record, written when it "
             "was trained, on a machine and at a load the file does not record: their differences are not the models' "
             "costs; --time-training (step 6) times every model's training step side by side in this run.{}",
             loaded, models.size(), range));
}

void note_checkpoint_steps(std::vector<MatchStudy>& matches, const std::map<std::string, ChapterModel>& models) {
  for (MatchStudy& m : matches) {
    const auto it = models.find(m.model);
    if (it != models.end()) std::tie(m.best_step, m.steps) = checkpoint_steps(it->second);
  }
}

const MatchStudy& match_of(const std::vector<MatchStudy>& matches, const std::string& model) {
  for (const MatchStudy& m : matches)
    if (m.model == model) return m;
  throw std::invalid_argument("match_of: no comparison for model '" + model + "'");
}

std::vector<std::string> ch02_takeaway(const std::vector<MatchStudy>& matches, const ScoreCostStudy& cost,
                                       const TrainStepStudy* steps) {
  const MatchStudy& best = closest_match(matches);
  const MatchStudy& g = match_of(matches, "luong_general");
  const MatchStudy& lp = match_of(matches, "luong_local_p");
  std::vector<std::string> out;
  out.push_back(_f("Closest to Bahdanau of the {} Luong models: {}, whose largest gap is {:+.1f} points ({} at {} "
                   "words): it {} Bahdanau.",
                   matches.size(), best.model, best.worst.gap, metric_word(best.worst_metric), best.worst.bucket,
                   match_word(best.matches)));
  out.push_back(
      g.matches.holds()
          ? _f("Luong's global-general attention matches Bahdanau here: every BLEU, exact-match and token-accuracy "
               "figure within {:.0f} points in every length bucket.", kMatchPoints)
          : _f("Luong's global-general attention {} Bahdanau here: BLEU within {:.1f} points, but {} {:+.1f} points at "
               "{} words.", match_word(g.matches), std::abs(g.bleu.gap), metric_word(g.worst_metric), g.worst.gap,
               g.worst.bucket));
  const std::string per_call =
      cost.order_in_rounds.outcome == Outcome::inconclusive
          ? std::string(_("Per call, no timing rounds were kept (step 5)"))
          : _f("Per call, the two scores with tanh calls (Bahdanau, concat) took longer than the two without (dot, "
               "general) in {} of {} timing rounds ({}); a single × moves from run to run (step 5)",
               cost.split_rounds, cost.split_total,
               cost.order_in_rounds.holds() ? (cost.split_rounds == cost.split_total ? _("all of them") : _("most of them"))
                                             : _("not most of them: too noisy to order here"));
  out.push_back(steps ? _f("{}; a whole training step of global-general runs {:.2f}× Bahdanau's speed, global-dot "
                           "{:.2f}× (step 6): the source article's 1.5–2× claim {} in this run.",
                           per_call, steps->general_speedup, steps->dot_speedup, train_claim_words(*steps))
                      : _f("{}; --time-training times whole training steps.", per_call));
  out.push_back(_f("Local-p predicts where to look (p_t) and reads only a window around it; it {} Bahdanau on {} "
                   "({:+.1f} points at {} words; BLEU within {:.1f}{}), while local-m's p_t = t ignores reordering.",
                   match_word(lp.matches), metric_word(lp.worst_metric), lp.worst.gap, lp.worst.bucket,
                   std::abs(lp.bleu.gap),
                   lp.best_at_last_step()
                       ? _f(", judged at its last training step, {}, where its validation BLEU was still at its "
                            "best: it may have been improving",
                            lp.steps)
                       : std::string()));
  return out;
}

}  // namespace attn
