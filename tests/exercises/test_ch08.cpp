// Chapter 08 exercise checks (solutions.cpp in ctest; the learner's exercises.cpp through
// `scripts/exercises check 08`). Messages name the usual mistakes. Tolerance 1e-5 (float32, O(1) values).
#include <cmath>

#include "attn/attention/attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"
#include "../../chapters/08_transformer/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;

TEST_SUITE("ch08") {

TEST_CASE("08.1 causal_self_attention") {
  attn::Rng rng(81);
  const std::size_t T = 6, d = 8;
  const Mat q = rng.normal_mat(T, d), k = rng.normal_mat(T, d), v = rng.normal_mat(T, 5);
  LEARNER_CALL(out, ex08::causal_self_attention(q, k, v));
  REQUIRE_MESSAGE((out.shape(0) == T && out.shape(1) == 5), "the output must be (T, d_v) = (6, 5)");
  REQUIRE_MESSAGE(exercise_check::all_finite(out), "NaN or inf in the output: subtract the row's largest visible score before exp");
  const Mat want = attn::scaled_dot_product_attention(q, k, v, attn::causal_mask(T)).output;
  if (exercise_check::max_diff(out, want) > 1e-5) {
    double row0 = 0;
    for (std::size_t c = 0; c < 5; ++c) row0 = std::max(row0, double(std::abs(out(0, c) - v(0, c))));
    if (exercise_check::max_diff(out, attn::scaled_dot_product_attention(q, k, v).output) < 1e-5)
      FAIL("this is attention without the mask: position i must not see keys j > i");
    if (row0 > 1e-5) FAIL("row 0 can only see itself, so out(0, ·) must equal v(0, ·): is the mask upside down (j < i hidden)?");
    FAIL("out must be softmax(Q·Kᵀ/√d + M)·V with M_ij = −∞ for j > i (did you scale by 1/√d?)");
  }
}

TEST_CASE("08.2 beam_step") {
  const Mat logp = {{-0.1f, -2.0f, -3.0f}, {-0.5f, -0.2f, -4.0f}, {-1.0f, -1.0f, -1.0f}};
  const std::vector<double> cum = {-1.0, -0.5, -INFINITY};  // hypothesis 2 is not live
  LEARNER_CALL(got, ex08::beam_step(cum, logp, 4));
  const auto want = attn::beam_candidates(cum, logp, 4);
  REQUIRE_MESSAGE(got.size() == want.size(), "keep exactly `width` = 4 candidates (fewer only if fewer exist)");
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (got[i].parent == 2) FAIL("hypothesis 2 has cum = −∞: it is not live and must not be extended");
    if (std::abs(got[i].score - want[i].score) > 1e-9) {
      if (std::abs(got[i].score - logp(got[i].parent, std::size_t(got[i].token))) < 1e-9)
        FAIL("the score is only this token's log p: add the hypothesis's cumulative cum[k]");
      FAIL("candidate " << i << " should score " << want[i].score << " — best first, by cum[k] + logp(k, v)");
    }
    CHECK_MESSAGE((got[i].parent == want[i].parent && got[i].token == want[i].token),
                  "candidate " << i << " should be (parent " << want[i].parent << ", token " << want[i].token << ")");
  }
  // ties: lower parent first, then lower token
  const Mat flat = {{-1.0f, -1.0f}, {-1.0f, -1.0f}};
  LEARNER_CALL(tie, ex08::beam_step({0.0, 0.0}, flat, 3));
  REQUIRE(tie.size() == 3);
  CHECK_MESSAGE((tie[0].parent == 0 && tie[0].token == 0 && tie[1].parent == 0 && tie[1].token == 1 && tie[2].parent == 1),
                "equal scores: order by parent, then by token");
}

}  // TEST_SUITE
