// Sampling text from the decoder-only language model (attn/models/decoder_lm.hpp):
//   temperature τ:  p = softmax(logits / τ)            (τ → 0: greedy; τ = 1: the model's own p)
//   top-k:          keep the k most probable tokens      (Fan et al. 2018)
//   top-p (nucleus): keep the smallest set of most probable tokens whose mass reaches p
//                    (Holtzman et al. 2020), then renormalise and draw one token.
// Generation with a KV cache (one new token per step) or without (the whole prefix every step);
// the two produce the same tokens for the same seed. A paged cache serves a batch of sequences.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/attention/paged_kv_cache.hpp"
#include "attn/models/decoder_lm.hpp"

namespace attn {

struct SamplerConfig {
  float temperature = 0.8f;  // 0: greedy (argmax)
  std::size_t top_k = 0;     // 0: no top-k cut
  float top_p = 0.95f;       // 1: no nucleus cut
};

// The distribution a token is drawn from: softmax(logits/τ), cut by top-k and top-p, renormalised.
// logits: (V,) -> (V,), zeros outside the kept set. τ = 0 puts all mass on the argmax.
Vec sampling_distribution(const Vec& logits, const SamplerConfig& cfg);
// Draws from that distribution with one uniform number from rng (inverse CDF in token order).
int sample_token(const Vec& logits, const SamplerConfig& cfg, Rng& rng);
// The k most probable entries of a distribution, best first (ties: smaller id first).
std::vector<std::pair<int, float>> top_entries(const Vec& probs, std::size_t k);

enum class CacheMode { None, Contiguous };
// prompt (≥ 1 token) + n_new generated tokens; prompt.size() + n_new ≤ context (else ShapeError).
// Returns only the generated tokens. Same seed, same tokens, in either mode.
std::vector<int> generate_tokens(const DecoderLM& m, const std::vector<int>& prompt, std::size_t n_new,
                                 const SamplerConfig& cfg, std::uint64_t seed, CacheMode mode = CacheMode::Contiguous);

// A batch of prompts of mixed lengths decoded together through one paged cache: each round feeds
// every unfinished sequence one token. Sequence i draws from its own generator (seed + i), so it
// gets the very tokens generate_tokens(m, prompts[i], n_new[i], cfg, seed + i) gives.
std::vector<std::vector<int>> generate_batch_paged(const DecoderLM& m, PagedKVCache& cache,
                                                   const std::vector<std::vector<int>>& prompts,
                                                   const std::vector<std::size_t>& n_new, const SamplerConfig& cfg,
                                                   std::uint64_t seed);
// Feeds tokens of sequence seq through the paged cache (like decoder_lm_feed); last logits (V,).
Vec decoder_lm_feed_paged(const DecoderLM& m, PagedKVCache& cache, std::size_t seq, const std::vector<int>& tokens);

}  // namespace attn
