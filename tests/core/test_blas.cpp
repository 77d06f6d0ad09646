// gemm, gemm_batched and sgemm against gemm_reference (double, three loops) on awkward sizes,
// every transpose combination, alpha/beta. Tolerance: float32 accumulation over K terms of
// products of N(0,1) values has error ~ K·2^-24·|x||y|; 1e-5·sqrt(K)·scale bounds it loosely.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;


TEST_CASE("gemm matches the naive reference for every transpose and awkward sizes") {
  Rng rng(11);
  for (std::size_t m : {1u, 7u, 33u, 129u})
    for (std::size_t k : {1u, 7u, 33u})
      for (std::size_t n : {1u, 33u, 129u})
        for (Op oa : {Op::N, Op::T})
          for (Op ob : {Op::N, Op::T}) {
            Mat a = oa == Op::N ? rng.normal_mat(m, k) : rng.normal_mat(k, m);
            Mat b = ob == Op::N ? rng.normal_mat(k, n) : rng.normal_mat(n, k);
            Mat c = matmul(a, b, oa, ob);
            CAPTURE(m); CAPTURE(k); CAPTURE(n);
            REQUIRE(c.shape(0) == m);
            REQUIRE(c.shape(1) == n);
            CHECK(max_abs_diff(c, gemm_reference(a, b, oa, ob)) < 1e-5 * std::sqrt(double(k)) * 8);
          }
}

TEST_CASE("gemm applies alpha and accumulates with beta") {
  Rng rng(3);
  Mat a = rng.normal_mat(7, 5), b = rng.normal_mat(5, 9), c0 = rng.normal_mat(7, 9);
  Mat c = c0;
  gemm(c, a, b, Op::N, Op::N, 0.5f, 2.0f);
  MatD ref = 0.5 * gemm_reference(a, b) + 2.0 * xt::cast<double>(c0);
  CHECK(max_abs_diff(c, ref) < 1e-5);
}

TEST_CASE("gemm rejects shapes that do not fit, naming the function and both shapes") {
  Mat a = xt::zeros<float>({3, 4}), b = xt::zeros<float>({5, 2});
  CHECK_THROWS_WITH_AS(matmul(a, b), doctest::Contains("gemm: op(a) (3, 4) and op(b) (5, 2)"), ShapeError);
  Mat c = xt::zeros<float>({2, 2});
  Mat bb = xt::zeros<float>({4, 2});
  CHECK_THROWS_AS(gemm(c, a, bb, Op::N, Op::N, 1.0f, 1.0f), ShapeError);
}

TEST_CASE("gemm_batched equals one gemm per slice") {
  Rng rng(5);
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T}) {
      Tensor3 a = oa == Op::N ? rng.normal_tensor3(3, 7, 33) : rng.normal_tensor3(3, 33, 7);
      Tensor3 b = ob == Op::N ? rng.normal_tensor3(3, 33, 5) : rng.normal_tensor3(3, 5, 33);
      Tensor3 c = matmul_batched(a, b, oa, ob, 0.25f);
      for (std::size_t h = 0; h < 3; ++h) {
        Mat ah = xt::view(a, h, xt::all(), xt::all());
        Mat bh = xt::view(b, h, xt::all(), xt::all());
        Mat ch = xt::view(c, h, xt::all(), xt::all());
        CHECK(max_abs_diff(ch, MatD(0.25 * gemm_reference(ah, bh, oa, ob))) < 1e-4);
      }
    }
  Tensor3 a = rng.normal_tensor3(2, 3, 4), b = rng.normal_tensor3(3, 4, 3);
  CHECK_THROWS_AS(matmul_batched(a, b), ShapeError);
}

TEST_CASE("ScopedBlasThreads: the asked count inside, the previous one after; 0 leaves it as set") {
  const int before = blas_info().threads;
  {
    const ScopedBlasThreads one(1);
    CHECK(blas_info().threads == 1);
    {
      const ScopedBlasThreads as_set(0);
      CHECK(blas_info().threads == 1);
    }
    CHECK(blas_info().threads == 1);
  }
  CHECK(blas_info().threads == before);
}
