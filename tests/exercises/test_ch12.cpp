// Chapter 12 exercise checks (solutions.cpp in ctest; the learner's exercises.cpp through
// `scripts/exercises check 12`). Each check compares with the library (attn/attention/ssd.hpp)
// and names the usual mistake. Tolerance 1e-5 (float32 values of order 1).
#include <cmath>

#include "attn/attention/ssd.hpp"
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"
#include "../../chapters/12_beyond_attention/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Vec;
using exercise_check::max_diff;

namespace {
double vdiff(const Vec& a, const Vec& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a(i) - b(i))));
  return std::isnan(d) ? INFINITY : d;
}
}  // namespace

TEST_SUITE("ch12") {

TEST_CASE("12.1 scan_step") {
  attn::Rng rng(121);
  const Mat h0 = rng.normal_mat(3, 4);
  const Vec b = rng.normal_vec(3), c = rng.normal_vec(3), x = rng.normal_vec(4);
  const float a = 0.6f;
  Mat mine = h0;
  LEARNER_CALL(y, ex12::scan_step(mine, a, b, c, x));
  Mat want_state = h0;
  const Vec want = attn::ssd_scan_step(want_state, a, b, c, x);
  REQUIRE_MESSAGE(y.size() == 4, "scan_step must return P = 4 values (one per column of the state)");
  REQUIRE_MESSAGE((mine.shape(0) == 3 && mine.shape(1) == 4), "update the state in place; keep its shape (N, P)");
  if (max_diff(mine, want_state) > 1e-5) {
    Mat no_decay = h0;
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 4; ++j) no_decay(i, j) += b(i) * x(j);
    if (max_diff(mine, no_decay) < 1e-5) FAIL("you forgot the decay: multiply the old state by a before adding b xᵀ");
    if (max_diff(mine, h0) < 1e-6) FAIL("the state did not change: write the update into `state` itself");
    FAIL("the new state should be a·h + b xᵀ (row i scales x by b(i))");
  }
  if (vdiff(y, want) > 1e-5) {
    Vec old_read = xt::zeros<float>({std::size_t(4)});
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 4; ++j) old_read(j) += h0(i, j) * c(i);
    if (vdiff(y, old_read) < 1e-5) FAIL("you read the OLD state: y = hᵀ c uses the state after this token's write");
    FAIL("y(j) should be Σ_i state(i, j)·c(i)");
  }
  // a = 1 and a zero state: the step is a plain outer product and its read
  Mat z = xt::zeros<float>({std::size_t(3), std::size_t(4)});
  LEARNER_CALL(y1, ex12::scan_step(z, 1.0f, b, c, x));
  Mat z2 = xt::zeros<float>({std::size_t(3), std::size_t(4)});
  CHECK(vdiff(y1, attn::ssd_scan_step(z2, 1.0f, b, c, x)) < 1e-5);
}

TEST_CASE("12.2 decay_mask") {
  const Vec log_a = {std::log(0.5f), std::log(0.8f), std::log(0.25f), std::log(0.9f), std::log(0.5f)};
  LEARNER_CALL(l, ex12::decay_mask(log_a));
  REQUIRE_MESSAGE((l.shape(0) == 5 && l.shape(1) == 5), "L is (T, T) = (5, 5)");
  const Mat want = attn::ssd_decay_mask(log_a);
  if (max_diff(l, want) > 1e-5) {
    for (std::size_t t = 0; t < 5; ++t)
      if (std::abs(l(t, t) - 1.0f) > 1e-5) FAIL("the diagonal must be 1: a token's own write is not decayed (L_tt = 1)");
    for (std::size_t t = 0; t < 5; ++t)
      for (std::size_t s = t + 1; s < 5; ++s)
        if (l(t, s) != 0.0f) FAIL("above the diagonal L is 0: a token never reads a later one");
    if (std::abs(l(1, 0) - 0.5f * 0.8f) < 1e-5) FAIL("off by one: L_10 = a_1 only, the decay of the token after s = 0 (a_0 is not in it)");
    if (std::abs(l(2, 0) - 0.8f * 0.25f) > 1e-5 && std::abs(l(2, 0) - 0.25f) < 1e-5)
      FAIL("multiply all decays from s + 1 up to t: L_20 = a_1·a_2");
    FAIL("L_ts = a_{s+1}·…·a_t below the diagonal");
  }
  // one token: the 1 × 1 mask [1]
  LEARNER_CALL(one, ex12::decay_mask(Vec{std::log(0.3f)}));
  CHECK(max_diff(one, Mat{{1.0f}}) < 1e-6);
}

}  // TEST_SUITE
