// The measurements chapter 09 reports about the modern decoder block and its cache (numerics
// only; attn/present/decoder_report.hpp shows them):
//   RMSNorm vs LayerNorm cost, SwiGLU vs ReLU FFN at equal parameters, RoPE vs sinusoidal scores
//   under a shift, generation speed with and without the KV cache, prefill vs decode, and a
//   batch of mixed-length sequences through a paged cache vs contiguous max-length caches.
// Times are best-of-N wall-clock seconds (attn/studies/timing.hpp) on whatever else the machine runs.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/models/decoder_lm_generate.hpp"

namespace attn {

struct NormCost {
  std::size_t rows = 0, channels = 0;
  double rms_seconds = 0.0, layer_seconds = 0.0;
};
// Times rmsnorm_forward and layernorm_forward (γ = 1, β = 0) on the same (rows, channels) input.
NormCost norm_cost(const Mat& x, int repeats = 5);

struct FfnCost {
  std::size_t d_model = 0, relu_hidden = 0, swiglu_hidden = 0;
  std::size_t relu_params = 0, swiglu_params = 0;  // 2·d·4d and 3·d·d_ff
  double relu_seconds = 0.0, swiglu_seconds = 0.0;  // forward on the same rows
};
FfnCost ffn_cost(std::size_t d_model, std::size_t swiglu_hidden, std::size_t rows, std::uint64_t seed,
                 int repeats = 5);

// Score of q at position m and k at position m + distance, for several m: with RoPE it stays put,
// with sinusoidal encodings added to the inputs it moves.
struct ShiftScore {
  std::size_t m = 0;
  double rope = 0.0, sinusoidal = 0.0;
};
std::vector<ShiftScore> shift_scores(const Vec& q, const Vec& k, std::size_t distance,
                                     const std::vector<std::size_t>& starts);

struct KvSpeedRow {
  std::size_t tokens = 0;
  double cached_seconds = 0.0, uncached_seconds = 0.0;
  bool identical = false;  // the two produced the same tokens
};
// Generates n tokens after the prompt for each n, with and without the cache (best of `repeats`).
// The model's RoPE tables are extended when prompt + n exceeds its context (timing only).
std::vector<KvSpeedRow> kv_speed_sweep(const DecoderLM& m, const std::vector<int>& prompt,
                                       const std::vector<std::size_t>& lengths, const SamplerConfig& sc,
                                       std::uint64_t seed, int repeats = 2);

struct PrefillDecode {
  std::size_t tokens = 0;
  double prefill_seconds = 0.0;  // all tokens in one feed
  double decode_seconds = 0.0;   // the same tokens one feed each
  double max_logit_diff = 0.0;   // between the two final logits
};
PrefillDecode prefill_vs_decode(const DecoderLM& m, const std::vector<int>& tokens, int repeats = 3);

struct PagedStudy {
  std::size_t block_size = 0, sequences = 0, max_len = 0, tokens_stored = 0;
  std::size_t blocks_used = 0, paged_bytes = 0, contiguous_bytes = 0, exact_bytes = 0;
  bool identical = false;  // every sequence's tokens equal generate_tokens with the contiguous cache
  std::vector<std::size_t> lengths;  // final length of each sequence
  std::vector<std::vector<int>> generated;
};
PagedStudy paged_study(const DecoderLM& m, const std::vector<std::vector<int>>& prompts,
                       const std::vector<std::size_t>& n_new, const SamplerConfig& sc, std::uint64_t seed,
                       std::size_t block_size = 16);

}  // namespace attn
