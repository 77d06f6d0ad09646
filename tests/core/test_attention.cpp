// Scaled dot-product attention (BLAS path) against the loop reference in double, on awkward
// sizes, with causal and padding masks, per head, and the shape contract. Tolerance 1e-5:
// inputs N(0, 1), outputs O(1), float32 accumulation over ≤ 129 terms.
#include <doctest/doctest.h>

#include <limits>

#include "attn/attention/attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

TEST_CASE("attention matches the reference on awkward sizes, with and without a causal mask") {
  Rng rng(9);
  for (std::size_t t : {1u, 7u, 33u, 129u})
    for (std::size_t d : {1u, 7u, 33u}) {
      CAPTURE(t); CAPTURE(d);
      const Mat q = rng.normal_mat(t, d), k = rng.normal_mat(t, d), v = rng.normal_mat(t, 5);
      CHECK(max_abs_diff(scaled_dot_product_attention(q, k, v).output, attention_reference(q, k, v)) < 1e-5);
      const Mat m = causal_mask(t);
      CHECK(max_abs_diff(scaled_dot_product_attention(q, k, v, m).output, attention_reference(q, k, v, m)) < 1e-5);
    }
}

TEST_CASE("attention with T != S and an explicit scale") {
  Rng rng(10);
  const Mat q = rng.normal_mat(3, 8), k = rng.normal_mat(11, 8), v = rng.normal_mat(11, 4);
  const AttentionResult r = scaled_dot_product_attention(q, k, v, {}, 1.0f);
  CHECK(max_abs_diff(r.output, attention_reference(q, k, v, {}, 1.0)) < 1e-5);
  CHECK(r.scores.shape(0) == 3);
  CHECK(r.scores.shape(1) == 11);
  // A cache-style causal mask: 3 new queries after 8 cached keys.
  const Mat m = causal_mask(3, 11);
  CHECK(m(0, 8) == 0.0f);
  CHECK(std::isinf(m(0, 9)));
  CHECK(max_abs_diff(scaled_dot_product_attention(q, k, v, m).output, attention_reference(q, k, v, m)) < 1e-5);
}

TEST_CASE("a padding mask hides keys; a fully masked query gives a zero row") {
  Rng rng(12);
  const Mat q = rng.normal_mat(2, 4), k = rng.normal_mat(3, 4), v = rng.normal_mat(3, 2);
  const Mat m = padding_mask(2, {true, false, true});
  const AttentionResult r = scaled_dot_product_attention(q, k, v, m);
  CHECK(r.weights(0, 1) == 0.0f);
  CHECK(max_abs_diff(r.output, attention_reference(q, k, v, m)) < 1e-5);
  const AttentionResult none = scaled_dot_product_attention(q, k, v, padding_mask(2, {false, false, false}));
  CHECK(max_abs_diff(none.output, Mat(xt::zeros<float>({2, 2}))) == 0.0);
}

TEST_CASE("per-head attention equals single-head attention on each slice") {
  Rng rng(13);
  const Tensor3 q = rng.normal_tensor3(4, 7, 8), k = rng.normal_tensor3(4, 9, 8), v = rng.normal_tensor3(4, 9, 3);
  const Mat m = causal_mask(7, 9);
  const AttentionResult3 r = scaled_dot_product_attention(q, k, v, m);
  for (std::size_t h = 0; h < 4; ++h) {
    const AttentionResult one = scaled_dot_product_attention(slice_of(q, h), slice_of(k, h), slice_of(v, h), m);
    CHECK(max_abs_diff(slice_of(r.output, h), one.output) < 1e-6);
    CHECK(max_abs_diff(slice_of(r.weights, h), one.weights) < 1e-6);
  }
}

TEST_CASE("attention names the function and the shapes that do not fit") {
  const Mat q = xt::zeros<float>({3, 4}), k = xt::zeros<float>({5, 6}), v = xt::zeros<float>({5, 2});
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, v), doctest::Contains("scaled_dot_product_attention: q (3, 4) and k (5, 6)"), ShapeError);
  const Mat k2 = xt::zeros<float>({5, 4}), v2 = xt::zeros<float>({6, 2});
  CHECK_THROWS_AS(scaled_dot_product_attention(q, k2, v2), ShapeError);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k2, Mat(xt::zeros<float>({5, 2})), causal_mask(3)),
                       doctest::Contains("mask has shape (3, 3), expected (3, 5)"), ShapeError);
}

TEST_CASE("self_attention projects with right-multiplied weights") {
  Rng rng(14);
  const Mat x = rng.normal_mat(5, 8);
  const SelfAttentionWeights w = init_self_attention(rng, 8, 4, 3);
  const SelfAttentionTrace t = self_attention(x, w);
  CHECK(t.q.shape(1) == 4);
  CHECK(t.v.shape(1) == 3);
  CHECK(max_abs_diff(t.attn.output, attention_reference(t.q, t.k, t.v)) < 1e-5);
  SelfAttentionWeights bad = w;
  bad.w_k = rng.normal_mat(8, 5);
  CHECK_THROWS_AS(self_attention(x, bad), ShapeError);
}
