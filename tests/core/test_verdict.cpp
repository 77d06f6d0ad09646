// Verdicts (attn/studies/verdict.hpp): each judge driven to every outcome it can give, and a
// non-finite measurement never read as a result.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "attn/present/verdict_words.hpp"
#include "attn/studies/verdict.hpp"

using namespace attn;

TEST_CASE("judge_at_least: holds, partly, fails, and NaN is inconclusive") {
  CHECK(judge_at_least(91.0, 90.0, 80.0).outcome == Outcome::holds);
  CHECK(judge_at_least(90.0, 90.0, 80.0).outcome == Outcome::holds);  // the bound itself holds
  CHECK(judge_at_least(85.0, 90.0, 80.0).outcome == Outcome::partly);
  CHECK(judge_at_least(79.0, 90.0, 80.0).outcome == Outcome::fails);
  CHECK(judge_at_least(85.0, 90.0).outcome == Outcome::fails);  // no middle ground without `partly`
  CHECK(judge_at_least(std::nan(""), 90.0).outcome == Outcome::inconclusive);
  const Verdict v = judge_at_least(91.0, 90.0, 80.0);
  CHECK(v.measured == 91.0);
  CHECK(v.bound == 90.0);
  CHECK(v.holds());
}

TEST_CASE("judge_at_most: the mirror image") {
  CHECK(judge_at_most(0.5, 1.0, 2.0).outcome == Outcome::holds);
  CHECK(judge_at_most(1.5, 1.0, 2.0).outcome == Outcome::partly);
  CHECK(judge_at_most(2.5, 1.0, 2.0).outcome == Outcome::fails);
  CHECK(judge_at_most(std::numeric_limits<double>::infinity(), 1.0).outcome == Outcome::inconclusive);
}

TEST_CASE("judge_greater: beyond the noise either way, or within it") {
  CHECK(judge_greater(0.30, 0.10, 0.05).outcome == Outcome::holds);
  CHECK(judge_greater(0.12, 0.10, 0.05).outcome == Outcome::inconclusive);
  CHECK(judge_greater(0.10, 0.30, 0.05).outcome == Outcome::fails);
  CHECK(judge_greater(0.3, std::nan(""), 0.05).outcome == Outcome::inconclusive);
  CHECK(judge_greater(0.30, 0.10, 0.05).measured == doctest::Approx(0.20));
}

TEST_CASE("outcome ids and words are distinct") {
  CHECK(std::string(outcome_id(Outcome::holds)) == "holds");
  CHECK(std::string(outcome_id(Outcome::inconclusive)) == "inconclusive");
  CHECK(std::string(outcome_word(Outcome::fails)) == "does not hold");
  CHECK(std::string(outcome_word(Outcome::partly)) != std::string(outcome_word(Outcome::holds)));
  CHECK(std::string(outcome_id(Outcome::too_noisy)) == "too_noisy");
  CHECK(std::string(outcome_word(Outcome::too_noisy)) == "not judged (too noisy)");
  CHECK(std::string(outcome_word(Outcome::too_noisy)) != std::string(outcome_word(Outcome::inconclusive)));
}
