// Presentation of chapter 09 (the modern decoder and its language model): each function prints
// what one study of attn/studies/decoder_study.hpp measured, through the Narrator; the sentences
// that state a verdict are chosen by the verdict's outcome. Nothing here measures or judges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/studies/decoder_study.hpp"
#include "attn/studies/tiny_lm.hpp"

namespace attn {

// --train: learns the tokenizer and the model with a progress bar, reports the run, and returns the
// model loaded back from setup.out_dir.
TinyLm train_tiny_lm_narrated(Narrator& nar, TinyLmTrainSetup& setup);

// Token ids as display labels ("␣God").
Labels token_labels(const BpeTokenizer& tok, const std::vector<int>& ids);
// Step 1: the first n merges with their counts, how one sentence splits, the held-out text's
// bytes per token.
void report_tokenizer(Narrator& nar, const TinyLm& lm, std::size_t n_merges, const std::string& sentence);

// Steps 2–5: each piece of the block beside what it replaced.
void report_norms(Narrator& nar, const NormStudy& s);
void report_ffns(Narrator& nar, const FfnCost& c);
void report_shift(Narrator& nar, const ShiftStudy& s);
void report_kv_heads(Narrator& nar, const std::vector<KvCacheRow>& rows);

// Step 6: the block as a tree with this model's shapes, the parameter count, block 0 exported in
// full and the last layer's head 0 drawn for the prompt.
void report_block(Narrator& nar, const DecoderLM& m, const DecoderLMTrace& trace, const Labels& tokens);

// Step 7: the training facts, curve, and the validation figures beside the anchors.
void report_training(Narrator& nar, const TinyLm& lm, const ValidationFigures& v);

// Step 8: the next-token distribution before and after temperature / top-k / top-p, then the
// sampled text beside greedy decoding.
void report_sampling(Narrator& nar, const TinyLm& lm, const NextTokenStudy& s, const SamplerConfig& sc);
void report_decoding(Narrator& nar, const TinyLm& lm, const std::string& prompt, const DecodingComparison& d,
                     const SamplerConfig& sc);
// Generated text, line by line, wrapped under 100 columns, each line starting "    │ ".
void print_generated(Narrator& nar, const std::string& text);

// Step 9: cache speed, prefill vs decode, and the paged cache.
void report_kv_cache(Narrator& nar, const KvCacheStudy& s, std::size_t context, bool bench);
void report_paged(Narrator& nar, const PagedStudy& s);

// The takeaway's lines, each from the figures and verdicts measured above.
struct DecoderFindings {
  std::size_t parameters = 0;
  ValidationFigures validation;
  NormStudy norms;
  FfnCost ffn;
  ShiftStudy shift;
  std::vector<KvCacheRow> caches;
  DecodingComparison decoding;
  KvCacheStudy kv;
  PagedStudy paged;
};
std::vector<std::string> decoder_takeaway(const DecoderFindings& f);

// The export's "validation" entry: the files and windows the held-out loss comes from, and the figures.
std::string validation_manifest(const ValidationFigures& v);

}  // namespace attn
