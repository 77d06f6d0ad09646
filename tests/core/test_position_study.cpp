// Chapter 05's verdicts (attn/studies/position_study.hpp), each driven both ways: an input where
// the claim holds and one where it fails; results keyed by encoding.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/data/word_vectors.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/studies/position_study.hpp"

using namespace attn;

TEST_CASE("reversal_study: none and symmetric ALiBi are blind to a reversal; the others, and any causal mask, are not") {
  Rng rng(5);
  const SelfAttentionWeights w = init_self_attention(rng, 8, 8, 8);
  const Mat x = word_vectors({"a", "b", "c"}, 8, 5), xr = word_vectors({"c", "b", "a"}, 8, 5);
  const ReversalStudy s = reversal_study(x, xr, w, learned_position_init(16, 8, rng, 1.0f), 0.25f);
  CHECK(s.rows.size() == all_position_encodings().size() + 2);
  CHECK(s.at(PositionEncoding::None).tells_apart.outcome == Outcome::fails);
  CHECK(s.at(PositionEncoding::Alibi).tells_apart.outcome == Outcome::fails);
  for (PositionEncoding e : {PositionEncoding::Sinusoidal, PositionEncoding::Learned, PositionEncoding::Rope})
    CHECK_MESSAGE(s.at(e).tells_apart.holds(), position_encoding_name(e));
  CHECK(s.at(PositionEncoding::None, true).tells_apart.holds());
  CHECK(s.at(PositionEncoding::Alibi, true).tells_apart.holds());
  CHECK_THROWS_AS(s.at(PositionEncoding::Rope, true), std::out_of_range);
  CHECK(judge_reversal(PositionEncoding::Rope, false, 2e-3).tells_apart.holds());
  CHECK(judge_reversal(PositionEncoding::Rope, false, 5e-4).tells_apart.outcome == Outcome::fails);
}

TEST_CASE("sinusoidal_shift_error: one M_k for every pos; a wrong error fails") {
  const ShiftCheck c = sinusoidal_shift_error(8, 3, 116);
  CHECK(c.last_pos == 112);
  CHECK(c.max_error < 1e-5);
  CHECK(c.independent_of_pos.holds());
  CHECK(judge_shift(3, 112, 1e-3).independent_of_pos.outcome == Outcome::fails);
  CHECK_THROWS_AS(sinusoidal_shift_error(8, 20, 16), std::invalid_argument);
}

TEST_CASE("rope_relative_error: rotated scores depend on m − n only; a leak fails") {
  Rng rng(6);
  const RelativeCheck c = rope_relative_error(rng.normal_mat(4, 8), rng.normal_mat(4, 8), {1, 10, 1000});
  CHECK(c.relative_only.holds());
  CHECK(c.shifts.size() == 3);
  CHECK(judge_relative({1}, 0.01).relative_only.outcome == Outcome::fails);
}

TEST_CASE("rope_bound_rebound: 4 frequencies climb back far higher than 32; equal widths do not pass") {
  const BoundRebound small = rope_bound_rebound(8, 16, 256), big = rope_bound_rebound(64, 16, 256);
  CHECK(small.fraction > big.fraction);
  CHECK(small.at >= 16);
  CHECK(small.fraction <= 1.0);
  CHECK(judge_rebound(small, big).holds());
  CHECK(judge_rebound(big, big).outcome == Outcome::fails);
}

TEST_CASE("alibi_zero_slope_check: slope 0 is no position; any difference fails") {
  Rng rng(7);
  const SelfAttentionWeights w = init_self_attention(rng, 8, 8, 8);
  const ZeroSlopeCheck c = alibi_zero_slope_check(rng.normal_mat(5, 8), w);
  CHECK(c.max_diff == 0.0);
  CHECK(c.same_as_none.holds());
  CHECK(judge_zero_slope(1e-7).same_as_none.outcome == Outcome::fails);
}

namespace {
std::vector<ExtrapolationResult> row(double acc1, double acc2, double acc4, bool beyond = true) {
  std::vector<ExtrapolationResult> r(3);
  const double accs[] = {acc1, acc2, acc4};
  for (std::size_t i = 0; i < 3; ++i) {
    r[i].length = 16u << i;
    r[i].available = i == 0 || beyond;
    r[i].accuracy = accs[i];
    r[i].loss = 1.0 - accs[i];
    r[i].scored = 2000u << i;
  }
  return r;
}
}  // namespace

TEST_CASE("judge_extrapolation: RoPE 'naturally' and ALiBi-over-sinusoidal, each both ways, and within noise") {
  using P = PositionEncoding;
  std::map<P, std::vector<ExtrapolationResult>> m = {{P::None, row(0.6, 0.5, 0.4)},
                                                     {P::Sinusoidal, row(0.99, 0.7, 0.4)},
                                                     {P::Learned, row(0.99, 0, 0, false)},
                                                     {P::Rope, row(0.99, 0.9, 0.7)},
                                                     {P::Alibi, row(0.98, 0.97, 0.96)}};
  ExtrapolationStudy s = judge_extrapolation(m);
  CHECK(s.rope_natural.outcome == Outcome::fails);
  CHECK(s.alibi_over_sinusoidal.holds());
  CHECK(s.drop(P::Rope) == doctest::Approx(0.29));
  CHECK_FALSE(s.at(P::Learned, 2).available);
  CHECK_THROWS_AS(s.at(P::Rope, 3), std::out_of_range);
  m[P::Rope] = row(0.99, 0.985, 0.98);  // lost 1 point: "naturally" holds
  m[P::Sinusoidal] = row(0.98, 0.98, 0.60);
  m[P::Alibi] = row(0.98, 0.80, 0.50);  // ALiBi drops more than sinusoidal
  s = judge_extrapolation(m);
  CHECK(s.rope_natural.holds());
  CHECK(s.alibi_over_sinusoidal.outcome == Outcome::fails);
  m[P::Alibi] = row(0.98, 0.80, 0.601);  // a 0.1-point gap: within two standard errors
  CHECK(judge_extrapolation(m).alibi_over_sinusoidal.outcome == Outcome::inconclusive);
  m.erase(P::Alibi);
  CHECK(judge_extrapolation(m).alibi_over_sinusoidal.outcome == Outcome::inconclusive);
  ExtrapolationResult r;
  r.available = true, r.accuracy = 0.5, r.scored = 100;
  CHECK(accuracy_standard_error(r) == doctest::Approx(0.05));
}

TEST_CASE("sinusoidal_similarity_check: two positions give the closed form's row; the dip and the rise are found") {
  const SimilarityCheck c = sinusoidal_similarity_check(8, 15, 0, 7);
  REQUIRE(c.rows.shape(0) == 2u);
  REQUIRE(c.rows.shape(1) == 16u);
  const Vec f = sinusoidal_similarity(8, 15);
  for (std::size_t k = 0; k < 16; ++k) {
    CHECK(c.rows(0, k) == doctest::Approx(f(k)).epsilon(1e-4));
    CHECK(c.rows(1, k) == doctest::Approx(f(k)).epsilon(1e-4));
  }
  CHECK(c.of_k_only.outcome == Outcome::holds);
  CHECK(c.max_diff < 1e-4);
  // d = 8: it falls to k = 3, then rises again (the fast pair comes round near k = 6)
  CHECK(c.dip_k == 3u);
  CHECK(c.dip == doctest::Approx(f(3)));
  CHECK(c.rise_k == 6u);
  CHECK(c.rise == doctest::Approx(f(6)));
  CHECK(c.rise > c.dip);
  // a curve that only falls has no dip
  SimilarityCheck m;
  find_dip_and_rise(Vec{4.0f, 3.0f, 2.0f, 1.0f}, m);
  CHECK(m.dip_k == 0u);
  find_dip_and_rise(Vec{4.0f, 1.0f, 3.0f, 2.0f, 3.5f}, m);
  CHECK(m.dip_k == 1u);
  CHECK(m.rise_k == 4u);
  CHECK(m.rise == doctest::Approx(3.5));
}

TEST_CASE("rope_reach: the slow pairs of a narrow head meet unseen angles at 4L; a pair that turns in training does not") {
  const RopeReach r = rope_reach(8, 16, 64);
  REQUIRE(r.theta.size() == 4u);
  CHECK(r.theta[0] == doctest::Approx(1.0));
  CHECK(r.theta[1] == doctest::Approx(0.1));
  CHECK(r.train_angle[0] == doctest::Approx(15.0));  // turns twice in training: every angle seen
  CHECK(r.test_angle[1] == doctest::Approx(6.3));
  CHECK(r.unseen_pairs == 3u);
  CHECK(rope_reach(8, 16, 16).unseen_pairs == 0u);  // tested at the training length: nothing new
}

TEST_CASE("order_blind_vote: the most frequent earlier value of the key, a tie shared evenly") {
  // values = 4, keys 0 and 1; token = key·4 + value
  RecallData d;
  d.tokens = {{1, 1, 2, 1, 5, 2}};
  //           t0 key0 v1 (first) → −1; t1 key0 v1: seen {1} → target 1, vote 1: right
  //           t2 key0 v2: seen {1,1} → target 1 (latest), vote 1: right
  //           t3 key0 v1: seen {1,1,2} → target 2, vote 1: wrong
  //           t4 key1 v1: first of key 1 → −1; t5 key0 v2: seen {1,1,2,1} → target 1, vote 1: right
  d.targets = {{-1, 1, 1, 2, -1, 1}};
  ExtrapolationResult r = order_blind_vote(d, 4);
  CHECK(r.scored == 4u);
  CHECK(r.accuracy == doctest::Approx(0.75));
  d.tokens = {{0, 1, 2}};  // key 0: values 0 then 1 → a tie at t2, target 1: half right
  d.targets = {{-1, 0, 1}};
  r = order_blind_vote(d, 4);
  CHECK(r.scored == 2u);
  CHECK(r.accuracy == doctest::Approx((1.0 + 0.5) / 2.0));
  // the chapter's test sets: the vote falls as sequences grow (more earlier values to choose from)
  const std::vector<ExtrapolationResult> row = order_blind_vote_row(ExtrapolationConfig{});
  REQUIRE(row.size() == 3u);
  CHECK(row[0].accuracy > row[2].accuracy);
  CHECK(row[0].length == 16u);
}

TEST_CASE("judge_none_vs_vote: above the vote beyond noise holds, within noise is inconclusive, below fails") {
  ExtrapolationResult none, vote;
  none.available = vote.available = true;
  none.scored = vote.scored = 2000;
  vote.accuracy = 0.64;
  none.accuracy = 0.80;
  CHECK(judge_none_vs_vote(none, vote).holds());
  none.accuracy = 0.645;
  CHECK(judge_none_vs_vote(none, vote).outcome == Outcome::inconclusive);
  none.accuracy = 0.50;
  CHECK(judge_none_vs_vote(none, vote).outcome == Outcome::fails);
  none.available = false;
  CHECK(judge_none_vs_vote(none, vote).outcome == Outcome::inconclusive);
}

TEST_CASE("alibi_equal_score_reach: a steep head looks near, a flat one nearly uniform") {
  const AlibiReach steep = alibi_equal_score_reach(0.5, 16), flat = alibi_equal_score_reach(1.0 / 256.0, 16);
  CHECK(steep.ratio == doctest::Approx(std::exp(0.5 * 15.0)));
  CHECK(steep.nearest == doctest::Approx((1.0 - std::exp(-0.5)) / (1.0 - std::exp(-0.5 * 16.0))));
  CHECK(steep.nearly_blind.outcome == Outcome::fails);
  CHECK(flat.ratio == doctest::Approx(std::exp(15.0 / 256.0)));
  CHECK(flat.nearly_blind.holds());
  CHECK(flat.uniform == doctest::Approx(1.0 / 16.0));
  CHECK(flat.farthest < flat.uniform);
  CHECK(flat.nearest > flat.uniform);
  CHECK(alibi_equal_score_reach(0.0, 16).nearest == doctest::Approx(1.0 / 16.0));  // slope 0: no position
}

TEST_CASE("confidently_wrong: above chance in accuracy yet above a uniform guess in CE") {
  ExtrapolationStudy s;
  s.values = 8;  // chance 12.5%, uniform CE ln 8 = 2.079
  ExtrapolationResult good, wrong, plain;
  good.available = wrong.available = plain.available = true;
  good.loss = 0.02, good.accuracy = 0.99;
  wrong.loss = 6.6, wrong.accuracy = 0.417;  // chapter 05's sinusoidal at 4L
  plain.loss = 3.0, plain.accuracy = 0.10;   // high CE, but no better than chance: not flagged
  s.results[PositionEncoding::Sinusoidal] = {good, good, wrong};
  s.results[PositionEncoding::None] = {plain, plain, plain};
  const std::vector<ConfidentlyWrong> w = confidently_wrong(s);
  REQUIRE(w.size() == 1);
  CHECK(w[0].encoding == PositionEncoding::Sinusoidal);
  CHECK(w[0].times_l == 4u);
  CHECK(w[0].chance_loss == doctest::Approx(std::log(8.0)));
  s.results[PositionEncoding::Sinusoidal][2].loss = 1.9;  // below ln 8: not confidently wrong
  CHECK(confidently_wrong(s).empty());
  s.values = 0;
  CHECK(confidently_wrong(s).empty());
}

TEST_CASE("alibi_slope_shape: a geometric sequence for a power of 2, the authors' code's two parts otherwise") {
  const AlibiSlopeShape eight = alibi_slope_shape(8);
  CHECK(eight.power_of_two());
  CHECK(eight.geometric.holds());
  CHECK(eight.ratio == doctest::Approx(0.5));
  CHECK(eight.steepest == 0u);
  const AlibiSlopeShape three = alibi_slope_shape(3);  // 2^−4, 2^−8 (two heads), then 2^−2 (of four)
  CHECK_FALSE(three.power_of_two());
  CHECK(three.base_heads == 2u);
  CHECK(three.geometric.outcome == Outcome::fails);
  CHECK(three.steepest == 2u);
  CHECK(three.slopes[2] == doctest::Approx(0.25));
  CHECK(judge_alibi_slopes({0.5, 0.25, 0.125}).geometric.holds());
  CHECK(judge_alibi_slopes({0.5, 0.25, 0.2}).geometric.outcome == Outcome::fails);
  CHECK(judge_alibi_slopes({0.5}).geometric.holds());
}
