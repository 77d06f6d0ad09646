// Chapter 04's verdicts (attn/studies/multi_head_study.hpp), each driven both ways.
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
  CHECK(gqa_caption(4, 2) == "GQA: 4 query heads, 2 K/V heads");
  CHECK(gqa_caption(2, 1) == "GQA: 2 query heads, 1 K/V head");
  const std::string same = gqa_caption(1, 1);
  CHECK(same.find("1 query head,") != std::string::npos);
  CHECK(same.find("= MHA") != std::string::npos);
  CHECK(gqa_caption(5, 5).find("= MHA") != std::string::npos);
  CHECK(gqa_caption(4, 2).find("MHA") == std::string::npos);
}
