// Chapter 03's verdicts (attn/studies/self_attention_study.hpp), each driven both ways: an input
// where the claim holds and one where it fails; and the path-length measurements against the
// counts Vaswani et al. 2017's Table 1 predicts.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/present/ch03_report.hpp"
#include "attn/studies/self_attention_study.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

TEST_CASE("check_row_sums: softmax rows hold, a scaled row fails") {
  Rng rng(3);
  const SelfAttentionWeights w = init_self_attention(rng, 6, 4, 4);
  Mat a = self_attention(rng.normal_mat(5, 6), w).attn.weights;
  const RowSumCheck good = check_row_sums(a);
  CHECK(good.sums_to_one.holds());
  CHECK(std::abs(good.max_sum - 1.0) < 1e-6);
  xt::view(a, 2, xt::all()) *= 1.1f;
  const RowSumCheck bad = check_row_sums(a);
  CHECK(bad.sums_to_one.outcome == Outcome::fails);
  CHECK(bad.max_sum == doctest::Approx(1.1).epsilon(1e-5));
}

TEST_CASE("check_causal: the masked run holds, the unmasked weights fail") {
  Rng rng(4);
  const SelfAttentionWeights w = init_self_attention(rng, 6, 4, 4);
  const Mat x = rng.normal_mat(5, 6), m = causal_mask(5);
  const SelfAttentionTrace full = self_attention(x, w), causal = self_attention(x, w, m);
  const CausalCheck ok = check_causal(causal.attn.weights, causal.attn.output, full.attn.output, m);
  CHECK(ok.first_sees_only_itself.holds());
  CHECK(ok.masked_are_zero.holds());
  CHECK(ok.last_row_unchanged.holds());
  const CausalCheck leak = check_causal(full.attn.weights, full.attn.output, causal.attn.output, m);
  CHECK(leak.first_sees_only_itself.outcome == Outcome::fails);
  CHECK(leak.masked_are_zero.outcome == Outcome::fails);
  CHECK(leak.masked_weight_max > 0.0);
  // The last row of the unmasked run sees the same keys either way: that check still holds.
  CHECK(leak.last_row_unchanged.holds());
  Mat other = full.attn.output;
  other(4, 1) += 0.01f;  // a last row that is not the unmasked one
  CHECK(check_causal(causal.attn.weights, causal.attn.output, other, m).last_row_unchanged.outcome == Outcome::fails);
  CHECK_THROWS_AS(check_causal(full.attn.weights, full.attn.output, full.attn.output, causal_mask(4)), ShapeError);
}

TEST_CASE("check_permutation: reordered rows hold; rows that change, or are not reordered, fail") {
  Rng rng(5);
  const SelfAttentionWeights w = init_self_attention(rng, 6, 4, 4);
  const Mat x = rng.normal_mat(4, 6);
  const std::vector<std::size_t> perm = {3, 2, 1, 0};
  const Mat out = self_attention(x, w).attn.output, out_p = self_attention(permute_rows(x, perm), w).attn.output;
  const PermutationCheck ok = check_permutation(out, out_p, perm);
  CHECK(ok.equivariant.holds());
  CHECK(ok.pooled_invariant.holds());
  const PermutationCheck not_reordered = check_permutation(out, out, perm);  // same rows, wrong order
  CHECK(not_reordered.equivariant.outcome == Outcome::fails);
  CHECK(not_reordered.pooled_invariant.holds());  // the mean cannot see the order
  Mat changed = out_p;
  changed(1, 2) += 0.5f;
  const PermutationCheck bad = check_permutation(out, changed, perm);
  CHECK(bad.equivariant.outcome == Outcome::fails);
  CHECK(bad.pooled_invariant.outcome == Outcome::fails);
}

TEST_CASE("judge_scaling: the measured table holds; a drifting variance or a live raw gradient fails") {
  Rng rng(7);
  const ScalingStudy s = scaling_study(rng, {1, 16, 256}, 16, 1200);  // 400 trials would be too noisy to judge
  CHECK(s.unit_variance.holds());
  CHECK(s.raw_vanishes.holds());
  CHECK(s.scaled_steady.holds());
  std::vector<ScalingRow> rows = s.rows;
  rows[1].var_scaled = 1.3;  // 30% off
  CHECK(judge_scaling(rows).unit_variance.outcome == Outcome::fails);
  rows = s.rows;
  rows.back().grad_raw = rows.back().grad_scaled * 0.9;  // the unscaled gradient did not vanish
  CHECK(judge_scaling(rows).raw_vanishes.outcome == Outcome::fails);
  rows = s.rows;
  rows[0].grad_scaled *= 2.0;
  CHECK(judge_scaling(rows).scaled_steady.outcome == Outcome::fails);
  CHECK(judge_scaling({}).unit_variance.outcome == Outcome::inconclusive);
  // Too few samples: the same drifting table is not judged (too noisy), a large sample judges it.
  std::vector<ScalingRow> drift = s.rows;
  drift.front().var_scaled = 1.5;
  const ScalingStudy few = judge_scaling(drift, /*trials=*/10, /*n_keys=*/16);
  CHECK(few.var_noise > 0.15);
  CHECK(few.unit_variance.outcome == Outcome::too_noisy);
  const ScalingStudy many = judge_scaling(drift, /*trials=*/1000, /*n_keys=*/16);
  CHECK(many.var_noise < 0.15);
  CHECK(many.unit_variance.outcome == Outcome::fails);
  CHECK(many.within_noise.outcome == Outcome::fails);  // 0.5 off is far beyond the noise
  CHECK(judge_scaling(s.rows, 1000, 16).unit_variance.holds());
  CHECK(judge_scaling(s.rows, 1000, 16).within_noise.holds());
  CHECK(judge_scaling(s.rows).within_noise.outcome == Outcome::inconclusive);  // no noise figure
  rows = s.rows;
  rows[0].grad_raw = 0.2, rows[1].grad_raw = 0.3, rows[2].grad_raw = 0.1;  // rises, then falls
  CHECK(judge_scaling(rows).raw_peak == 1);
  rows[0].grad_raw = 0.4;
  CHECK(judge_scaling(rows).raw_peak == 0);
}

TEST_CASE("judge_scaling: three standard errors match the spread of the measured variance") {
  // 300 repeats of the d_k = 1 row (100 queries × 16 keys): the scaled variances scatter with a
  // standard deviation var_noise/3. Counting the 1600 q·k values as independent would predict
  // √(8/1600) = 0.071, half the real spread, because a query's 16 keys share its q.
  Rng rng(3);
  double sum = 0.0, sum_sq = 0.0;
  const int repeats = 300;
  for (int i = 0; i < repeats; ++i) {
    const double v = measure_scaling(rng, 1, 16, 100).var_scaled;
    sum += v, sum_sq += v * v;
  }
  const double mean = sum / repeats, sd = std::sqrt(sum_sq / repeats - mean * mean);
  const double predicted = judge_scaling({measure_scaling(rng, 1, 16, 100)}, 100, 16).var_noise / 3.0;
  CHECK(predicted == doctest::Approx(std::sqrt(2.375 / 100.0)).epsilon(1e-9));
  CHECK(sd == doctest::Approx(predicted).epsilon(0.2));  // the sd of 300 draws is itself ±4%
  CHECK(sd > 1.5 * std::sqrt(8.0 / 1600.0));
}

TEST_CASE("entry_stats: mean and variance over every entry") {
  const EntryStats s = entry_stats(Mat{{1.0f, 3.0f}, {1.0f, 3.0f}});
  CHECK(s.mean == doctest::Approx(2.0));
  CHECK(s.variance == doctest::Approx(1.0));
}

TEST_CASE("check_reference: float rounding agrees; a real difference or a shape mismatch does not") {
  const Mat out = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  const ReferenceAgreement same = check_reference(out, out + 1e-7f);
  CHECK(same.agrees.holds());
  CHECK(same.max_diff < 1e-6);
  CHECK(check_reference(out, out + 1e-3f).agrees.outcome == Outcome::fails);
  CHECK(check_reference(out, Mat{{1.0f, 2.0f}}).agrees.outcome == Outcome::inconclusive);
}

TEST_CASE("lookup_study: the best key is the intended one, or the noise made another key win") {
  const Mat keys = {{1.0f, 0.0f}, {0.0f, 1.0f}, {-1.0f, 0.0f}};
  const Mat values = {{1.0f}, {5.0f}, {2.0f}};
  const Vec q = {0.2f, 1.0f};  // key 1 plus noise: key 1 still matches best
  const LookupStudy meant = lookup_study(q, keys, values, {1.0f, 0.01f}, 1);
  CHECK(meant.best == 1u);
  CHECK(meant.picks_intended.holds());
  const LookupStudy noisy = lookup_study(q, keys, values, {1.0f, 0.01f}, 0);  // made from key 0, key 1 won
  CHECK(noisy.picks_intended.outcome == Outcome::fails);
  CHECK(noisy.becomes_hard.holds());  // hard, but on the wrong key
  CHECK(lookup_study(q, keys, values, {1.0f}, 7).picks_intended.outcome == Outcome::inconclusive);
}

TEST_CASE("lookup_study: a small τ turns hard; two equal best keys with different values cannot") {
  const Mat keys = {{1.0f, 0.0f}, {0.0f, 1.0f}, {-1.0f, 0.0f}};
  const Mat values = {{1.0f}, {5.0f}, {2.0f}};
  const Vec q = {0.2f, 1.0f};
  const LookupStudy ok = lookup_study(q, keys, values, {100.0f, 0.01f});
  CHECK(ok.becomes_hard.holds());
  CHECK(ok.rows[0].dist_to_hard > 0.1);  // a high τ blends
  const Mat twins = {{0.0f, 1.0f}, {0.0f, 1.0f}, {-1.0f, 0.0f}};
  const LookupStudy tie = lookup_study(q, twins, values, {100.0f, 0.01f});
  CHECK(tie.becomes_hard.outcome == Outcome::fails);  // half of value 1, half of value 5
  CHECK(tie.rows[1].dist_to_hard == doctest::Approx(2.0).epsilon(1e-3));
  // rows come largest τ first, whatever order the τ are given in
  const LookupStudy mixed = lookup_study(q, keys, values, {1.0f, 100.0f, 0.01f, 4.0f});
  REQUIRE(mixed.rows.size() == 4);
  for (std::size_t r = 1; r < mixed.rows.size(); ++r) CHECK(mixed.rows[r].tau < mixed.rows[r - 1].tau);
  CHECK(mixed.becomes_hard.holds());
}

TEST_CASE("path length: GRU n − 1 steps, attention 1 layer, a window ⌈(n − 1)/(w − 1)⌉") {
  Rng rng(9);
  const Gru cell = gru_init(4, 4, rng);
  const SelfAttentionWeights w = init_self_attention(rng, 4, 4, 4);
  for (std::size_t n : {2u, 7u, 20u}) {
    const Mat x = rng.normal_mat(n, 4);
    CHECK(recurrent_path(cell, x).steps == n - 1);
    CHECK(attention_path_layers(x, w, causal_mask(n), n) == 1);
    CHECK(attention_path_layers(x, w, causal_window_mask(n, 3), n) == (n - 1 + 1) / 2);  // ⌈(n−1)/2⌉
    CHECK(attention_influence(x, w, causal_mask(n)) > 0.0);
    CHECK(attention_influence(x, w, causal_window_mask(n, 1)) == 0.0);  // the last row sees only itself
  }
  CHECK(attention_path_layers(rng.normal_mat(9, 4), w, causal_window_mask(9, 2), 3) == 0);  // 8 layers needed
  const Mat m = causal_window_mask(5, 2);
  CHECK(m(4, 3) == 0.0f);
  CHECK(std::isinf(m(4, 2)));
  CHECK(std::isinf(m(1, 2)));
}

TEST_CASE("judge_path_length: the measured study holds; a deeper attention path or a short recurrence fails") {
  const PathLengthStudy s = path_length_study({4, 16, 64}, 8, 4, 3);
  CHECK(s.constant_attention.holds());
  CHECK(s.recurrent_grows.holds());
  CHECK(s.window_formula.holds());
  CHECK(s.attention_keeps_more.holds());
  std::vector<PathLengthRow> rows = s.rows;
  rows[1].attention_layers = 2;
  CHECK(judge_path_length(rows, 8, 4).constant_attention.outcome == Outcome::fails);
  rows = s.rows;
  rows[2].attention_layers = 0;  // never arrived
  CHECK(judge_path_length(rows, 8, 4).constant_attention.outcome == Outcome::fails);
  rows = s.rows;
  rows[2].recurrent_steps = 10;
  CHECK(judge_path_length(rows, 8, 4).recurrent_grows.outcome == Outcome::fails);
  rows = s.rows;
  rows[0].window_layers = 3;
  CHECK(judge_path_length(rows, 8, 4).window_formula.outcome == Outcome::fails);
  rows = s.rows;
  rows.back().recurrent_influence = 1.0;
  CHECK(judge_path_length(rows, 8, 4).attention_keeps_more.outcome == Outcome::fails);
  // dilution: a fall as large as the growth in tokens holds; 10× beyond it fails
  std::vector<PathLengthRow> diluted = s.rows;
  diluted.back().attention_influence = diluted.front().attention_influence / 16.0;  // n 4 -> 64: 16×
  const PathLengthStudy d = judge_path_length(diluted, 8, 4);
  CHECK(d.token_growth == doctest::Approx(16.0));
  CHECK(d.attention_fall == doctest::Approx(16.0));
  CHECK(d.dilution_explains.outcome == Outcome::holds);
  diluted.back().attention_influence = diluted.front().attention_influence / 160.0;
  CHECK(judge_path_length(diluted, 8, 4).dilution_explains.outcome == Outcome::fails);
  // first_rise: the first n where attention's influence grows again; rows.size() when it never does
  std::vector<PathLengthRow> falling = s.rows;
  falling[0].attention_influence = 1.0, falling[1].attention_influence = 0.1, falling[2].attention_influence = 0.01;
  CHECK(judge_path_length(falling, 8, 4).first_rise == 3);
  falling[2].attention_influence = 0.2;
  CHECK(judge_path_length(falling, 8, 4).first_rise == 2);
  CHECK_THROWS_AS(path_length_study({4}, 8, 1, 3), std::invalid_argument);
}

TEST_CASE("ch03_takeaway: the path line names a part beyond dilution only when the fall exceeds it") {
  const PathLengthStudy s = path_length_study({4, 16, 64}, 8, 4, 3);
  const RowSumCheck sums = check_row_sums(Mat{{0.5f, 0.5f}});
  const ScalingStudy scaling = judge_scaling({});
  const PermutationCheck perm;
  auto path_line = [&](double fall) {  // token 0's influence falls `fall`× from n = 4 to 64 (16× the tokens)
    std::vector<PathLengthRow> rows = s.rows;
    rows.back().attention_influence = rows.front().attention_influence / fall;
    return ch03_takeaway(sums, scaling, perm, judge_path_length(rows, 8, 4)).back();
  };
  const std::string beyond = "the cause of the rest is not measured";
  CHECK(path_line(16.0).find("about the 16×") != std::string::npos);
  CHECK(path_line(16.0).find(beyond) == std::string::npos);
  CHECK(path_line(160.0).find(beyond) != std::string::npos);
  CHECK(path_line(3.0).find("less than the 16×") != std::string::npos);
  CHECK(path_line(3.0).find(beyond) == std::string::npos);
}
