// Chapter 04's verdicts (attn/studies/multi_head_study.hpp), each driven both ways; GQA pooled
// from MHA; step 3's rows of heatmaps.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "attn/attention/mha_trace.hpp"
#include "attn/data/data_files.hpp"
#include "attn/present/ch04_report.hpp"
#include "attn/studies/multi_head_study.hpp"

using namespace attn;

TEST_CASE("head_diversity: random heads differ; identical heads do not; one head is inconclusive") {
  Rng rng(4);
  const MultiHead p = multi_head_init(16, 4, 4, rng, false);
  const MhaTrace t = multi_head_trace(rng.normal_mat(5, 16), p);
  CHECK(head_diversity(t.weights).differ.holds());
  Tensor3 same = t.weights;
  for (std::size_t h = 1; h < 4; ++h) xt::view(same, h, xt::all(), xt::all()) = xt::view(same, 0, xt::all(), xt::all());
  const HeadDiversity alike = head_diversity(same);
  CHECK(alike.most_different == 0.0);
  CHECK(alike.differ.outcome == Outcome::fails);
  const Tensor3 one = xt::view(t.weights, xt::range(0, 1), xt::all(), xt::all());
  CHECK(head_diversity(one).differ.outcome == Outcome::inconclusive);
}

TEST_CASE("trace_vs_layer and gqa_vs_repeated_mha agree; judge_agreement fails past its bound") {
  Rng rng(5);
  const Mat x = rng.normal_mat(6, 16);
  CHECK(trace_vs_layer(x, multi_head_init(16, 4, 4, rng, true)).agree.holds());
  const Agreement g = gqa_vs_repeated_mha(x, multi_head_init(16, 4, 2, rng, false));
  CHECK(g.agree.holds());
  CHECK(g.max_diff <= kGqaRepeatTol);
  // float rounding passes (3e-8 was seen at d_model 8), a real difference does not
  CHECK(judge_agreement(3e-8, kGqaRepeatTol).agree.holds());
  CHECK(judge_agreement(1e-3, kGqaRepeatTol).agree.outcome == Outcome::fails);
  CHECK(judge_agreement(2e-5, 1e-5).agree.outcome == Outcome::fails);
  CHECK(judge_agreement(0.5e-5, 1e-5).agree.holds());
}

TEST_CASE("pytorch_parity on the shipped golden files holds") {
  const auto x = find_data_file("golden/mha/X.npy");
  REQUIRE(x);
  const Agreement a = pytorch_parity(std::filesystem::path(*x).parent_path().string());
  CHECK(a.agree.holds());
  CHECK(a.max_diff < 1e-5);
}

TEST_CASE("attention_crossings: half the work at 1024, scores match the FFN at d_ff; none when too short") {
  const TransformerConfig cfg;
  const AttentionCrossings c = attention_crossings(cfg, {32, 512, 1024, 2048, 8192});
  CHECK(c.half_the_work == 1024);
  CHECK(c.scores_match_ffn == 2048);
  const AttentionCrossings none = attention_crossings(cfg, {32, 128});
  CHECK(none.half_the_work == 0);
  CHECK(none.scores_match_ffn == 0);
}

TEST_CASE("gqa_caption: counts in the right number, and says when GQA is MHA") {
  CHECK(gqa_caption(4, 2) == "GQA: 4 query heads, 2 K/V heads (step 2's K/V heads averaged in groups)");
  CHECK(gqa_caption(2, 1) == "GQA: 2 query heads, 1 K/V head (step 2's K/V heads averaged in groups)");
  const std::string same = gqa_caption(1, 1);
  CHECK(same.find("1 query head,") != std::string::npos);
  CHECK(same.find("= MHA") != std::string::npos);
  CHECK(gqa_caption(5, 5).find("= MHA") != std::string::npos);
  CHECK(gqa_caption(4, 2).find("MHA") == std::string::npos);
}

TEST_CASE("mean_pool_kv: each group's K/V columns averaged; g = h changes nothing; bad g throws") {
  Rng rng(6);
  MultiHead mha = multi_head_init(8, 4, 4, rng, true);
  for (std::size_t i = 0; i < mha.b_k.size(); ++i) mha.b_k(i) = float(i);
  const MultiHead g2 = mean_pool_kv(mha, 2);
  CHECK(g2.n_kv_heads == 2);
  CHECK(g2.w_k.shape(1) == 4u);  // 2 K/V heads of d_k = 2
  // K/V head 1, column 0 = mean of query heads 2 and 3's column 0 (columns 4 and 6 of W_K).
  CHECK(g2.w_k(3, 2) == doctest::Approx((mha.w_k(3, 4) + mha.w_k(3, 6)) / 2));
  CHECK(g2.w_v(0, 1) == doctest::Approx((mha.w_v(0, 1) + mha.w_v(0, 3)) / 2));
  CHECK(g2.b_k(2) == doctest::Approx((4.0 + 6.0) / 2));
  CHECK(max_abs_diff(g2.w_q, mha.w_q) == 0.0);
  const MultiHead same = mean_pool_kv(mha, 4);
  CHECK(max_abs_diff(same.w_k, mha.w_k) == 0.0);
  CHECK_THROWS_AS(mean_pool_kv(mha, 3), ShapeError);
  CHECK_THROWS_AS(mean_pool_kv(g2, 1), ShapeError);  // needs MHA
}

TEST_CASE("gqa_pooling_cost: zero when heads are already equal or nothing is pooled, positive otherwise") {
  Rng rng(7);
  const Mat x = rng.normal_mat(5, 8);
  MultiHead mha = multi_head_init(8, 4, 4, rng, false);
  const GqaPoolingCost random = gqa_pooling_cost(x, mha, 2);
  CHECK(random.heads == 4u);
  CHECK(random.kv_heads == 2u);
  CHECK(random.max_diff > 1e-3);
  const Mat full = multi_head_trace(x, mha).output;
  const Mat pooled = multi_head_trace(x, mean_pool_kv(mha, 2)).output;
  CHECK(random.frobenius_output == doctest::Approx(std::sqrt(double(xt::sum(full * full)()))));
  CHECK(random.frobenius_diff == doctest::Approx(std::sqrt(double(xt::sum((pooled - full) * (pooled - full))()))));
  CHECK(random.relative() == doctest::Approx(random.frobenius_diff / random.frobenius_output));
  CHECK(random.relative() > 1e-3);
  CHECK(gqa_pooling_cost(x, mha, 4).max_diff == 0.0);
  CHECK(gqa_pooling_cost(x, mha, 4).relative() == 0.0);
  // Heads whose K/V columns already agree within each group lose nothing by averaging.
  for (std::size_t r = 0; r < 8; ++r)
    for (std::size_t c = 0; c < 2; ++c) {
      mha.w_k(r, 2 + c) = mha.w_k(r, c), mha.w_k(r, 6 + c) = mha.w_k(r, 4 + c);
      mha.w_v(r, 2 + c) = mha.w_v(r, c), mha.w_v(r, 6 + c) = mha.w_v(r, 4 + c);
    }
  CHECK(gqa_pooling_cost(x, mha, 2).max_diff < 1e-6);
  CHECK(gqa_pooling_cost(x, mha, 2).relative() < 1e-6);
  CHECK(pooling_beats_zeros(gqa_pooling_cost(x, mha, 2)).holds());
}

TEST_CASE("pooling_beats_zeros: nearer than zeros holds; as far or farther fails; no output is inconclusive") {
  GqaPoolingCost c;
  c.frobenius_output = 2.0, c.frobenius_diff = 1.6;  // 80%
  CHECK(pooling_beats_zeros(c).holds());
  CHECK(pooling_beats_zeros(c).measured == doctest::Approx(0.8));
  CHECK(pooling_keeps_most(c).outcome == Outcome::fails);  // 80%: nearer than zeros, but not by half
  c.frobenius_diff = 0.4;                                   // 20%
  CHECK(pooling_keeps_most(c).holds());
  c.frobenius_diff = 1.6;
  c.frobenius_diff = 2.06;  // 103%: worse than outputting zeros
  CHECK(pooling_beats_zeros(c).outcome == Outcome::fails);
  c.frobenius_output = 0.0;
  CHECK(pooling_beats_zeros(c).outcome == Outcome::inconclusive);
}

TEST_CASE("maps_in_rows: the first block of every row carries the row labels") {
  const std::string s = maps_in_rows({"w aa\nv bb", "w cc\nv dd", "w ee\nv ff"}, {"  aa\n  bb", "  cc\n  dd", "  ee\n  ff"},
                                     {"h0", "h1", "h2"}, 2 + 4 + 3 + 4);
  CHECK(s == "  h0     h1\n  w aa     cc\n  v bb     dd\n\n  h2\n  w ee\n  v ff\n");
  // A title for each form: a row's first map (labelled) takes its labelled title, wherever it falls.
  const std::string t = maps_in_rows({"w aa\nv bb", "w cc\nv dd", "w ee\nv ff"}, {"  aa\n  bb", "  cc\n  dd", "  ee\n  ff"},
                                     {"  L0", "  L1", "  L2"}, {"  B0", "  B1", "  B2"}, 2 + 4 + 3 + 4);
  CHECK(t == "    L0     B1\n  w aa     cc\n  v bb     dd\n\n    L2\n  w ee\n  v ff\n");
}

TEST_CASE("near_shade_edge: 1/n on an edge of the shading, or near none") {
  CHECK(near_shade_edge(0.20, 1.0, 0.05) == 1);   // n = 5, shades 0 … 1: on the 0.2 edge
  CHECK(near_shade_edge(0.50, 1.0, 0.05) == 0);   // n = 2: midway between 0.4 and 0.6
  CHECK(near_shade_edge(0.08, 1.0, 0.05) == 0);   // n = 12: below the first edge
  CHECK(near_shade_edge(0.30, 0.75, 0.05) == 2);  // shades 0 … 0.75: edges 0.15, 0.3, 0.45, 0.6
  CHECK(near_shade_edge(1.0 / 12.0, 0.20, 0.05) == 2);  // edges 0.04 apart: the nearest, 0.08
  CHECK(near_shade_edge(0.06, 0.20, 0.05) == 0);  // midway between 0.04 and 0.08: on neither
}

TEST_CASE("gqa_vs_repeated_mha: float32 rounding of a differently blocked product is within its bound") {
  Rng rng(4);  // chapter 04 with --d-model 8: a run where the two orders of summation differ in the last bit
  const MultiHead p = multi_head_init(8, 4, 4, rng, false);
  const Mat x = rng.normal_mat(5, 8);
  const Agreement g = gqa_vs_repeated_mha(x, mean_pool_kv(p, 2));
  CHECK(g.agree.holds());
  CHECK(g.max_diff <= kGqaRepeatTol);
  CHECK(judge_agreement(3e-8, kGqaRepeatTol).agree.holds());
  CHECK(judge_agreement(2e-6, kGqaRepeatTol).agree.outcome == Outcome::fails);
}

TEST_CASE("near_uniform_rows counts rows within tol of 1/n at every word, and no others") {
  Tensor3 w = xt::zeros<float>({std::size_t(2), std::size_t(2), std::size_t(4)});
  for (std::size_t j = 0; j < 4; ++j) w(0, 0, j) = 0.25f;          // exactly uniform
  w(0, 1, 0) = 0.28f, w(0, 1, 1) = 0.22f, w(0, 1, 2) = 0.26f, w(0, 1, 3) = 0.24f;  // within 0.05
  w(1, 0, 0) = 0.40f, w(1, 0, 1) = 0.20f, w(1, 0, 2) = 0.20f, w(1, 0, 3) = 0.20f;  // one weight 0.15 off
  w(1, 1, 0) = 1.0f;                                                  // one-hot
  const NearUniformRows r = near_uniform_rows(w);
  CHECK(r.rows == 4u);
  CHECK(r.near == 2u);
  CHECK(r.which == std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 1}});
  CHECK(r.uniform == doctest::Approx(0.25));
  CHECK(r.largest == doctest::Approx(1.0));  // the one-hot row
  CHECK(near_uniform_rows(w, 0.2).near == 3u);  // a looser tolerance takes the 0.40 row too
  CHECK(near_uniform_rows(w, 0.01).near == 1u);
}

TEST_CASE("two_targets: one head splits its weight between the two words; two heads keep both, or fail at low gain") {
  const TwoTargets t = two_targets();
  REQUIRE(t.one_head.size() == 3u);
  CHECK(t.one_head[0] == doctest::Approx(t.one_head[1]));  // the same score for both words
  CHECK(t.one_head_best < 0.5);
  CHECK(t.two[0][0] > 0.9);
  CHECK(t.two[1][1] > 0.9);
  CHECK(t.two_heads_own == doctest::Approx(std::min(t.two[0][0], t.two[1][1])));
  CHECK(t.keeps_both.outcome == Outcome::holds);
  // the weights recomputed: one head's scores are g²/√2 on red and ball, 0 on 'the'
  const double s = 4.0 / std::sqrt(2.0);
  CHECK(t.one_head[0] == doctest::Approx(std::exp(s) / (2.0 * std::exp(s) + 1.0)).epsilon(1e-5));
  CHECK(t.two[0][0] == doctest::Approx(std::exp(4.0) / (std::exp(4.0) + 2.0)).epsilon(1e-5));
  const TwoTargets weak = two_targets(0.5);  // scores 0.25: no head commits to its word
  CHECK(weak.two_heads_own < kTwoTargetsBound);
  CHECK(weak.keeps_both.outcome == Outcome::fails);
}

TEST_CASE("head_cost: parameters and FLOPs do not depend on h, the score entries grow h-fold") {
  const HeadCost four = head_cost(5, 16, 4), one = head_cost(5, 16, 1);
  CHECK(four.params == 1024.0);
  CHECK(four.params == one.params);
  CHECK(four.projection_flops == 8.0 * 5 * 16 * 16);
  CHECK(four.projection_flops == one.projection_flops);
  CHECK(four.score_flops == 4.0 * 25 * 16);
  CHECK(four.score_flops == one.score_flops);
  CHECK(four.score_entries == 100.0);
  CHECK(one.score_entries == 25.0);
}
