// Chapter 03 exercise checks (runs against solutions.cpp in ctest, against the learner's
// exercises.cpp through `scripts/exercises check 03`). Each failure message names the usual
// mistake. Tolerances: float32 results vs double references, values O(1): 1e-5.
#include <limits>

#include "attn/attention/attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/softmax.hpp"
#include "exercise_check.hpp"
#include "03_self_attention/exercises.hpp"

using attn::Mat;
using exercise_check::all_finite;
using exercise_check::max_diff;

using exercise_check::kInf;

TEST_SUITE("ch03") {

TEST_CASE("03.1 softmax_rows") {
  attn::Rng rng(31);
  const Mat x = rng.normal_mat(5, 7, 2.0f);
  LEARNER_CALL(y, ex03::softmax_rows(x));
  REQUIRE_MESSAGE(y.shape(0) == 5, "the result must have the input's shape (5, 7)");
  REQUIRE_MESSAGE(y.shape(1) == 7, "the result must have the input's shape (5, 7)");
  for (std::size_t i = 0; i < 5; ++i) {
    double row = 0.0, col = 0.0;
    for (std::size_t j = 0; j < 7; ++j) row += y(i, j);
    for (std::size_t r = 0; r < 5; ++r) col += y(r, i);
    if (std::abs(col - 1.0) < 1e-4 && std::abs(row - 1.0) > 1e-3)
      FAIL("columns sum to 1 but rows do not: normalise along each row (over j), not each column");
    CHECK_MESSAGE(std::abs(row - 1.0) < 1e-5, "row " << i << " sums to " << row << ", not 1: did you divide by the row sum after exp?");
  }
  CHECK_MESSAGE(max_diff(y, xt::cast<float>(attn::softmax_reference(x))) < 1e-5,
                "values differ from softmax: exp(x_j − max) / Σ_k exp(x_k − max)");

  const Mat big = {{1000.0f, 1001.0f, 999.0f}, {-1e4f, 1e4f, 0.0f}};
  LEARNER_CALL(yb, ex03::softmax_rows(big));
  CHECK_MESSAGE(all_finite(yb), "NaN or inf for logits near 1000: subtract the row max before exp");
  CHECK_MESSAGE(max_diff(yb, xt::cast<float>(attn::softmax_reference(big))) < 1e-5, "large logits give wrong weights");

  const Mat masked = {{0.5f, -kInf, 1.5f}, {-kInf, -kInf, -kInf}};
  LEARNER_CALL(ym, ex03::softmax_rows(masked));
  CHECK_MESSAGE(ym(0, 1) == 0.0f, "a −∞ logit must get weight exactly 0");
  CHECK_MESSAGE(all_finite(ym), "a row of all −∞ must give zeros, not NaN: check for a masked row before dividing");
  CHECK_MESSAGE((ym(1, 0) == 0.0f && ym(1, 1) == 0.0f && ym(1, 2) == 0.0f), "a fully masked row must be all zeros");
}

TEST_CASE("03.2 causal_mask") {
  for (std::size_t n : {1u, 2u, 5u}) {
    LEARNER_CALL(m, ex03::causal_mask(n));
    REQUIRE_MESSAGE((m.shape(0) == n && m.shape(1) == n), "causal_mask(" << n << ") must be " << n << "×" << n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) CHECK_MESSAGE(m(i, j) == 0.0f, "a word must see itself: the diagonal must be 0");
        if (j < i) CHECK_MESSAGE(m(i, j) == 0.0f, "the past (j < i, below the diagonal) must be 0 — did you mask the wrong triangle?");
        if (j > i) CHECK_MESSAGE(m(i, j) == -kInf, "the future (j > i, above the diagonal) must be −∞ (not a large negative number)");
      }
  }
}

TEST_CASE("03.3 attention") {
  attn::Rng rng(33);
  // T != S and d_k != d_v catch transposed products.
  const Mat q = rng.normal_mat(3, 8), k = rng.normal_mat(5, 8), v = rng.normal_mat(5, 2);
  LEARNER_CALL(out, ex03::attention(q, k, v, Mat{}));
  REQUIRE_MESSAGE((out.shape(0) == 3 && out.shape(1) == 2), "output must be (T, d_v) = (3, 2)");
  const Mat ref = xt::cast<float>(attn::attention_reference(q, k, v));
  if (max_diff(out, ref) > 1e-5) {
    if (max_diff(out, xt::cast<float>(attn::attention_reference(q, k, v, {}, 1.0))) < 1e-5)
      FAIL("matches softmax(q·kᵀ)·v without scaling: divide the scores by √d_k");
    if (max_diff(out, xt::cast<float>(attn::attention_reference(q, k, v, {}, 1.0 / 8.0))) < 1e-5)
      FAIL("matches division by d_k: the scale is 1/√d_k, not 1/d_k");
    FAIL("output differs from softmax(q·kᵀ/√d_k)·v by " << max_diff(out, ref)
                                                       << ": check that softmax runs over keys (each row) and that you multiply by v");
  }
  // With a causal mask (square case) the first query sees only the first key: output row 0 = v row 0.
  const Mat q4 = rng.normal_mat(4, 8), k4 = rng.normal_mat(4, 8), v4 = rng.normal_mat(4, 3);
  const Mat mask = attn::causal_mask(4);
  LEARNER_CALL(outm, ex03::attention(q4, k4, v4, mask));
  CHECK_MESSAGE(max_diff(outm, xt::cast<float>(attn::attention_reference(q4, k4, v4, mask))) < 1e-5,
                "with a mask, add it to the scaled scores before softmax");
}

}  // TEST_SUITE
