// Chapter 07's text-to-image example (attn/studies/image_conditioning.hpp): what is built in holds
// exactly (clean regions score `gain` on their own word and 0 elsewhere, so without noise every
// position reads its painted word), the shapes are Stable Diffusion's at toy size (64 queries,
// 5 keys), the trace is cross_attention of the stored inputs, and the grid printer checks its input.
// Tolerance 1e-4 on solved scores: float32 weights from a double solve, scores O(4).
#include <doctest/doctest.h>

#include <cmath>

#include "attn/studies/image_conditioning.hpp"
#include "attn/tensor/tensor_ops.hpp"

using namespace attn;

TEST_CASE("image conditioning: 64 latent positions read 5 text tokens") {
  const ImageConditioning im = image_conditioning_example(7);
  CHECK(im.words == Labels{"sky", "moon", "tree", "house", "grass"});
  CHECK(shape_of(im.latent) == Shape{64, 8});
  CHECK(shape_of(im.text) == Shape{5, 12});
  CHECK(shape_of(im.trace.attn.weights) == Shape{64, 5});
  CHECK(shape_of(im.trace.attn.output) == Shape{64, 4});
  CHECK(max_abs_diff(im.trace.attn.output, cross_attention(im.latent, im.text, im.w).attn.output) == 0.0);
  const std::vector<std::string> painted = grid_letters(im.layout, im.words, 8);
  CHECK(painted.front() == "sssssmms");
  CHECK(painted.back() == "gggggggg");
  std::size_t hits = 0;
  for (std::size_t p = 0; p < 64; ++p) hits += im.reads[p] == im.layout[p];
  CHECK(hits == im.hits);
  CHECK(im.hits >= 48);  // noise 0.3 moves some positions, not most
  CHECK(im.mean_own_weight > 0.5);
}

TEST_CASE("image conditioning: the solved W_Q gives each clean region exactly its word") {
  const ImageConditioningConfig cfg;
  const ImageConditioning im = image_conditioning_example(3, cfg);
  const CrossAttentionTrace clean = cross_attention(im.regions, im.text, im.w);  // (5, 5)
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t w = 0; w < 5; ++w)
      CHECK(std::abs(clean.attn.scores(r, w) - (r == w ? cfg.gain : 0.0f)) < 1e-4);
  ImageConditioningConfig quiet = cfg;
  quiet.noise = 0.0f;
  const ImageConditioning none = image_conditioning_example(3, quiet);
  CHECK(none.hits == 64);
  CHECK(none.mean_own_weight == doctest::Approx(std::exp(4.0) / (std::exp(4.0) + 4.0)).epsilon(1e-4));
  // Deterministic for a seed, different for another.
  CHECK(max_abs_diff(image_conditioning_example(3, cfg).trace.attn.weights, im.trace.attn.weights) == 0.0);
  CHECK(max_abs_diff(image_conditioning_example(4, cfg).trace.attn.weights, im.trace.attn.weights) > 1e-3);
}

TEST_CASE("image conditioning: bad sizes and bad grids are refused with a message") {
  ImageConditioningConfig narrow;
  narrow.d_k = 4;
  CHECK_THROWS_WITH_AS(image_conditioning_example(1, narrow), doctest::Contains("d_k"), std::invalid_argument);
  CHECK_THROWS_AS(grid_letters({0, 1, 2}, {"a", "b", "c"}, 2), ShapeError);
  CHECK_THROWS_AS(grid_letters({0, 1, 2, 7}, {"a", "b", "c"}, 2), std::out_of_range);
}
