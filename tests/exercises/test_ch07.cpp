// Chapter 07 exercise checks (runs against solutions.cpp in ctest, against the learner's
// exercises.cpp through `scripts/exercises check 07`). Each failure message names the usual
// mistake. Tolerances: float32 results vs double references, values O(1): 1e-5.
#include <limits>

#include "attn/attention/attention.hpp"
#include "attn/attention/cross_attention.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"
#include "07_cross_attention/exercises.hpp"

using attn::Mat;
using exercise_check::all_finite;
using exercise_check::max_diff;

TEST_SUITE("ch07") {

TEST_CASE("07.1 cross_attention") {
  attn::Rng rng(701);
  // T != S, d_y != d_x and d_k != d_v: every mix-up of the two sequences shows as a wrong shape.
  const std::size_t T = 3, S = 5, d_y = 6, d_x = 10, d_k = 4, d_v = 2;
  const Mat y = rng.normal_mat(T, d_y), x = rng.normal_mat(S, d_x);
  const attn::CrossAttentionWeights w = attn::init_cross_attention(rng, d_y, d_x, d_k, d_v);
  LEARNER_CALL(out, ex07::cross_attention(y, x, w.w_q, w.w_k, w.w_v));
  REQUIRE_MESSAGE(out.shape(0) == T, "the output needs one row per target (query) position: " << T << ", got " << out.shape(0)
                                                                                             << " — did the queries come from x?");
  REQUIRE_MESSAGE(out.shape(1) == d_v, "the output rows are mixtures of values: d_v = " << d_v << " columns, got " << out.shape(1));
  const Mat q = xt::cast<float>(attn::gemm_reference(y, w.w_q)), k = xt::cast<float>(attn::gemm_reference(x, w.w_k)),
            v = xt::cast<float>(attn::gemm_reference(x, w.w_v));
  const Mat ref = xt::cast<float>(attn::attention_reference(q, k, v));
  if (max_diff(out, ref) > 1e-5) {
    if (max_diff(out, xt::cast<float>(attn::attention_reference(q, k, v, {}, 1.0))) < 1e-5)
      FAIL("matches softmax(Q·Kᵀ)·V without scaling: divide the scores by √d_k");
    if (max_diff(out, xt::cast<float>(attn::attention_reference(q, k, v, {}, 1.0 / double(d_k)))) < 1e-5)
      FAIL("matches division by d_k: the scale is 1/√d_k, not 1/d_k");
    FAIL("output differs from softmax(Q·Kᵀ/√d_k)·V by " << max_diff(out, ref)
                                                       << ": check that softmax runs over the source (each row of the T×S scores)");
  }
  CHECK_MESSAGE(all_finite(out), "NaN or inf in the output: subtract each row's max before exp");
  // x = y (same width) must give self-attention: the same function serves both.
  const Mat z = rng.normal_mat(4, d_y);
  const attn::CrossAttentionWeights ws = attn::init_cross_attention(rng, d_y, d_y, d_k, d_v);
  LEARNER_CALL(self, ex07::cross_attention(z, z, ws.w_q, ws.w_k, ws.w_v));
  CHECK_MESSAGE(max_diff(self, attn::cross_attention(z, z, ws).attn.output) < 1e-5,
                "with x = y the result must be self-attention of that sequence");
  // Large inputs stay finite.
  LEARNER_CALL(big, ex07::cross_attention(y * 300.0f, x * 300.0f, w.w_q, w.w_k, w.w_v));
  CHECK_MESSAGE(all_finite(big), "scores near ±1e4 give NaN or inf: subtract each row's max before exp");
}

TEST_CASE("07.2 source_padding_mask") {
  const float inf = std::numeric_limits<float>::infinity();
  LEARNER_CALL(m, ex07::source_padding_mask(3, 6, 4));
  REQUIRE_MESSAGE(m.shape(0) == 3, "one row per target position (T = 3), got " << m.shape(0) << " rows — rows are queries");
  REQUIRE_MESSAGE(m.shape(1) == 6, "one column per source position (S = 6), got " << m.shape(1) << " columns");
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      if (j < 4) CHECK_MESSAGE(m(i, j) == 0.0f, "source position " << j << " is a real word (valid = 4): its entry must be 0");
      else CHECK_MESSAGE(m(i, j) == -inf, "source position " << j << " is padding: its entry must be −∞ (not a large negative number)");
    }
  // Used in attention, padding gets weight 0 and the result equals attention over the real words only.
  attn::Rng rng(702);
  const Mat q = rng.normal_mat(3, 4), k = rng.normal_mat(6, 4), v = rng.normal_mat(6, 2);
  const attn::AttentionResult r = attn::scaled_dot_product_attention(q, k, v, m);
  const Mat k4 = xt::view(k, xt::range(0, 4), xt::all()), v4 = xt::view(v, xt::range(0, 4), xt::all());
  CHECK_MESSAGE(max_diff(r.output, attn::scaled_dot_product_attention(q, k4, v4).output) < 1e-5,
                "attention with your mask must equal attention over the first `valid` source words alone");
  LEARNER_CALL(none, ex07::source_padding_mask(2, 3, 3));
  CHECK_MESSAGE((none.shape(0) == 2 && none.shape(1) == 3 && xt::amax(xt::abs(none))() == 0.0f),
                "with valid = S nothing is padding: the mask is all zeros");
}

}  // TEST_SUITE
