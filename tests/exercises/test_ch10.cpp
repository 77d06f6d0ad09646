// Chapter 10 exercise checks (solutions.cpp in ctest; the learner's exercises.cpp through
// `scripts/exercises check 10`). Hand-made weights with known answers; messages name the usual
// mistakes. Tolerance 1e-5 (float32 weights, sums of a few terms).
#include <cmath>

#include "attn/attention/attention_stats.hpp"
#include "exercise_check.hpp"
#include "../../chapters/10_interpretability/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Vec;

TEST_SUITE("ch10") {

TEST_CASE("10.1 attention_entropy") {
  Mat p = xt::zeros<float>({4, 4});
  p(0, 0) = 1.0f;                                     // one key: 0
  p(1, 0) = p(1, 1) = 0.5f;                           // two equal keys: log 2
  for (std::size_t j = 0; j < 4; ++j) p(2, j) = 0.25f;  // four: log 4
  p(3, 0) = 0.7f;
  p(3, 2) = 0.3f;
  LEARNER_CALL(h, ex10::attention_entropy(p));
  REQUIRE_MESSAGE(h.size() == 4, "one entropy per row: expected 4 values, got " << h.size());
  for (std::size_t i = 0; i < 4; ++i)
    if (std::isnan(h(i))) FAIL("row " << i << " is NaN: an entry of exactly 0 must contribute 0 (skip it), not 0·log 0");
  if (std::abs(double(h(1)) - std::log2(2.0)) < 1e-5 && std::abs(double(h(2)) - 2.0) < 1e-5)
    FAIL("these are bits (log2): use the natural logarithm, std::log, so that n equal keys give ln n");
  if (h(1) < 0.0f) FAIL("entropy is −Σ p·log p: a minus sign is missing (log p ≤ 0 for p ≤ 1)");
  const Vec want = attn::attention_entropy(p);
  for (std::size_t i = 0; i < 4; ++i)
    CHECK_MESSAGE(std::abs(double(h(i)) - double(want(i))) < 1e-5,
                  "row " << i << ": got " << h(i) << ", expected " << want(i));
}

TEST_CASE("10.2 prefix_matching_score") {
  // A B C A B C: positions 3, 4, 5 have earlier copies at 0, 1, 2; their successors are 1, 2, 3.
  const std::vector<int> tokens = {4, 9, 2, 4, 9, 2};
  Mat induction = xt::zeros<float>({6, 6}), copy_itself = xt::zeros<float>({6, 6});
  for (std::size_t i = 0; i < 6; ++i) {
    induction(i, i >= 3 ? i - 2 : i) = 1.0f;
    copy_itself(i, i >= 3 ? i - 3 : i) = 1.0f;  // attends to the earlier copy itself, not its successor
  }
  LEARNER_CALL(perfect, ex10::prefix_matching_score(induction, tokens));
  if (std::abs(perfect - 0.5) < 1e-5)
    FAIL("a perfect induction head scored 0.5: average only over the positions that have an earlier copy (3 of 6)");
  CHECK_MESSAGE(std::abs(perfect - 1.0) < 1e-5, "a head that always looks at the successor of the earlier copy scores 1, got " << perfect);
  LEARNER_CALL(itself, ex10::prefix_matching_score(copy_itself, tokens));
  if (std::abs(itself - 1.0) < 1e-5)
    FAIL("weight on the earlier copy itself (j) counted: the target is the token that followed it, j + 1");
  CHECK(std::abs(itself) < 1e-5);
  // A spread-out head on a sequence with a repeat inside: compare with the core's score.
  const std::vector<int> t2 = {1, 2, 1, 3, 2, 1, 4};
  Mat spread = xt::zeros<float>({7, 7});
  for (std::size_t i = 0; i < 7; ++i)
    for (std::size_t j = 0; j <= i; ++j) spread(i, j) = float(j + 1) / float((i + 1) * (i + 2) / 2);
  LEARNER_CALL(s, ex10::prefix_matching_score(spread, t2));
  CHECK_MESSAGE(std::abs(s - attn::prefix_matching_score(spread, t2)) < 1e-5,
                "a token seen twice before adds the weights after BOTH copies; got " << s << ", expected "
                                                                                   << attn::prefix_matching_score(spread, t2));
  LEARNER_CALL(none, ex10::prefix_matching_score(spread, {1, 2, 3, 4, 5, 6, 7}));
  CHECK_MESSAGE(none == 0.0, "no token repeats: the score is 0 (and must not divide by zero)");
}

}  // TEST_SUITE
