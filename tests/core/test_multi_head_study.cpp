// Chapter 04's verdicts (attn/studies/multi_head_study.hpp), each driven both ways; GQA pooled
// from MHA; step 3's rows of heatmaps.
#include <doctest/doctest.h>

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
  CHECK(g.max_diff == 0.0);
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
  CHECK(gqa_caption(4, 2) == "GQA: 4 query heads, 2 K/V heads (step 4's K/V heads averaged in groups)");
  CHECK(gqa_caption(2, 1) == "GQA: 2 query heads, 1 K/V head (step 4's K/V heads averaged in groups)");
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
  CHECK(random.max_output == doctest::Approx(double(xt::amax(xt::abs(multi_head_trace(x, mha).output))())));
  CHECK(gqa_pooling_cost(x, mha, 4).max_diff == 0.0);
  // Heads whose K/V columns already agree within each group lose nothing by averaging.
  for (std::size_t r = 0; r < 8; ++r)
    for (std::size_t c = 0; c < 2; ++c) {
      mha.w_k(r, 2 + c) = mha.w_k(r, c), mha.w_k(r, 6 + c) = mha.w_k(r, 4 + c);
      mha.w_v(r, 2 + c) = mha.w_v(r, c), mha.w_v(r, 6 + c) = mha.w_v(r, 4 + c);
    }
  CHECK(gqa_pooling_cost(x, mha, 2).max_diff < 1e-6);
}

TEST_CASE("maps_in_rows: the first block of every row carries the row labels") {
  const std::string s = maps_in_rows({"w aa\nv bb", "w cc\nv dd", "w ee\nv ff"}, {"  aa\n  bb", "  cc\n  dd", "  ee\n  ff"},
                                     {"h0", "h1", "h2"}, 2 + 4 + 3 + 4);
  CHECK(s == "  h0     h1\n  w aa     cc\n  v bb     dd\n\n  h2\n  w ee\n  v ff\n");
}
