// The selective SSM three ways (attn/attention/ssd.hpp) against the float64 scan, and the delta
// rule. Map: decay mask by hand · scan step · three forms on awkward sizes (T = 1, T not a multiple
// of the chunk, chunk 1, chunk ≥ T) · bad inputs · delta rule overwrite and reference.
// Tolerance 1e-5: float32 forms of values of order 1 over ≤ 37 tokens; a wrong decay or a missing
// block term is off by 1e-2 or more.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/attention/ssd.hpp"
#include "attn/tensor/rng.hpp"

using namespace attn;

namespace {
double ssd_max_diff(const Mat& a, const MatD& b) {
  REQUIRE(a.shape(0) == b.shape(0));
  REQUIRE(a.shape(1) == b.shape(1));
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(double(a.data()[i]) - b.data()[i]));
  return d;
}
struct SsdCase {
  Mat x, b, c;
  Vec log_a;
};
SsdCase ssd_make_case(std::size_t t, std::size_t n, std::size_t p, std::uint64_t seed) {
  Rng rng(seed);
  SsdCase s{rng.normal_mat(t, p), rng.normal_mat(t, n, 0.5f), rng.normal_mat(t, n, 0.5f), Vec::from_shape({t})};
  for (auto& la : s.log_a) la = -rng.uniform(0.01f, 1.0f);
  return s;
}
}  // namespace

TEST_CASE("ssd decay mask: L_ts = a_{s+1}…a_t below the diagonal, 1 on it, 0 above") {
  const Vec log_a = {std::log(0.5f), std::log(0.5f), std::log(0.25f)};
  const Mat l = ssd_decay_mask(log_a);
  CHECK(l(0, 0) == doctest::Approx(1.0));
  CHECK(l(1, 0) == doctest::Approx(0.5));
  CHECK(l(2, 0) == doctest::Approx(0.125));  // a_1·a_2 = 0.5·0.25
  CHECK(l(2, 1) == doctest::Approx(0.25));
  CHECK(l(0, 1) == 0.0f);
  CHECK(l(1, 2) == 0.0f);
}

TEST_CASE("ssd scan step: one step of h ← a·h + b xᵀ, y = hᵀ c, by hand") {
  Mat h = {{1.0f, 2.0f}};  // N = 1, P = 2
  const Vec y = ssd_scan_step(h, 0.5f, Vec{2.0f}, Vec{3.0f}, Vec{1.0f, -1.0f});
  CHECK(h(0, 0) == doctest::Approx(2.5));   // 0.5·1 + 2·1
  CHECK(h(0, 1) == doctest::Approx(-1.0));  // 0.5·2 + 2·(−1)
  CHECK(y(0) == doctest::Approx(7.5));
  CHECK(y(1) == doctest::Approx(-3.0));
}

TEST_CASE("ssd: scan, quadratic and chunked agree with the float64 scan within 1e-5") {
  struct Size { std::size_t t, n, p, chunk; };
  for (Size s : {Size{1, 3, 5, 4}, Size{7, 3, 5, 3}, Size{13, 4, 2, 4}, Size{16, 2, 3, 16}, Size{5, 3, 3, 8},
                 Size{37, 5, 7, 1}, Size{37, 5, 7, 10}}) {
    CAPTURE(s.t);
    CAPTURE(s.chunk);
    const SsdCase c = ssd_make_case(s.t, s.n, s.p, 100 + s.t + s.chunk);
    const MatD ref = ssd_reference(c.x, c.b, c.c, c.log_a);
    Mat final_state;
    CHECK(ssd_max_diff(ssd_scan(c.x, c.b, c.c, c.log_a, &final_state), ref) < 1e-5);
    CHECK(ssd_max_diff(ssd_quadratic(c.x, c.b, c.c, c.log_a), ref) < 1e-5);
    CHECK(ssd_max_diff(ssd_chunked(c.x, c.b, c.c, c.log_a, s.chunk), ref) < 1e-5);
    CHECK(final_state.shape(0) == s.n);
    CHECK(final_state.shape(1) == s.p);
  }
}

TEST_CASE("ssd: without decay (a = 1) the quadratic form is causal (C Bᵀ) X, unnormalised linear attention") {
  SsdCase c = ssd_make_case(6, 3, 4, 7);
  c.log_a.fill(0.0f);
  Mat m = xt::zeros<float>({std::size_t(6), std::size_t(6)});
  for (std::size_t t = 0; t < 6; ++t)
    for (std::size_t s = 0; s <= t; ++s)
      for (std::size_t i = 0; i < 3; ++i) m(t, s) += c.c(t, i) * c.b(s, i);
  MatD want = xt::zeros<double>({std::size_t(6), std::size_t(4)});
  for (std::size_t t = 0; t < 6; ++t)
    for (std::size_t s = 0; s < 6; ++s)
      for (std::size_t j = 0; j < 4; ++j) want(t, j) += double(m(t, s)) * c.x(s, j);
  CHECK(ssd_max_diff(ssd_scan(c.x, c.b, c.c, c.log_a), want) < 1e-5);
}

TEST_CASE("ssd: bad inputs are refused with the function's name") {
  const SsdCase c = ssd_make_case(4, 2, 3, 1);
  Vec up = c.log_a;
  up(2) = 0.1f;  // a > 1 would grow without bound
  CHECK_THROWS_WITH_AS(ssd_scan(c.x, c.b, c.c, up), doctest::Contains("ssd_scan: log_a must be ≤ 0"),
                       std::invalid_argument);
  const Mat short_b = xt::view(c.b, xt::range(0, 3), xt::all());
  CHECK_THROWS_AS(ssd_quadratic(c.x, short_b, c.c, c.log_a), ShapeError);
  CHECK_THROWS_AS(ssd_chunked(c.x, c.b, c.c, c.log_a, 0), std::invalid_argument);
}

TEST_CASE("delta rule: a unit key written twice with β = 1 reads back its latest value") {
  const float r = std::sqrt(0.5f);
  const Mat k = {{1, 0}, {0, 1}, {1, 0}, {r, r}};
  const Mat v = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {0, 0, 0}};
  const Vec beta = {1, 1, 1, 0};  // the last token only reads
  const Mat q = {{1, 0}, {0, 1}, {1, 0}, {1, 0}};
  const Mat y = delta_rule_scan(q, k, v, beta);
  CHECK(y(2, 0) == doctest::Approx(7.0));  // overwritten: 7, not 1 + 7
  CHECK(y(3, 2) == doctest::Approx(9.0));
  // the same scan written in double, step by step, on random inputs
  Rng rng(5);
  const Mat qq = rng.normal_mat(9, 3), kk = rng.normal_mat(9, 3, 0.5f), vv = rng.normal_mat(9, 4);
  Vec bb = Vec::from_shape({9});
  for (auto& x : bb) x = rng.uniform(0.0f, 1.0f);
  MatD s = xt::zeros<double>({std::size_t(3), std::size_t(4)}), want = xt::zeros<double>({std::size_t(9), std::size_t(4)});
  for (std::size_t t = 0; t < 9; ++t) {
    for (std::size_t j = 0; j < 4; ++j) {
      double read = 0;
      for (std::size_t i = 0; i < 3; ++i) read += s(i, j) * kk(t, i);
      for (std::size_t i = 0; i < 3; ++i) s(i, j) += bb(t) * kk(t, i) * (vv(t, j) - read);
    }
    for (std::size_t j = 0; j < 4; ++j)
      for (std::size_t i = 0; i < 3; ++i) want(t, j) += s(i, j) * qq(t, i);
  }
  CHECK(ssd_max_diff(delta_rule_scan(qq, kk, vv, bb), want) < 1e-5);
}
