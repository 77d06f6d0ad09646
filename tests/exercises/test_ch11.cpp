// Chapter 11 exercise checks (against solutions.cpp in ctest, against the learner's exercises.cpp
// through `scripts/exercises check 11`). Each failure names the usual mistake.
// Tolerance: float32 accumulation over <= 50 keys of N(0, 1) values vs double: 1e-5.
#include <cmath>
#include <limits>
#include <vector>

#include "../../chapters/11_fast_attention/exercises.hpp"  // by path: every chapter has an exercises.hpp
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"

TEST_SUITE("ch11") {

TEST_CASE("11.1 tile_update") {
  attn::Rng rng(111);
  const std::size_t n = 50, d = 5;
  std::vector<float> s(n), v(n * d);
  for (float& a : s) a = 2.0f * rng.normal();
  for (float& a : v) a = rng.normal();
  s[37] = 9.0f;  // a much larger score late: the accumulator must be rescaled
  std::vector<double> ref(d, 0.0);
  double mx = -1e300, sum = 0;
  for (float a : s) mx = std::max(mx, double(a));
  for (std::size_t j = 0; j < n; ++j) {
    const double p = std::exp(double(s[j]) - mx);
    sum += p;
    for (std::size_t c = 0; c < d; ++c) ref[c] += p * v[j * d + c];
  }
  for (std::size_t tile : {50u, 8u, 1u}) {
    float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
    std::vector<float> o(d, 0.0f);
    for (std::size_t b = 0; b < n; b += tile) {
      try {
        ex11::tile_update(m, l, o.data(), s.data() + b, v.data() + b * d, std::min(tile, n - b), d);
      } catch (const attn::NotImplemented& e) {
        FAIL(std::string(e.what()));
      }
    }
    CAPTURE(tile);
    REQUIRE_MESSAGE(std::isfinite(l), "l is not finite: subtract the running max before exp (and α = 0 on the first tile)");
    CHECK_MESSAGE(std::abs(m - mx) < 1e-6, "m must end as the largest score");
    if (tile < 50 && std::abs(l - sum) / sum > 1e-4)
      FAIL("right with one tile, wrong with several: rescale l AND o by exp(m_old − m_new) before adding the tile");
    CHECK_MESSAGE(std::abs(l - sum) / sum < 1e-5, "l must be Σ exp(s_j − m)");
    double err = 0;
    for (std::size_t c = 0; c < d; ++c) err = std::max(err, std::abs(o[c] / l - ref[c] / sum));
    CHECK_MESSAGE(err < 1e-5, "o / l differs from the attention output: o accumulates exp(s_j − m_new)·v_j, rescaled by α first");
  }
}

TEST_CASE("11.2 causal_tile_kind") {
  LEARNER_CALL(first, ex11::causal_tile_kind(0, 4, 4, 4));  // a stub stops here with its hint
  (void)first;
  auto kind = [](std::size_t i0, std::size_t rows, std::size_t j0, std::size_t cols) {
    return ex11::causal_tile_kind(i0, rows, j0, cols);
  };
  CHECK_MESSAGE(kind(0, 4, 4, 4) == 0, "queries 0–3 and keys 4–7: no query sees any key — skip (0)");
  CHECK_MESSAGE(kind(0, 4, 3, 4) == 1, "queries 0–3 and keys 3–6: query 3 sees key 3 — partial (1), not skip: check j0 > LAST query");
  CHECK_MESSAGE(kind(8, 4, 0, 4) == 2, "queries 8–11 and keys 0–3: all visible — full (2)");
  CHECK_MESSAGE(kind(4, 4, 0, 5) == 2, "queries 4–7 and keys 0–4: even query 4 sees key 4 — full (2): use <=, j = i is visible");
  CHECK_MESSAGE(kind(4, 4, 0, 6) == 1, "queries 4–7 and keys 0–5: query 4 cannot see key 5 — partial (1)");
  CHECK_MESSAGE(kind(4, 4, 4, 4) == 1, "a diagonal tile is partial (1)");
  // Brute force over small blocks.
  for (std::size_t i0 = 0; i0 < 9; ++i0)
    for (std::size_t j0 = 0; j0 < 9; ++j0)
      for (std::size_t r = 1; r < 4; ++r)
        for (std::size_t c = 1; c < 4; ++c) {
          std::size_t seen = 0;
          for (std::size_t i = i0; i < i0 + r; ++i)
            for (std::size_t j = j0; j < j0 + c; ++j) seen += j <= i;
          const int want = seen == 0 ? 0 : seen == r * c ? 2 : 1;
          CAPTURE(i0); CAPTURE(r); CAPTURE(j0); CAPTURE(c);
          CHECK(kind(i0, r, j0, c) == want);
        }
}

}  // TEST_SUITE
