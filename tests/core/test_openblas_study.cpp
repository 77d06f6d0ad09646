// The OpenBLAS kernel rule, and the small study helpers chapter 03 measures with
// (√d_k scaling, softmax Jacobian norm, soft lookup, permutation, toy word vectors).
#include <doctest/doctest.h>

#include <cmath>

#include "attn/studies/lookup.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/studies/scaling.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/data/word_vectors.hpp"

using namespace attn;

TEST_CASE("better_openblas_coretype picks the kernel the CPU deserves") {
  CHECK(better_openblas_coretype("Prescott", true, true) == "SkylakeX");
  CHECK(better_openblas_coretype("Haswell", true, true) == "SkylakeX");
  CHECK(better_openblas_coretype("Prescott", false, true) == "Haswell");
  CHECK(better_openblas_coretype("Haswell", false, true).empty());
  CHECK(better_openblas_coretype("Zen", false, true).empty());
  CHECK(better_openblas_coretype("SkylakeX", true, true).empty());
  CHECK(better_openblas_coretype("Cooperlake", true, true).empty());
  CHECK(better_openblas_coretype("Prescott", false, false).empty());  // nothing better to offer
}

TEST_CASE("blas_info reports a kernel and a thread count") {
  const BlasInfo info = blas_info();
  CHECK_FALSE(info.kernel.empty());
  CHECK(info.threads >= 1);
  CHECK(info.config.find("OpenBLAS") != std::string::npos);
}

TEST_CASE("measure_scaling: Var(q·k) ≈ d_k raw and ≈ 1 scaled; scaled softmax does not saturate") {
  Rng rng(17);
  const ScalingRow small = measure_scaling(rng, 4, 16, 400);
  const ScalingRow big = measure_scaling(rng, 256, 16, 400);
  // 6400 samples: the sample variance's relative standard error is sqrt(2/6400)·√(kurtosis) ≈ 3%.
  CHECK(big.var_raw == doctest::Approx(256.0).epsilon(0.15));
  CHECK(big.var_scaled == doctest::Approx(1.0).epsilon(0.15));
  CHECK(small.var_raw == doctest::Approx(4.0).epsilon(0.2));
  CHECK(big.max_weight_raw > 0.8);
  CHECK(big.max_weight_scaled < 0.4);
  CHECK(big.grad_raw < big.grad_scaled / 2);
}

TEST_CASE("softmax_jacobian_norm: zero for one-hot, sqrt((n−1)/n²·…) for uniform") {
  CHECK(softmax_jacobian_norm(Vec{1.0f, 0.0f, 0.0f}) == doctest::Approx(0.0));
  // uniform p = 1/n: diagonal entries 1/n − 1/n², off-diagonal −1/n².
  const double n = 4, diag = 1 / n - 1 / (n * n), off = 1 / (n * n);
  CHECK(softmax_jacobian_norm(Vec{0.25f, 0.25f, 0.25f, 0.25f}) ==
        doctest::Approx(std::sqrt(n * diag * diag + n * (n - 1) * off * off)));
  CHECK(sample_variance({1.0, 2.0, 3.0, 4.0}) == doctest::Approx(1.6666666667));
}

TEST_CASE("soft_lookup becomes a hard lookup as τ → 0") {
  const Mat keys = {{1.0f, 0.0f}, {0.0f, 1.0f}, {-1.0f, 0.0f}};
  const Mat values = {{10.0f}, {20.0f}, {30.0f}};
  const Vec q = {0.1f, 0.9f};
  const SoftLookup hot = soft_lookup(q, keys, values, 100.0f);
  const SoftLookup cold = soft_lookup(q, keys, values, 0.001f);
  CHECK(cold.best == 1);
  CHECK(cold.output(0) == doctest::Approx(20.0f));
  CHECK(hot.output(0) == doctest::Approx(20.0f).epsilon(0.05));  // near the mean of the values
  CHECK(hot.weights(0) > 0.3f);
  CHECK_THROWS_AS(soft_lookup(q, keys, values, 0.0f), std::invalid_argument);
  CHECK_THROWS_AS(soft_lookup(Vec{1.0f}, keys, values, 1.0f), ShapeError);
}

TEST_CASE("permute_rows, word vectors and split_words") {
  const Mat x = {{1.0f}, {2.0f}, {3.0f}};
  CHECK(permute_rows(x, {2, 0, 1}) == Mat{{3.0f}, {1.0f}, {2.0f}});
  CHECK_THROWS_AS(permute_rows(x, {0, 1}), ShapeError);
  CHECK(split_words("  the cat  eats ") == Labels{"the", "cat", "eats"});
  const Mat a = word_vectors({"cat", "fish"}, 4, 7), b = word_vectors({"fish", "cat"}, 4, 7);
  CHECK(max_abs_diff(row_of(a, 0), row_of(b, 1)) == 0.0);  // same word, same vector, any position
  CHECK(max_abs_diff(row_of(a, 0), row_of(a, 1)) > 0.1);
  CHECK(fnv1a("") == 14695981039346656037ULL);
  CHECK(fnv1a("a") == 0xaf63dc4c8601ec8cULL);  // FNV-1a 64 test vector
}
