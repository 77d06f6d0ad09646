// Presentation of chapter 09 (the modern decoder and its language model): each function prints
// one step or part of a step through the Narrator; the numbers come from attn/studies/ and
// attn/models/. Nothing here computes beyond formatting what those return.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/studies/decoder_study.hpp"
#include "attn/studies/tiny_lm.hpp"

namespace attn {

// Token ids as display labels ("␣God").
Labels token_labels(const BpeTokenizer& tok, const std::vector<int>& ids);
// The first n merges with their counts, and how one sentence splits.
void show_bpe_merges(Narrator& nar, const BpeTokenizer& tok, std::size_t n);
void show_bpe_split(Narrator& nar, const BpeTokenizer& tok, const std::string& sentence);

// Steps 2–5: each piece of the block beside what it replaced.
void compare_norms(Narrator& nar, const DecoderLM& m, const std::vector<int>& prompt);
void compare_ffns(Narrator& nar, const DecoderLMConfig& cfg);
void compare_positions(Narrator& nar, const DecoderLM& m, const std::vector<int>& prompt);
void compare_kv_heads(Narrator& nar, const DecoderLMConfig& cfg);

// Step 6: the block with this model's shapes and the parameter count; block 0 exported in full.
void show_block_shapes(Narrator& nar, const DecoderLM& m, std::size_t t);
void export_block0(Narrator& nar, const DecoderLM& m, const DecoderLMTrace& trace, const Labels& tokens);

// Step 7: the training facts, curve, validation loss and bits per byte beside the anchors.
// Returns the validation loss (nats per token) and bits per byte it printed.
struct ValidationFigures {
  double loss = 0.0, bits_per_byte = 0.0;
};
ValidationFigures report_training(Narrator& nar, const TinyLm& lm);
// The validation loss chapter 09 reports: the first 32 windows of 256 held-out tokens.
constexpr std::size_t kValidWindows = 32;

// Step 8: the next-token distribution after the prompt, before and after temperature / top-k / top-p.
void show_sampling_step(Narrator& nar, const TinyLm& lm, const std::vector<int>& prompt, const SamplerConfig& sc);
// Generated text, line by line, wrapped under 100 columns.
void print_generated(Narrator& nar, const std::string& text);

// Step 9: cache speed (returns the speed-up at the longest length), prefill vs decode, and the
// paged cache (returns contiguous bytes / paged bytes).
double kv_cache_study(Narrator& nar, const TinyLm& lm, const std::vector<int>& prompt, const SamplerConfig& sc,
                    std::uint64_t seed, bool bench);
double paged_cache_study(Narrator& nar, const TinyLm& lm, const SamplerConfig& sc, std::uint64_t seed);

}  // namespace attn
