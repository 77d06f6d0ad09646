// Cross-attention (attn/attention/cross_attention.hpp): the projections are right-multiplied and
// recomputed in double; the output matches the loop reference for T != S on awkward sizes; with
// X = Y it is exactly self-attention; the same weights read sources of any length; mismatched
// weights throw ShapeError naming the weight. Tolerance 1e-5: N(0, 1) inputs, O(1) outputs, float32
// sums over ≤ 33 terms.
#include <doctest/doctest.h>

#include "attn/attention/cross_attention.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

TEST_CASE("cross_attention: Q from y, K and V from x, weights (T, S), against the reference") {
  Rng rng(71);
  for (std::size_t t : {1u, 3u, 7u})
    for (std::size_t s : {1u, 5u, 33u}) {
      CAPTURE(t); CAPTURE(s);
      const Mat y = rng.normal_mat(t, 6), x = rng.normal_mat(s, 10);  // d_y != d_x
      const CrossAttentionWeights w = init_cross_attention(rng, 6, 10, 4, 3);
      const CrossAttentionTrace tr = cross_attention(y, x, w);
      CHECK(max_abs_diff(tr.q, gemm_reference(y, w.w_q)) < 1e-5);
      CHECK(max_abs_diff(tr.k, gemm_reference(x, w.w_k)) < 1e-5);
      CHECK(max_abs_diff(tr.v, gemm_reference(x, w.w_v)) < 1e-5);
      CHECK(shape_of(tr.attn.weights) == Shape{t, s});
      CHECK(shape_of(tr.attn.output) == Shape{t, 3});
      CHECK(max_abs_diff(tr.attn.output, attention_reference(tr.q, tr.k, tr.v)) < 1e-5);
    }
}

TEST_CASE("cross_attention with x = y is self-attention, masked or not") {
  Rng rng(72);
  const Mat x = rng.normal_mat(7, 8);
  const SelfAttentionWeights sw = init_self_attention(rng, 8, 4, 5);
  const CrossAttentionWeights cw{sw.w_q, sw.w_k, sw.w_v};
  for (const Mat& m : {Mat{}, causal_mask(7)}) {
    const SelfAttentionTrace s = self_attention(x, sw, m);
    const CrossAttentionTrace c = cross_attention(x, x, cw, m);
    CHECK(max_abs_diff(c.attn.weights, s.attn.weights) == 0.0);
    CHECK(max_abs_diff(c.attn.output, s.attn.output) == 0.0);
  }
  // … and differs as soon as the two sequences differ.
  const Mat y = rng.normal_mat(7, 8);
  CHECK(max_abs_diff(cross_attention(y, x, cw).attn.output, self_attention(x, sw).attn.output) > 1e-2);
}

TEST_CASE("one set of cross-attention weights reads sources of any length") {
  Rng rng(73);
  const Mat y = rng.normal_mat(4, 8);
  const CrossAttentionWeights w = init_cross_attention(rng, 8, 8, 4, 4);
  for (std::size_t s : {1u, 2u, 17u, 200u}) {
    const CrossAttentionTrace tr = cross_attention(y, rng.normal_mat(s, 8), w);
    CHECK(shape_of(tr.attn.weights) == Shape{4, s});
    CHECK(shape_of(tr.attn.output) == Shape{4, 4});
    for (std::size_t i = 0; i < 4; ++i) {
      double row = 0.0;
      for (std::size_t j = 0; j < s; ++j) row += tr.attn.weights(i, j);
      CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
    }
  }
}

TEST_CASE("cross_attention: a padding mask hides source positions") {
  Rng rng(74);
  const Mat y = rng.normal_mat(3, 4), x = rng.normal_mat(5, 4);
  const CrossAttentionWeights w = init_cross_attention(rng, 4, 4, 4, 2);
  const CrossAttentionTrace tr = cross_attention(y, x, w, padding_mask(3, {true, true, true, false, false}));
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(tr.attn.weights(i, 3) == 0.0f);
    CHECK(tr.attn.weights(i, 4) == 0.0f);
  }
}

TEST_CASE("cross_attention names the weight that does not fit") {
  Rng rng(75);
  const Mat y = rng.normal_mat(3, 6), x = rng.normal_mat(5, 10);
  const CrossAttentionWeights w = init_cross_attention(rng, 6, 10, 4, 3);
  CHECK_THROWS_WITH_AS(cross_attention(x, y, w), doctest::Contains("cross_attention: W_Q has shape (6, 4), expected (10, *)"),
                       ShapeError);
  CrossAttentionWeights bad = w;
  bad.w_k = rng.normal_mat(10, 5);
  CHECK_THROWS_WITH_AS(cross_attention(y, x, bad), doctest::Contains("W_K"), ShapeError);
  bad = w;
  bad.w_v = rng.normal_mat(6, 3);
  CHECK_THROWS_WITH_AS(cross_attention(y, x, bad), doctest::Contains("W_V"), ShapeError);
}
