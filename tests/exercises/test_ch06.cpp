// Chapter 06 exercise checks (against solutions.cpp in ctest, against the learner's exercises.cpp
// through `scripts/exercises check 06`). Each failure names the usual mistake.
// Tolerances: float32 sums of <= 40 exponentials vs double references: 1e-5 relative.
#include <cmath>
#include <limits>
#include <vector>

#include "../../chapters/06_efficient_attention/exercises.hpp"  // by path: every chapter has an exercises.hpp
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"

using attn::Mat;

using exercise_check::kInf;

TEST_SUITE("ch06") {

TEST_CASE("06.1 online_softmax_update") {
  attn::Rng rng(61);
  std::vector<float> x(40);
  for (float& a : x) a = 3.0f * rng.normal();
  double m_ref = -1e300, l_ref = 0;
  for (float a : x) m_ref = std::max(m_ref, double(a));
  for (float a : x) l_ref += std::exp(double(a) - m_ref);
  for (std::size_t tile : {1u, 7u, 40u}) {
    float m = -kInf, l = 0.0f;
    for (std::size_t b = 0; b < x.size(); b += tile) {
      float m_before = m;
      LEARNER_CALL(alpha, ex06::online_softmax_update(m, l, x.data() + b, std::min(tile, x.size() - b)));
      if (b == 0) CHECK_MESSAGE(alpha == 0.0f, "the first tile has nothing before it to rescale: α must be 0 (exp(−∞ − m))");
      else CHECK_MESSAGE(std::abs(alpha - std::exp(m_before - m)) < 1e-6, "α must be exp(m_old − m_new), computed with the NEW max");
    }
    CAPTURE(tile);
    CHECK_MESSAGE(std::abs(m - m_ref) < 1e-6, "m must end as the max of all logits: m_new = max(m_old, max of the tile)");
    if (std::abs(l - l_ref) / l_ref > 1e-5 && tile < 40)
      FAIL("l is right for one tile but not for several: multiply the old l by α = exp(m_old − m_new) before adding");
    CHECK_MESSAGE(std::abs(l - l_ref) / l_ref < 1e-5, "l must be Σ exp(x_j − m) over every logit seen, relative to the final m");
  }
  // Masked logits: exp(−∞) = 0, and a fully masked start must not produce NaN.
  float m = -kInf, l = 0.0f;
  const float masked[2] = {-kInf, -kInf};
  LEARNER_CALL(a0, ex06::online_softmax_update(m, l, masked, 2));
  CHECK_MESSAGE(!std::isnan(l), "a tile of only −∞ gave NaN: when the new max is −∞ there is nothing to add — return early");
  CHECK_MESSAGE(a0 == 1.0f, "with nothing visible yet α should be 1 (nothing to rescale)");
  const float some[2] = {-kInf, 2.0f};
  LEARNER_CALL(a1, ex06::online_softmax_update(m, l, some, 2));
  CHECK_MESSAGE((m == 2.0f && std::abs(l - 1.0f) < 1e-6), "after [−∞, 2]: m = 2 and l = exp(0) = 1 (the −∞ entry adds 0)");
  (void)a1;
}

TEST_CASE("06.2 sliding_window_mask") {
  LEARNER_CALL(m, ex06::sliding_window_mask(6, 3));
  REQUIRE_MESSAGE((m.shape(0) == 6 && m.shape(1) == 6), "the mask must be (n, n)");
  CHECK_MESSAGE(std::isinf(m(2, 3)), "query 2 sees key 3? the window is causal: never a key after the query (j > i)");
  CHECK_MESSAGE(m(5, 5) == 0.0f, "a query must see itself (j = i)");
  CHECK_MESSAGE(m(5, 3) == 0.0f, "w = 3: query 5 sees keys 3, 4, 5");
  CHECK_MESSAGE(std::isinf(m(5, 2)), "w = 3: query 5 must not see key 2 — the window is w keys including itself, not w + 1");
  CHECK_MESSAGE(m(0, 0) == 0.0f, "query 0 sees key 0 (with unsigned i − w you may have underflowed: compare j + w > i)");
  for (float a : m) CHECK_MESSAGE((a == 0.0f || (std::isinf(a) && a < 0)), "entries must be 0 or −∞ (additive mask), not 1/0");
  LEARNER_CALL(full, ex06::sliding_window_mask(7, 7));
  CHECK_MESSAGE(xt::all(xt::equal(full, attn::causal_mask(7))), "w >= n must be exactly the causal mask");
}

}  // TEST_SUITE
