// Chapter 11's fused kernel (attn/attention/fast_attention.hpp) against attention_reference (double loops).
// Map: 1. both paths (AVX-512, portable) on awkward sizes, causal and not; 2. tile sizes that do
// not divide n; 3. rectangular S > N (a cache) and S < N (rows that see nothing); 4. extreme
// logits; 5. the naive three-pass baseline; 6. the flop count.
// Tolerance: float32 accumulation over S keys and d products, plus the kernel's polynomial exp2
// (relative error ~2e-7): observed errors are ~1e-7..1e-6 for unit-normal inputs; 2e-5 absolute
// (outputs are weighted means of N(0,1) values, |o| < 4) leaves a 10x margin without hiding a
// wrong mask or a missed rescale (those give errors ~1e-1).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "attn/attention/attention.hpp"
#include "attn/attention/fast_attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"

using namespace attn;

namespace {

// Max |fast − reference| over every head; the reference runs per head in double.
double max_err_vs_reference(const Tensor3& out, const Tensor3& q, const Tensor3& k, const Tensor3& v, bool causal) {
  double err = 0.0;
  const std::size_t n = q.shape(1), s = k.shape(1);
  // causal_mask needs S >= N; with fewer keys, build the same rule (j <= i + S − N) here.
  Mat mask;
  if (causal) {
    mask = xt::zeros<float>({n, s});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < s; ++j)
        if (std::ptrdiff_t(j) > std::ptrdiff_t(i) + std::ptrdiff_t(s) - std::ptrdiff_t(n))
          mask(i, j) = -std::numeric_limits<float>::infinity();
  }
  for (std::size_t h = 0; h < q.shape(0); ++h) {
    Mat qh = xt::view(q, h), kh = xt::view(k, h), vh = xt::view(v, h);
    MatD ref = attention_reference(qh, kh, vh, mask);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < q.shape(2); ++c) err = std::max(err, std::abs(double(out(h, i, c)) - ref(i, c)));
  }
  return err;
}

std::vector<FastIsa> paths() {
  std::vector<FastIsa> p{FastIsa::Portable};
  if (fast_attention_avx512_available()) p.push_back(FastIsa::Avx512);
  return p;
}

std::string name(FastIsa isa) { return isa == FastIsa::Avx512 ? "avx512" : "portable"; }

}  // namespace

TEST_CASE("fast attention equals the reference on awkward sizes, causal and not, on every path") {
  if (!fast_attention_avx512_available()) MESSAGE("this CPU lacks AVX-512: only the portable path is tested");
  Rng rng(2024);
  for (FastIsa isa : paths())
    for (std::size_t n : {1u, 7u, 33u, 129u, 1000u})
      for (std::size_t d : {64u, 128u, 7u})
        for (bool causal : {false, true}) {
          if (n == 1000 && d == 7) continue;  // covered by smaller n; keeps the reference fast
          const std::size_t bh = n >= 1000 ? 1 : 3;
          Tensor3 q = rng.normal_tensor3(bh, n, d), k = rng.normal_tensor3(bh, n, d), v = rng.normal_tensor3(bh, n, d);
          FastAttentionConfig cfg;
          cfg.causal = causal;
          cfg.isa = isa;
          Tensor3 out = fast_attention(q, k, v, cfg);
          CAPTURE(name(isa)); CAPTURE(n); CAPTURE(d); CAPTURE(causal);
          CHECK(max_err_vs_reference(out, q, k, v, causal) < 2e-5);
        }
}

TEST_CASE("fast attention is exact for tile sizes that do not divide n, and for any thread count") {
  Rng rng(7);
  const std::size_t n = 203, d = 40;  // 203 = 7·29: no tile divides it; d = 40 is not a multiple of 16
  Tensor3 q = rng.normal_tensor3(2, n, d), k = rng.normal_tensor3(2, n, d), v = rng.normal_tensor3(2, n, d);
  for (FastIsa isa : paths())
    for (int bq : {12, 36, 96, 204})
      for (int bk : {32, 64, 96, 224})
        for (bool causal : {false, true})
          for (int threads : {1, 3}) {
            FastAttentionConfig cfg{causal, 0.0f, threads, isa, bq, bk};
            CAPTURE(name(isa)); CAPTURE(bq); CAPTURE(bk); CAPTURE(causal); CAPTURE(threads);
            CHECK(max_err_vs_reference(fast_attention(q, k, v, cfg), q, k, v, causal) < 2e-5);
          }
}

TEST_CASE("fast attention with more keys than queries (a cache) and fewer (rows that see nothing)") {
  Rng rng(9);
  for (FastIsa isa : paths())
    for (auto [n, s] : {std::pair<std::size_t, std::size_t>{5, 300}, {77, 33}, {1, 1000}})
      for (bool causal : {false, true}) {
        Tensor3 q = rng.normal_tensor3(2, n, 64), k = rng.normal_tensor3(2, s, 64), v = rng.normal_tensor3(2, s, 64);
        FastAttentionConfig cfg;
        cfg.causal = causal;
        cfg.isa = isa;
        Tensor3 out = fast_attention(q, k, v, cfg);
        CAPTURE(name(isa)); CAPTURE(n); CAPTURE(s); CAPTURE(causal);
        CHECK(max_err_vs_reference(out, q, k, v, causal) < 2e-5);
        // With S < N and a causal mask, the first N − S queries see no key: zeros, never NaN.
        if (causal && s < n) CHECK(out(0, 0, 0) == 0.0f);
      }
}

TEST_CASE("fast attention stays finite and exact with logits of ±1e4") {
  Rng rng(5);
  Tensor3 q = rng.normal_tensor3(1, 70, 16) * 300.0f, k = rng.normal_tensor3(1, 70, 16) * 300.0f;
  Tensor3 v = rng.normal_tensor3(1, 70, 16);
  for (FastIsa isa : paths()) {
    FastAttentionConfig cfg{true, 0.0f, 2, isa, 12, 32};
    Tensor3 out = fast_attention(q, k, v, cfg);
    CAPTURE(name(isa));
    CHECK(xt::all(xt::isfinite(out)));
    // Near-one-hot weights: float32 rounding of logits ~1e4 (ulp ~1e-3) moves weights by ~1e-3.
    CHECK(max_err_vs_reference(out, q, k, v, true) < 5e-3);
  }
}

TEST_CASE("the naive three-pass baseline equals the reference") {
  Rng rng(3);
  for (bool causal : {false, true}) {
    Tensor3 q = rng.normal_tensor3(3, 129, 33), k = rng.normal_tensor3(3, 129, 33), v = rng.normal_tensor3(3, 129, 33);
    CAPTURE(causal);
    CHECK(max_err_vs_reference(naive_attention(q, k, v, causal), q, k, v, causal) < 2e-5);
  }
}

TEST_CASE("attention flop count: 4·N·S·d per head, causal counts visible pairs") {
  CHECK(attention_forward_flops(8, 1024, 1024, 64, false) == doctest::Approx(4.0 * 8 * 1024 * 1024 * 64));
  CHECK(attention_forward_flops(1, 4, 4, 1, true) == doctest::Approx(4.0 * 10));  // 1 + 2 + 3 + 4 pairs
}

TEST_CASE("fast attention rejects shapes that do not fit") {
  Tensor3 q = xt::zeros<float>({2, 5, 8}), k = xt::zeros<float>({2, 6, 8}), v = xt::zeros<float>({2, 6, 4});
  CHECK_THROWS_AS(fast_attention(q, k, v), ShapeError);
}
