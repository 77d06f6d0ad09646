// Chapter 10's measurements and verdicts (attn/studies/interpretability_claims.hpp). Map:
//   inputs     the evaluation set and the drawn sequence are reproducible and have the task's shape
//   verdicts   every judge_* driven both ways on made-up measurements
//   studies    find_induction_heads, uniform_heads, perturbation_sweep and importance_claim on a
//              small untrained model: their figures agree with the functions they are built from
//   step 4     the example's choice, reordered rows and argmax misses; step 5's encoder note
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attn/present/interpretability_report.hpp"
#include "attn/studies/interpretability_claims.hpp"
#include "attn/tensor/rng.hpp"

using namespace attn;

TEST_CASE("evaluation set and drawn sequence: reproducible, periodic, of the task's sizes") {
  const InductionTask task{48, 40, 5, 16};
  const InductionBatch a = evaluation_set(task, 8), b = evaluation_set(task, 8);
  CHECK(a.tokens == b.tokens);
  CHECK(evaluation_set(task, 8, kEvalSeed + 1).tokens != a.tokens);
  for (std::size_t s = 0; s < a.batch; ++s) {
    CHECK((a.periods[s] >= 5 && a.periods[s] <= 16));
    for (std::size_t i = a.periods[s]; i < a.len; ++i) CHECK(a.tokens[s * a.len + i] == a.tokens[s * a.len + i - a.periods[s]]);
  }
  const InductionBatch d = drawn_sequence(task);
  CHECK(d.len == 17);
  CHECK(d.periods[0] == 6);
  CHECK(metadata_count({{"steps", "3000"}}, "steps") == 3000);
  CHECK(metadata_count({{"steps", "3e3"}}, "steps") == 0);
  CHECK(metadata_count({}, "steps") == 0);
  CHECK(induction_tokens_seen({{"steps", "3000"}, {"batch", "24"}, {"length", "40"}}) == 2880000);
}

TEST_CASE("induction verdicts: composition, redundancy, copying, each both ways") {
  CHECK(judge_composition(0.943, 0.337).holds());                   // 0.36 ≤ 0.5: it reads that head
  CHECK(judge_composition(0.943, 0.900).outcome == Outcome::fails);  // it finds its key without it
  CHECK(judge_bets_on_seen(0.30, 0.10).holds());  // three times a uniform guess's mass
  CHECK(judge_bets_on_seen(0.12, 0.10).outcome == Outcome::fails);
  CHECK(judge_bets_on_seen(0.0, 0.0).outcome == Outcome::inconclusive);
  CHECK(judge_redundancy(0.347, 0.681, 4.001).holds());              // 0.33 of 3.65: 9%
  CHECK(judge_redundancy(0.347, 3.0, 4.001).outcome == Outcome::fails);
  LmInduction none{{}, 14.378, 14.380, 0.134, 8, 40}, copies{{}, 4.0, 1.0, 0.1, 8, 40}, worse{{}, 1.0, 4.0, 0.1, 8, 40};
  CHECK(judge_copying(none).outcome == Outcome::inconclusive);
  CHECK(judge_copying(copies).holds());
  CHECK(judge_copying(worse).outcome == Outcome::fails);
  LmInduction small_se{{}, 5.05, 5.0, 0.001, 8, 40};  // beyond 2 s.e. but not beyond 0.1 nats
  CHECK(judge_copying(small_se).outcome == Outcome::inconclusive);
}

TEST_CASE("claim verdicts: depth trend, alignment, harmless removal, perturbation, each both ways") {
  auto layers = [](double first, double last) {
    return std::vector<LayerStat>{{0, 0.0, 0.0, first}, {1, 0.0, 0.0, last}};
  };
  CHECK(judge_depth_trend(layers(7.90, 13.97)).outcome == Outcome::holds);
  CHECK(judge_depth_trend(layers(9.20, 9.40)).outcome == Outcome::partly);  // within 10%: flat
  CHECK(judge_depth_trend(layers(30.90, 5.89)).outcome == Outcome::fails);
  CHECK(judge_depth_trend({}).outcome == Outcome::inconclusive);
  CHECK(judge_alignment(0.897).holds());
  CHECK(judge_alignment(0.6).outcome == Outcome::partly);
  CHECK(judge_alignment(0.2).outcome == Outcome::fails);
  CHECK(judge_harmless({0.01, 1.0, -0.02}).holds());
  CHECK(judge_harmless({0.3, 2.0, 0.9}).outcome == Outcome::fails);
  CHECK(judge_perturbation(20, 24).holds());
  CHECK(judge_perturbation(12, 24).outcome == Outcome::partly);
  CHECK(judge_perturbation(4, 24).outcome == Outcome::fails);
  CHECK(judge_perturbation(0, 0).outcome == Outcome::inconclusive);
}

TEST_CASE("uniform_heads: counts heads at H / log n ≥ 0.95, both ways") {
  std::vector<HeadStat> heads(3);
  heads[0].uniformity = 0.64;
  heads[1].uniformity = 0.96;
  heads[2].uniformity = 0.951;
  const UniformClaim some = uniform_heads(heads);
  CHECK(some.flat.size() == 2);
  REQUIRE(some.rest.size() == 1);  // the one a report names as "all but"
  CHECK(some.rest[0].uniformity == doctest::Approx(0.64));
  CHECK(some.heads == 3);
  CHECK(some.exist.holds());
  CHECK_FALSE(some.ablated);
  heads[1].uniformity = heads[2].uniformity = 0.5;
  CHECK(uniform_heads(heads).exist.outcome == Outcome::fails);
}

TEST_CASE("judge_importance: τ within noise of random, gradients beyond attention, and not") {
  ImportanceAgreement a;
  a.sequences = kMinImportanceSequences;  // the verdicts below use the 4 τ of each list
  a.attn_taus = {{0.05, 0.0, 0.1, 0.05}};
  a.attn_vs_loo = {0.05};
  a.random_taus = {0.0, 0.05, -0.05, 0.0};
  a.random_vs_loo = 0.0;
  a.grad_taus = {0.61, 0.59, 0.60, 0.60};  // far above both
  a.grad_vs_loo = 0.60;
  ImportanceClaim c = judge_importance(a);
  CHECK(c.attn_vs_random[0].outcome == Outcome::inconclusive);
  CHECK(c.grad_vs_random.holds());
  CHECK(c.gradients_win.holds());
  CHECK(c.informative.holds());  // gradient × input is above random: the τ test has power
  CHECK(c.grad_se == doctest::Approx(standard_error(a.grad_taus)));
  a.grad_taus = {0.05, 0.0, 0.1, 0.05};  // the same as attention: no winner
  a.grad_vs_loo = 0.05;
  CHECK(judge_importance(a).gradients_win.outcome == Outcome::inconclusive);
  a.grad_taus = {-0.6, -0.61, -0.59, -0.6};
  a.grad_vs_loo = -0.6;
  c = judge_importance(a);
  CHECK(c.gradients_win.outcome == Outcome::fails);
  CHECK(c.grad_vs_random.outcome == Outcome::fails);
  a.grad_taus = {0.05, 0.0, 0.1, 0.05};
  a.grad_vs_loo = 0.05;
  c = judge_importance(a);
  CHECK(c.informative.outcome == Outcome::fails);  // nothing above random: τ cannot decide
  CHECK(c.informative.measured == 0.0);
  CHECK_FALSE(c.too_few);
  a.grad_taus = {0.61, 0.59, 0.60, 0.60};  // gradients far above again, but from too few sequences
  a.grad_vs_loo = 0.60;
  CHECK(judge_importance(a).gradients_win.holds());
  a.sequences = kMinImportanceSequences - 1;
  c = judge_importance(a);
  CHECK(c.too_few);
  CHECK(c.gradients_win.outcome == Outcome::inconclusive);
  CHECK(c.grad_vs_random.outcome == Outcome::inconclusive);
  CHECK(c.informative.outcome == Outcome::inconclusive);
  CHECK(c.grad_vs_random.measured == doctest::Approx(0.60));  // the measurement is kept
  CHECK(standard_error({1.0}) == 0.0);
  CHECK(standard_error({1.0, 3.0}) == doctest::Approx(1.0));  // sd √2, / √2
}

TEST_CASE("uniform baselines: distance i/2 for a causal row, prefix matching 1/(i + 1)") {
  CHECK(uniform_distance({40}, true) == doctest::Approx(9.75));    // mean of i/2 over i = 0 … 39
  CHECK(uniform_distance({128}, true) == doctest::Approx(31.75));
  CHECK(uniform_distance({3}, false) == doctest::Approx(8.0 / 9.0));  // rows: 1, 2/3, 1
  CHECK(uniform_distance({40, 128}, true) == doctest::Approx((9.75 + 31.75) / 2));
  CHECK(uniform_distance({}, true) == 0.0);
  // rows 2 and 3 have an earlier copy: 1/3 on position 1, 1/4 on position 2
  CHECK(uniform_prefix_matching({{1, 2, 1, 2}}) == doctest::Approx((1.0 / 3 + 1.0 / 4) / 2));
  CHECK(uniform_prefix_matching({{1, 2, 3}}) == 0.0);  // nothing repeats
}

TEST_CASE("drawn_pattern and judge_pattern: a head on the first copy's successor follows it, one on token 0 not") {
  const std::vector<int> toks = {5, 6, 7, 5, 6, 7, 5};  // rows 3 … 6 have an earlier copy
  const std::size_t T = toks.size();
  Mat induction = xt::zeros<float>({T, T}), sink = xt::zeros<float>({T, T});
  for (std::size_t i = 0; i < T; ++i) {
    induction(i, i >= 3 ? (i - 3) % 3 + 1 : i) = 1.0f;  // the token after the first copy
    sink(i, 0) = 1.0f;
  }
  induction(6, 1) = 0.0f;  // row 6 reads the later copy's successor instead
  induction(6, 4) = 1.0f;
  const DrawnPattern a = drawn_pattern(induction, toks), b = drawn_pattern(sink, toks);
  CHECK(a.rows == 4);
  CHECK(a.first_copy == 3);
  CHECK(a.later_copy == 1);
  CHECK(a.follows.holds());  // 3 of 4
  // rows 3 and 6 hold token 5, token 0's own: there token 0 is the earlier copy itself, not a sink
  CHECK(b.same_token == 2);
  CHECK(b.first_token == 2);
  CHECK(a.same_token == 0);
  CHECK(a.first_token == 0);
  CHECK(b.follows.outcome == Outcome::fails);
  CHECK(judge_pattern(2, 4).outcome == Outcome::partly);
  CHECK(judge_pattern(0, 0).outcome == Outcome::inconclusive);
}

TEST_CASE("drawn_pattern: a row's own position (the diagonal) is counted apart from an earlier copy") {
  const std::vector<int> toks = {5, 6, 7, 5, 6, 7, 5};  // rows 3 … 6 have an earlier copy
  const std::size_t T = toks.size();
  Mat self = xt::zeros<float>({T, T});
  for (std::size_t i = 0; i < T; ++i) self(i, i) = 1.0f;
  self(6, 6) = 0.0f;  // row 6 reads the copy one period back (token 5 at position 3) instead
  self(6, 3) = 1.0f;
  const DrawnPattern d = drawn_pattern(self, toks);
  CHECK(d.rows == 4);
  CHECK(d.self_token == 3);  // rows 3, 4, 5: their own position, not an earlier copy
  CHECK(d.same_token == 1);  // row 6: an earlier copy itself
  CHECK(d.on_copy() == 0);
  CHECK(d.follows.outcome == Outcome::fails);
}

TEST_CASE("judge_self_head: a head whose weight sits on the diagonal is a self head, one beside it is not") {
  CHECK(judge_self_head(0.9).holds());
  CHECK(judge_self_head(kSelfHeadAt).holds());
  CHECK(judge_self_head(0.2).outcome == Outcome::fails);
}

TEST_CASE("loss_curve_shape: where a plateau ends and the fall is done; how 48 marks bin the records") {
  const CurveShape c = loss_curve_shape({4, 4, 4, 4, 3, 1, 1, 1}, 10, 4);
  CHECK(c.found);
  CHECK(c.plateau_until == 40);  // records 0 … 3 (steps 1 … 40) above 1 + 0.9 · 3 = 3.7
  CHECK(c.fallen_by == 60);      // record 5 (steps 51 … 60) is the first ≤ 1.3
  CHECK((c.points == 8 && c.marks == 4 && c.per_mark_lo == 2 && c.per_mark_hi == 2));
  const CurveShape b = loss_curve_shape(std::vector<float>(120, 2.0f), 25, 48);
  CHECK_FALSE(b.found);  // a flat curve does not fall
  CHECK((b.marks == 48 && b.per_mark_lo == 2 && b.per_mark_hi == 3));
}

TEST_CASE("layer_alignment and head_gap: each layer judged on its heads' mean; a lead within noise is not clear") {
  Mat acc = xt::zeros<float>({2, 2});
  acc(0, 0) = 0.3f, acc(0, 1) = 0.1f, acc(1, 0) = 0.9f, acc(1, 1) = 0.82f;
  const std::vector<LayerAlignment> la = layer_alignment(acc);
  REQUIRE(la.size() == 2);
  CHECK(la[0].mean == doctest::Approx(0.2));
  CHECK(la[0].aligns.outcome == Outcome::fails);
  CHECK(la[0].aligned == 0);
  CHECK(la[1].mean == doctest::Approx(0.86));
  CHECK(la[1].aligns.holds());
  CHECK(la[1].aligned == 2);
  CHECK(la[1].lo == doctest::Approx(0.82));
  // Two heads on 4 sentences of 10 words: one ahead by one word in every sentence (clear), one
  // ahead in two and behind in two by the same total (not clear).
  const std::vector<std::size_t> words = {10, 10, 10, 10};
  const HeadGap steady = head_gap({9, 9, 9, 9}, {8, 8, 8, 8}, words);
  CHECK(steady.gap == doctest::Approx(0.1));
  CHECK(steady.se == doctest::Approx(0.0));
  CHECK(steady.clear.holds());
  const HeadGap noisy = head_gap({10, 4, 10, 8}, {5, 9, 5, 9}, words);
  CHECK(noisy.gap == doctest::Approx(0.1));
  CHECK(noisy.se > 0.05);
  CHECK(noisy.clear.outcome == Outcome::inconclusive);
  CHECK(head_gap({1}, {0}, {1}).clear.outcome == Outcome::inconclusive);  // one sentence: no standard error
}

TEST_CASE("drawn_pattern: a head on the copy one period back follows the pattern, as its match score says") {
  // Rows 3 … 8 have an earlier copy; rows 6 … 8 two. A head reading the successor of the copy one
  // period back (i − 2) is on the first copy's successor in rows 3 … 5 and on the later copy's in
  // rows 6 … 8: every row on a cell prefix_matching_score sums (its score is 1).
  const std::vector<int> toks = {5, 6, 7, 5, 6, 7, 5, 6, 7};
  const std::size_t T = toks.size();
  Mat back = xt::zeros<float>({T, T});
  for (std::size_t i = 0; i < T; ++i) back(i, i >= 3 ? i - 2 : i) = 1.0f;
  const DrawnPattern d = drawn_pattern(back, toks);
  CHECK(d.rows == 6);
  CHECK(d.first_copy == 3);
  CHECK(d.later_copy == 3);
  CHECK(d.on_copy() == 6);
  CHECK(d.follows.holds());  // counting the first copy alone gave 3 of 6: "partly"
  CHECK(prefix_matching_score(back, toks) == doctest::Approx(1.0));
  CHECK(judge_pattern(8, 11).outcome == Outcome::partly);  // 0.73: "mostly"
  CHECK(judge_pattern(5, 11).outcome == Outcome::fails);
}

TEST_CASE("studies on a small model: the circuit's figures agree with the functions beneath them") {
  Rng rng(4);
  const AttnOnly m = attn_only_init({16, 16, 2, 2, 24}, rng);  // vocabulary, d_model, heads, layers, context
  const InductionTask task{16, 24, 3, 12};
  const InductionBatch eval = evaluation_set(task, 6), drawn = drawn_sequence(task);
  const InductionCircuit c = find_induction_heads(m, task, eval, drawn);
  REQUIRE(c.heads.size() == 4);
  CHECK(c.last_layer == 1);
  const RepeatLosses base = repeat_losses(m, eval);
  // The first period's mass on seen tokens: between 0 and 1, and a uniform guess's is seen / V.
  CHECK((c.first_seen.model > 0.0 && c.first_seen.model < 1.0));
  CHECK((c.first_seen.uniform > 1.0 / 16 - 1e-9 && c.first_seen.uniform < 12.0 / 16));
  CHECK((c.first_seen.entropy > 0.0 && c.first_seen.entropy <= std::log(16.0) + 1e-6));
  CHECK(c.first_seen.bets.measured == doctest::Approx(c.first_seen.model / c.first_seen.uniform));
  CHECK(c.base.second == doctest::Approx(base.second));
  for (const InductionHeadRow& r : c.heads) {
    CHECK(r.second_if_zeroed ==
          doctest::Approx(repeat_losses(m, eval, {{r.layer, r.head, HeadEdit::zero, 1}}).second));
    CHECK(r.copying == doctest::Approx(copying_score(ov_circuit(m, r.layer, r.head))));
    CHECK(r.self_head.measured == doctest::Approx(r.self_drawn));
  }
  for (std::size_t k = 0; k < c.heads.size(); ++k)  // the heads whose zeroing helps, and only those
    CHECK((std::find(c.zeroing_helps.begin(), c.zeroing_helps.end(), k) != c.zeroing_helps.end()) ==
          (c.heads[k].second_if_zeroed < c.base.second));
  // After max_period, the previous-token head's weight splits into before, itself, token 0 and the rest.
  CHECK((c.previous_late_self >= 0.0 && c.previous_late + c.previous_late_self + c.previous_late_first <= 1.0 + 1e-6));
  CHECK(c.heads[c.previous_head].previous_eval >= c.heads[1 - c.previous_head].previous_eval);
  CHECK(c.composes.measured == doctest::Approx(c.induction_prefix_without_previous /
                                               c.heads[2 + c.induction_head].prefix_eval));

  const PerturbationSweep p = perturbation_sweep(m, m, eval);
  CHECK(p.rows.size() == 12);  // 4 heads × 3 edits
  CHECK(p.seeds.tvd == 0.0);   // the same model as "another seed"
  std::size_t below = 0;
  for (const PerturbationRow& r : p.rows) below += r.change.tvd <= 0.0;
  CHECK(p.below == below);

  const ImportanceClaim ic = importance_claim(m, eval, 4);
  CHECK(ic.agreement.sequences == 4);
  CHECK(ic.attn_se.size() == 2);

  const DistanceClaim d = distance_claim(c.eval_stats, {eval.len}, true);
  CHECK(d.layers.size() == 2);
  CHECK(d.uniform == doctest::Approx(uniform_distance({eval.len}, true)));
  std::vector<std::vector<int>> seqs;
  for (std::size_t s = 0; s < eval.batch; ++s) seqs.push_back(eval.sequence(s));
  CHECK(c.uniform_prefix == doctest::Approx(uniform_prefix_matching(seqs)));
  REQUIRE(c.drawn_patterns.size() == 2);  // the last layer's heads on the drawn sequence
  for (const DrawnPattern& dp : c.drawn_patterns) {
    CHECK(dp.layer == 1);
    CHECK(dp.rows == prefix_matching_rows(drawn.len, drawn.sequence(0)));
    CHECK(dp.first_copy + dp.later_copy + dp.first_token <= dp.rows);
  }
  const UniformClaim u = uniform_heads(m, eval, c.eval_stats);
  CHECK(u.heads == 4);
}

TEST_CASE("step 4's example: reordered rows, and the first pair that shows reorderings") {
  CHECK(reordered_rows({0, 1, 3, 2, 4}) == std::vector<std::size_t>{3});
  CHECK(reordered_rows({0, 1, 2}).empty());
  Mat alpha = xt::zeros<float>({3, 3});
  alpha(0, 0) = alpha(1, 2) = alpha(2, 1) = 1.0f;
  const std::vector<RowMiss> misses = row_misses(alpha, {0, 2, 2});
  REQUIRE(misses.size() == 1);
  CHECK(misses[0].row == 2);
  CHECK(misses[0].read == 1);
  CHECK(misses[0].truth == 2);
  CHECK(row_misses(alpha, {0, 2, 1}).empty());
  SentencePair monotone{{"a", "b", "c"}, {"x", "y", "z"}, {0, 1, 2}};
  SentencePair crossed{{"a", "b", "c"}, {"x", "z", "y"}, {0, 2, 1}};
  SentencePair long_crossed{{"a", "b", "c", "d"}, {"w", "z", "y", "x"}, {0, 3, 2, 1}};
  const ExampleChoice c = pick_alignment_example({monotone, long_crossed, crossed}, 3, 1);
  CHECK(c.found);
  CHECK(c.index == 2);  // the first with at most 3 words and a reordering
  CHECK(c.reordered == 1);
  const ExampleChoice none = pick_alignment_example({monotone}, 3, 1);
  CHECK_FALSE(none.found);
  CHECK(none.index == 0);
}

TEST_CASE("explain_uniform_encoder: said only when most encoder heads are near uniform beside measured cross-attention") {
  UniformClaim enc;
  enc.heads = 4;
  enc.flat.resize(3);
  AlignmentStudy a;
  a.cross = CrossAlignment{};
  a.best = 0.9;
  auto said = [&] {
    std::ostringstream out;
    Narrator nar(chapter_info("10"), {}, 1, out);
    nar.step("s");
    explain_uniform_encoder(nar, enc, a);
    return out.str();
  };
  CHECK(said().find("3 of 4 encoder heads near uniform") != std::string::npos);
  CHECK(said().find("90.0%") != std::string::npos);
  enc.flat.resize(2);  // half: not "most"
  CHECK(said().find("encoder heads") == std::string::npos);
  enc.flat.resize(3);
  a.cross.reset();  // no cross-attention measured
  CHECK(said().find("encoder heads") == std::string::npos);
}

TEST_CASE("uniform_previous_token: a uniform causal head's weight on the position before, by hand") {
  CHECK(uniform_previous_token({2}) == doctest::Approx(0.5));                   // row 1: 1/2
  CHECK(uniform_previous_token({3}) == doctest::Approx((0.5 + 1.0 / 3) / 2));  // rows 1, 2
  CHECK(uniform_previous_token({2, 3}) == doctest::Approx((0.5 + 5.0 / 12) / 2));
  CHECK(uniform_previous_token({}) == 0.0);
}

TEST_CASE("at_noise_edge: a gap within 5% of its bound, either side, is at the edge; farther is not") {
  CHECK(at_noise_edge(0.0950, 0.0952));   // 0.2% below
  CHECK(at_noise_edge(-0.0990, 0.0952));  // 4% above, negative gap
  CHECK_FALSE(at_noise_edge(0.028, 0.085));
  CHECK_FALSE(at_noise_edge(0.147, 0.139 * 1.0));  // 5.8% above
  CHECK_FALSE(at_noise_edge(NAN, 0.1));
  CHECK_FALSE(at_noise_edge(0.1, 0.0));
}

TEST_CASE("gap_and_bound prints a gap and its bound apart whenever they differ") {
  CHECK(gap_and_bound(0.028, 0.085) == "+0.028; 0.085");
  CHECK(gap_and_bound(0.09503, 0.09521) == "+0.0950; 0.0952");  // equal at three decimals
  CHECK(gap_and_bound(-0.09503, 0.09521) == "-0.0950; 0.0952");
  CHECK(gap_and_bound(0.095, 0.095) == "+0.095; 0.095");        // truly equal: no extra digits
  CHECK(gap_and_bound(0.1000001, 0.1000002) == "+0.100000; 0.100000");  // at most six decimals
}
