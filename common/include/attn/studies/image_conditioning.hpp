// Cross-attention conditioning an image on text, the way Stable Diffusion's U-Net does it
// (Rombach et al. 2022, §3.3: Q = φ(z_t)·W_Q from the image latent, K = τ(y)·W_K and V = τ(y)·W_V
// from the text encoder's tokens), at toy size: an 8×8 grid of latent positions asks, 5 text tokens
// answer, and the weights are (64 × 5).
//
// What is built in, so that the example means something without training a diffusion model:
//   · a layout painted on the grid: every position shows one of the words (sky, moon, tree, …);
//   · each word's region has a content vector c_w; a position's latent is c_w + N(0, noise²);
//   · the text tokens are toy word vectors (a stand-in for the text encoder); W_K, W_V random;
//   · W_Q is solved so that a clean region vector c_w scores exactly `gain` (after the 1/√d_k
//     scale) on its own word's key and 0 on every other key — the association a trained U-Net
//     learns from image–caption pairs.
// What is then measured: with noisy latents, which word each position reads (argmax), how much
// weight it puts on the word painted there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/attention/cross_attention.hpp"

namespace attn {

struct ImageConditioningConfig {
  std::size_t d_latent = 8;  // channels of a latent position (Stable Diffusion v1: 320 … 1280)
  std::size_t d_text = 12;   // width of a text token (Stable Diffusion v1's CLIP ViT-L/14: 768)
  std::size_t d_k = 8;       // query/key width
  std::size_t d_v = 4;       // value width
  float noise = 0.3f;        // std of the noise added to every latent value
  float gain = 4.0f;         // scaled score of a clean region on its own word (others: 0)
  // The noisier levels chapter 07 also shows (image_noise_sweep): where the built-in margin gives way.
  std::vector<float> noise_sweep = {1.0f, 2.0f, 4.0f};
};

struct ImageConditioning {
  std::size_t side = 8;         // the grid is side × side positions, row-major
  Labels words;                 // the text tokens, in prompt order
  std::vector<int> layout;      // (side·side,) the word painted at each position
  Mat regions;                  // (words, d_latent) c_w
  Mat latent;                   // (side·side, d_latent) queries' input: c_layout(p) + noise
  Mat text;                     // (words, d_text) keys' and values' input
  CrossAttentionWeights w;
  CrossAttentionTrace trace;    // weights (side·side, words), output (side·side, d_v)
  std::vector<int> reads;       // (side·side,) argmax word of each position's weights
  std::size_t hits = 0;         // positions whose argmax is the word painted there
  double mean_own_weight = 0.0; // mean weight a position puts on its painted word
};

// The 8×8 scene "sky, moon, tree, house, grass" (deterministic for a seed).
ImageConditioning image_conditioning_example(std::uint64_t seed, const ImageConditioningConfig& cfg = {});

// One text row per grid row, one character per position: the first letter of its word.
std::vector<std::string> grid_letters(const std::vector<int>& cells, const Labels& words, std::size_t side);

}  // namespace attn
