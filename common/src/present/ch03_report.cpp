// Chapter 03's reports (see attn/present/ch03_report.hpp).
#include "attn/present/ch03_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <xtensor/xmath.hpp>

#include "attn/present/chapters.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

void show_weights_heatmap(Narrator& nar, const Mat& weights, const Labels& words) {
  const double largest = weights.size() == 0 ? 1.0 : double(xt::amax(weights)());
  const double uniform = weights.shape(1) == 0 ? 0.0 : 1.0 / double(weights.shape(1));
  nar.heatmap("weights", weights, words, words,
              _f("shades from 0 to the largest weight, {:.2f} (uniform: 1/n = {:.2f})", largest, uniform),
              {0.0, largest});
}

void report_row_sums(Narrator& nar, const RowSumCheck& c) {
  nar.result(_f("row sums: min {:.6f}, max {:.6f}: {}", c.min_sum, c.max_sum,
                c.sums_to_one.holds() ? _("every row is a probability distribution")
                                      : _("a row is off 1 by more than float rounding")));
}

void report_reference(Narrator& nar, const ReferenceAgreement& c) {
  nar.result(_f("max |O − reference| = {:.2e}  (reference: the same formula in double, plain loops; float32 "
                "rounding, criterion ≤ 1e-5): {}", c.max_diff, outcome_word(c.agrees.outcome)));
}

void report_causal(Narrator& nar, const Mat& weights, const Mat& mask, const Labels& words, const CausalCheck& c) {
  const Mat drawn = weights + mask;  // −∞ where masked: the heatmap draws those cells '·'
  nar.heatmap("causal_weights", drawn, words, words, _("'·': masked, weight exactly 0"), {0.0, 1.0});
  nar.result(_f("first word's weight on itself: {:.3f} ({}); largest weight on a masked pair: {:.1e} ({})",
                c.first_self_weight, outcome_word(c.first_sees_only_itself.outcome), c.masked_weight_max,
                outcome_word(c.masked_are_zero.outcome)));
  nar.result(c.last_row_unchanged.holds()
                 ? _f("the last word sees every word, so its row equals the unmasked one: max diff {:.1e}",
                      c.last_row_diff)
                 : _f("the last word's row differs from the unmasked one by {:.1e}: more than float rounding",
                      c.last_row_diff));
}

void report_scaling(Narrator& nar, const ScalingStudy& s, std::size_t n_keys, std::size_t trials) {
  nar.say(_f("{} random queries per row, each against {} random keys; entries N(0, 1)", trials, n_keys));
  Table tbl({"d_k", "Var(q·k)", "Var(q·k/√d_k)", _("max weight"), _("max w. scaled"), "‖∂softmax‖", _("‖∂softmax‖ sc.")});
  Mat m = xt::zeros<float>({s.rows.size(), std::size_t(7)});
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    const ScalingRow& x = s.rows[r];
    tbl.add({std::to_string(x.d_k), fmt::format("{:.2f}", x.var_raw), fmt::format("{:.2f}", x.var_scaled),
             fmt::format("{:.3f}", x.max_weight_raw), fmt::format("{:.3f}", x.max_weight_scaled),
             fmt::format("{:.3f}", x.grad_raw), fmt::format("{:.3f}", x.grad_scaled)});
    const double vals[] = {double(x.d_k), x.var_raw, x.var_scaled, x.max_weight_raw, x.max_weight_scaled, x.grad_raw, x.grad_scaled};
    for (std::size_t c = 0; c < 7; ++c) m(r, c) = float(vals[c]);
  }
  nar.table(tbl, /*as_result=*/true);
  nar.record("scaling", m);
  nar.say(_f("max weight: the largest of a query's {} softmax weights, averaged over the {} queries (1/{} = {:.4f} "
             "would be uniform, 1 is one-hot).", n_keys, trials, n_keys, 1.0 / double(n_keys)));
  nar.say(_("'scaled' and 'sc.': the same figure with the scores divided by √d_k."));
  nar.say(_f("‖∂softmax‖: the size of diag(p) − p·pᵀ, the softmax's Jacobian (the matrix of ∂p_i/∂s_j: how each "
             "weight moves with each score, the gradient that flows back to the scores), where p is one query's {} "
             "softmax weights; size: the Frobenius norm, √(sum of squared entries); averaged over the queries.",
             n_keys));
  if (s.rows.empty()) return;
  const ScalingRow& peak = s.rows[s.raw_peak];
  if (s.raw_peak > 0 && s.raw_peak + 1 < s.rows.size())
    nar.say(_f("look: unscaled, ‖∂softmax‖ first rises, to {:.3f} at d_k = {} (scaled: {:.3f}), then falls {:.1f}× "
               "to d_k = {}: the gradient is largest for moderately spread scores (softmax neither flat nor "
               "one-hot) and vanishes only once they grow large; the scaled column stays flat.",
               peak.grad_raw, peak.d_k, peak.grad_scaled, peak.grad_raw / s.rows.back().grad_raw,
               s.rows.back().d_k));
  const ScalingRow& last = s.rows.back();
  nar.result(_f("claim: Var(q·k/√d_k) within 15% of 1 at every d_k (the course's criterion); worst {:.2f} off, "
                "sampling noise (three standard errors) up to {:.2f}: {}",
                s.unit_variance.measured, s.var_noise, outcome_word(s.unit_variance.outcome)));
  if (s.unit_variance.outcome == Outcome::too_noisy)
    nar.say(_("too few --trials for that verdict: the sampling noise alone exceeds the 15% tolerance; more trials "
              "shrink it."));
  else if (s.within_noise.outcome == Outcome::fails)
    nar.say(_f("the worst deviation, {:.2f}, is outside the sampling noise ({:.2f}): if the variance were exactly 1, "
               "noise this large would show in fewer than 1 in {:.0f} such tables of {} rows; rerun with another "
               "--seed or more --trials to tell a fluke from a real offset.", s.within_noise.measured, s.var_noise,
               1.0 / s.chance_beyond_noise, s.rows.size()));
  nar.result(_f("unscaled, the softmax's gradient at d_k = {} is {:.2f}× the scaled one (claim: at most 0.5×, "
                "it vanishes; the course's criterion): {}; scaled, it varies {:.2f}× across d_k (criterion: at most "
                "1.25×): {}",
                last.d_k, s.raw_vanishes.measured, outcome_word(s.raw_vanishes.outcome), s.scaled_steady.measured,
                outcome_word(s.scaled_steady.outcome)));
  nar.say(_f("the course's second source, the reference card {} (a short summary sheet beside the article {}), "
             "writes in its formula section \"Attention(Q, K, V) = softmax(QKᵀ/d_k) V\" and \"除以 d_k\" (divide "
             "by d_k), though its own flow diagram says \"÷ √dₖ\"; the divisor is √d_k — dividing by d_k would leave "
             "Var = {:.1f}/{}² = {:.4f} at d_k = {}: scores squeezed towards 0.",
             source_card(), source_article(), last.var_raw, last.d_k, last.var_raw / (double(last.d_k) * double(last.d_k)), last.d_k));
}

void report_permutation(Narrator& nar, const PermutationCheck& c, const std::string& sentence,
                        const std::string& shuffled) {
  nar.result(_f("\"{}\" vs \"{}\": max |f(P·X) − P·f(X)| = {:.1e} — {}", sentence, shuffled, c.equivariance_err,
                c.equivariant.holds() ? _("the same rows, reordered (equivariant)")
                                      : _("the rows changed, not only their order (not equivariant)")));
  if (c.equivariant.holds())
    nar.say(_f("look: each row of output_permuted is step 5's output row of the same word, moved to the word's new "
               "place (compare the \"{}\" rows of the two).", sentence.substr(sentence.find_last_of(' ') + 1)));
  nar.result(_f("mean-pooled outputs differ by {:.1e} — {}", c.pooled_err,
                c.pooled_invariant.holds() ? _("the summary cannot tell the two sentences apart (invariant)")
                                           : _("the summary tells the two sentences apart")));
}

void report_masked_permutation(Narrator& nar, const PermutationCheck& c) {
  nar.result(_f("with step 6's causal mask: max |f(P·X) − P·f(X)| = {:.1e} — {}", c.equivariance_err,
                c.equivariant.holds() ? _("still the same rows, reordered")
                                      : _("not equivariant: the mask itself depends on position (word i sees words "
                                          "up to i only)")));
}

void report_lookup_setup(Narrator& nar, const Labels& animals, const Labels& sentence) {
  nar.say(_("τ: the temperature, dividing every score before the softmax; a lower τ sharpens the weights (the table "
            "below tries several)."));
  std::vector<std::string> reused, fresh;
  for (const std::string& a : animals)
    (std::find(sentence.begin(), sentence.end(), a) != sentence.end() ? reused : fresh).push_back(a);
  const std::string r = fmt::format("{}", fmt::join(reused, ", ")), f = fmt::format("{}", fmt::join(fresh, ", "));
  const std::string made = _("the keys: each animal's word vector, made like step 1's X (one fixed N(0, 1) vector per "
                             "word and seed)");
  if (reused.empty())
    nar.say(_f("{}; none of them is in the sentence, so all are new rows", made));
  else if (fresh.empty())
    nar.say(_f("{}; all of them are in the sentence, so these are step 1's rows for {}", made, r));
  else
    nar.say(_f("{}: the rows of {} are step 1's rows for those words; {}: new rows", made, r, f));
}

void report_lookup(Narrator& nar, const LookupStudy& s, const Labels& keys, std::size_t d_model) {
  std::vector<std::string> head = {"τ"};
  for (const auto& k : keys) head.push_back(fmt::format("w({})", k));
  head.insert(head.end(), {_("legs"), _("flies"), _("|o − v_best|")});
  Table t(head);
  Vec taus = xt::zeros<float>({s.rows.size()});
  Mat weights = xt::zeros<float>({s.rows.size(), keys.size()});
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    const LookupRow& x = s.rows[r];
    std::vector<std::string> row = {fmt::format("{:.2f}", x.tau)};
    for (std::size_t j = 0; j < x.lookup.weights.size(); ++j) {
      row.push_back(fmt::format("{:.3f}", x.lookup.weights(j)));
      weights(r, j) = x.lookup.weights(j);
    }
    row.insert(row.end(), {fmt::format("{:.2f}", x.lookup.output(0)), fmt::format("{:.2f}", x.lookup.output(1)),
                           fmt::format("{:.1e}", x.dist_to_hard)});
    taus(r) = x.tau;
    t.add(row);
  }
  nar.table(t, /*as_result=*/true);
  nar.record("lookup_taus", taus);
  nar.record("lookup_weights", weights);
  nar.say(_("|o − v_best|: the largest absolute difference, over the columns, between the blend o and the best "
            "key's value row"));
  if (s.rows.empty()) return;
  const LookupRow& hardest = s.rows.back();
  nar.result(hardest.dist_to_hard == 0.0
                 ? _f("at the smallest τ the blend equals the best key's row (difference {:.1e}; the course's "
                      "criterion of a hard lookup: within 1e-3): {}", s.becomes_hard.measured,
                      outcome_word(s.becomes_hard.outcome))
                 : _f("at the smallest τ the blend is within {:.1e} of the best key's row (the course's criterion "
                      "of a hard lookup: within 1e-3): {}", s.becomes_hard.measured,
                      outcome_word(s.becomes_hard.outcome)));
  const std::string best = s.best < keys.size() ? keys[s.best] : std::to_string(s.best);
  const std::string meant = s.intended < keys.size() ? keys[s.intended] : std::to_string(s.intended);
  nar.result(s.picks_intended.holds()
                 ? _f("the best key is {}'s, the key the query was made from: the noise did not change the match",
                      best)
                 : _f("the best key is {}'s, not {}'s: the noise made {} the best match, so the hard lookup "
                      "returns {}'s row", best, meant, best, best));
  nar.say(_f("τ = √(key size) = √{} = {:.2f} is the usual scale: the √d_k of step 3, for keys "
             "d_model = {} wide.", d_model, std::sqrt(double(d_model)), d_model));
  double legs_lo = INFINITY, legs_hi = -INFINITY;
  for (const LookupRow& x : s.rows) {
    legs_lo = std::min(legs_lo, double(x.lookup.output(0)));
    legs_hi = std::max(legs_hi, double(x.lookup.output(0)));
  }
  const double flies = hardest.lookup.output(1);
  nar.say(s.picks_intended.holds()
              ? _f("read the flies column: only bird flies, so flies near 1 means bird's row was picked (at τ = "
                   "{:.2f}: {:.2f}).", hardest.tau, flies)
              : _f("read the flies column: only bird flies; at τ = {:.2f} it is {:.2f}, so bird's row was not "
                   "picked.", hardest.tau, flies));
  nar.say(_f("legs stays between {:.2f} and {:.2f} over these τ; a legs value near bird's 2 at a large τ would not "
             "mean bird: cat's and dog's 4 and fish's 0 average out too.", legs_lo, legs_hi));
}

void report_path_length(Narrator& nar, const PathLengthStudy& s) {
  // Vaswani et al. 2017, Table 1: n = length, d = width, k = kernel size, r = neighbourhood.
  // The step's title cites the paper (§4 and Table 1); the table is not cited a second time.
  Table paper({_("layer type"), _("work per layer"), _("sequential operations"), _("maximum path length")});
  paper.add({_("self-attention"), "O(n²·d)", "O(1)", "O(1)"});
  paper.add({_("recurrent"), "O(n·d²)", "O(n)", "O(n)"});
  paper.add({_("convolutional"), "O(k·n·d²)", "O(1)", "O(log_k(n))"});
  paper.add({_("self-attention, restricted to r"), "O(r·n·d)", "O(1)", "O(n/r)"});
  nar.table(paper);
  nar.say(_("RNN: a recurrent network. n: tokens; d: the vector size (d_model); k (in this table only): a "
            "convolution's kernel width, not a key; r: the neighbourhood a restricted attention sees (the window w "
            "below)."));
  nar.say(_f("measured (d = {}, causal): the GRU (gated recurrent unit, the recurrent layer of chapters 00–01) "
             "steps from token 0 to token n − 1; the attention layers x ← rms_normalise(x + Attn(x)) until token "
             "n − 1 depends on "
             "token 0 (through weights > 0); and how much raising every entry of x_0 by 1 changes the output at "
             "n − 1 (|Δ|: the largest absolute change over its entries). x + Attn(x) adds a layer's output to its "
             "input (a residual); rms_normalise divides each row by its root-mean-square, so stacked layers keep "
             "their scale.", s.d_model));
  Table t({"n", _("GRU steps"), _("attention layers"), _f("layers, window w = {}", s.window), _("GRU |Δh_{n−1}|"),
           _("attention |Δo_{n−1}|")});
  Mat m = xt::zeros<float>({s.rows.size(), std::size_t(6)});
  for (std::size_t r = 0; r < s.rows.size(); ++r) {
    const PathLengthRow& x = s.rows[r];
    t.add({std::to_string(x.n), std::to_string(x.recurrent_steps), std::to_string(x.attention_layers),
           std::to_string(x.window_layers), fmt::format("{:.1e}", x.recurrent_influence),
           fmt::format("{:.1e}", x.attention_influence)});
    const double vals[] = {double(x.n), double(x.recurrent_steps), double(x.attention_layers), double(x.window_layers),
                           x.recurrent_influence, x.attention_influence};
    for (std::size_t c = 0; c < 6; ++c) m(r, c) = float(vals[c]);
  }
  nar.table(t, /*as_result=*/true);
  nar.record("path_length", m);
  nar.result(_f("GRU: n − 1 steps one after another at every n: {}; full attention: one layer at every n: {}",
                outcome_word(s.recurrent_grows.outcome), outcome_word(s.constant_attention.outcome)));
  nar.result(_f("a window of w = {} keys moves token 0 w − 1 = {} positions per layer: ⌈(n − 1)/{}⌉ layers at every "
                "n, the table's O(n/r) (chapter 06): {}", s.window, s.window - 1, s.window - 1,
                outcome_word(s.window_formula.outcome)));
  if (!s.rows.empty()) {
    const PathLengthRow& first = s.rows.front();
    const PathLengthRow& last = s.rows.back();
    nar.result(_f("at n = {} token 0 changes the GRU's last state by {:.1e} and one attention layer's last row by "
                  "{:.1e}", last.n, last.recurrent_influence, last.attention_influence));
    if (s.attention_keeps_more.holds())
      nar.result(_f("both fade: from n = {} to {} ({:.0f}× more tokens) attention's influence falls {:.0f}× — {}; "
                    "the GRU's {} (untrained weights)", first.n, last.n, s.token_growth, s.attention_fall,
                    s.dilution_explains.holds()
                        ? _f("within 2× of the {:.0f}× that spreading its weights over that many more tokens "
                             "gives (the course's criterion for 'explained')", s.token_growth)
                        : _f("{:.1f}× {} than even weights over that many tokens would give (beyond the 2× the "
                             "course's criterion allows); what causes the rest is not measured here",
                             s.attention_fall > s.token_growth ? s.attention_fall / s.token_growth
                                                               : s.token_growth / s.attention_fall,
                             s.attention_fall > s.token_growth ? _("more") : _("less")),
                    last.recurrent_influence == 0.0
                        ? std::string(_("falls below float32 resolution, so the measured change is exactly 0"))
                        : _f("falls {:.0f}×", first.recurrent_influence / last.recurrent_influence)));
    else
      nar.result(_("the short path does not carry more here"));
    if (s.first_rise < s.rows.size())
      nar.say(_f("note: attention's influence does not fall at every step: it rises from n = {} ({:.1e}) to n = {} "
                 "({:.1e}); one random input per n, so the fall from end to end is the figure, not each step.",
                 s.rows[s.first_rise - 1].n, s.rows[s.first_rise - 1].attention_influence, s.rows[s.first_rise].n,
                 s.rows[s.first_rise].attention_influence));
  }
}

std::vector<std::string> ch03_takeaway(const RowSumCheck& sums, const ScalingStudy& scaling,
                                       const PermutationCheck& permutation, const PathLengthStudy& paths) {
  std::vector<std::string> lines;
  lines.push_back(sums.sums_to_one.holds()
                      ? _("softmax(QKᵀ/√d_k)V is two matrix products (QKᵀ, then A·V) and a row-wise softmax, after step 2's three "
                          "projections; every row of A sums to 1.")
                      : _("softmax(QKᵀ/√d_k)V is two matrix products (QKᵀ, then A·V) and a row-wise softmax, after step 2's "
                          "three projections; here a row of A did not sum to 1 — see step 4."));
  lines.push_back(scaling.unit_variance.holds() && scaling.raw_vanishes.holds()
                      ? _("Var(q·k) grows like d_k (measured above); dividing by √d_k keeps scores at unit variance, so "
                          "softmax stays soft and its gradient alive.")
                      : _("This run's √d_k table did not bear the claim out in full (step 7's verdicts); with more "
                          "--trials the variances settle."));
  lines.push_back(permutation.equivariant.holds()
                      ? _("Self-attention is permutation-equivariant: shuffle the words and the outputs shuffle with "
                          "them — positions must be added (chapter 05).")
                      : _("The shuffled sentence did not give the same rows reordered (step 8): something here "
                          "depends on position."));
  if (paths.constant_attention.holds() && paths.recurrent_grows.holds()) {
    // the same three cases as step 10's line: about the dilution, beyond it, or short of it
    const std::string why =
        paths.dilution_explains.holds()
            ? _f("step 10: about the {:.0f}× that spreading the weights over {:.0f}× more tokens gives",
                 paths.token_growth, paths.token_growth)
        : paths.attention_fall > paths.token_growth
            ? _f("step 10: {:.0f}× more tokens explain {:.0f}× of it; the cause of the rest is not measured",
                 paths.token_growth, paths.token_growth)
            : _f("step 10: less than the {:.0f}× that spreading the weights over {:.0f}× more tokens would give",
                 paths.token_growth, paths.token_growth);
    lines.push_back(_f("Token 0 reached token n − 1 through one attention layer at every n up to {}, against n − 1 "
                       "recurrent steps; the price is n² scores (chapter 06). A short path is not a strong one: with "
                       "these untrained weights token 0's influence fell {:.0f}× from n = {} to {} ({}).",
                       paths.rows.back().n, paths.attention_fall, paths.rows.front().n, paths.rows.back().n, why));
  } else
    lines.push_back(_("The measured paths did not match Table 1 of Vaswani et al. 2017 here (step 10)."));
  return lines;
}

}  // namespace attn
