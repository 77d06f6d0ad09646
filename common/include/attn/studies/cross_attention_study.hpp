// Chapter 07's checks and measurements, each returned with its verdict (attn/studies/verdict.hpp):
// the tiny example against its double reference; cross_attention(Y, Y) against self_attention(Y);
// one set of weights reading sources of any length; a padded source read through a padding mask;
// an image latent reading its prompt (attn/studies/image_conditioning.hpp); and a trained
// model's alignment: Bahdanau's (chapter 01) and every cross-attention head of chapter 08's
// Transformer, with how far the heads of one layer differ from each other.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention/alignment.hpp"
#include "attn/attention/cross_attention.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/vocab.hpp"
#include "attn/models/seq2seq.hpp"
#include "attn/models/transformer.hpp"
#include "attn/studies/image_conditioning.hpp"
#include "attn/studies/self_attention_study.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// ---- the mechanism, small ---------------------------------------------------------------------
// output against the same formula in double (attention_reference): measured = max |Δ|, bound
// kFloatCheckTol.
struct ReferenceCheck {
  double max_diff = 0.0;
  Verdict matches;
};
ReferenceCheck check_against_reference(const CrossAttentionTrace& t);

// cross_attention(Y, Y) against chapter 03's self_attention(Y) with the same weights (which must be
// square in the sense d_x = d_y): measured = the larger of max |Δweights| and max |Δoutput|.
struct SelfCaseCheck {
  double weights_diff = 0.0, output_diff = 0.0;
  std::size_t n = 0;    // tokens: the weights are n×n
  std::size_t d_v = 0;  // the output is n×d_v
  Verdict same;
};
SelfCaseCheck self_case_check(const Mat& y, const CrossAttentionWeights& w);
// The comparison itself: cross_attention(Y, Y)'s trace against self_attention(Y)'s.
SelfCaseCheck judge_self_case(const CrossAttentionTrace& cross, const SelfAttentionTrace& self);

// One set of weights reading sources of several lengths S (the first S words of one toy sentence).
struct SourceLengthRow {
  std::size_t s = 0;
  Labels words;             // the S source words
  Mat weights;              // (T, S)
  Shape output_shape;       // (T, d_v) at every S
  RowSumCheck sums;
  double largest = 0.0;     // the largest weight of the (T, S) matrix
};
struct SourceLengthStudy {
  std::vector<SourceLengthRow> rows;  // in the order of `lengths`
  std::size_t parameters = 0;         // numbers in W_Q, W_K, W_V
  // one_output_shape: measured = output shapes that differ from the first row's, bound 0;
  // rows_sum_to_one: the worst row sum over every length, bound kFloatCheckTol;
  // weight_spreads: the largest weight at the shortest source minus that at the longest, > 0;
  // falls_each_step: the times the largest weight rises from one length to the next, at most 0.
  Verdict one_output_shape, rows_sum_to_one, weight_spreads, falls_each_step;
  std::size_t first_rise = 0;  // the first row whose largest weight is above the row before (0: none)
};
SourceLengthStudy judge_source_lengths(std::vector<SourceLengthRow> rows, std::size_t parameters);
// Sources are the first S words of toy_sentence(seed, max(largest S, 4)) as word_vectors(…, d_x, seed):
// each longer source extends the shorter one.
SourceLengthStudy source_length_study(const Mat& y, const CrossAttentionWeights& w,
                                      const std::vector<std::size_t>& lengths, std::size_t d_x, std::uint64_t seed);

// ---- padding ------------------------------------------------------------------------------------
// A batch pads short sources to one length S with a pad token; the padding mask (T, S) is 0 where
// source position j is a real word (j < valid) and −∞ where it is padding. Read with and without
// the mask, and against attention over the `valid` real words alone (no padding at all).
struct PaddingStudy {
  std::size_t valid = 0, padded = 0;  // real words, S after padding
  Mat mask;                           // (T, S) additive
  CrossAttentionTrace masked, unmasked;
  Mat unpadded_output;                // (T, d_v) attention over the real words only
  double masked_pad_weight = 0.0;     // the largest weight on a pad position, with the mask
  double unmasked_pad_share = 0.0;    // the largest row share of weight on pad positions, without
  std::vector<double> unmasked_row_pad_share;  // (T,) each row's share of weight on pad positions, without
  double masked_vs_unpadded = 0.0;    // max |output(masked) − output(real words only)|
  double unmasked_vs_unpadded = 0.0;  // the same without the mask
  // pads_ignored: masked_pad_weight ≤ 0 (exactly 0); same_as_unpadded: masked_vs_unpadded ≤
  // kFloatCheckTol; unmasked_leaks: unmasked_vs_unpadded above kFloatCheckTol (the mask matters).
  Verdict pads_ignored, same_as_unpadded, unmasked_leaks;
};
// x_padded: (S, d_x), its first `valid` rows the real words. Throws std::invalid_argument when
// valid is 0 or above S.
PaddingStudy padding_study(const Mat& y, const Mat& x_padded, std::size_t valid, const CrossAttentionWeights& w);

// ---- text steers an image -------------------------------------------------------------------
// reads_painted: the share of positions whose argmax is the word painted there, at least
// kImageReadsBound (this course's test). clean_own_weight: the weight a noise-free region puts on its own word,
// e^gain / (e^gain + words − 1), the ceiling the noisy mean is compared with.
inline constexpr double kImageReadsBound = 0.9;
// What to look for in the latent table: the channel where the first word's region vector c_w is
// largest in size, its value there, and the mean of that channel over the positions painted with
// that word (the region showing through the noise).
struct RegionSignal {
  std::size_t word = 0, channel = 0, positions = 0;
  double region = 0.0, mean = 0.0;
};
struct ImageStudy {
  ImageConditioning im;
  double clean_own_weight = 0.0;
  RegionSignal signal;
  Verdict reads_painted;
};
// The RegionSignal of `word` (no positions when nothing is painted with it).
RegionSignal region_signal(const ImageConditioning& im, std::size_t word);
ImageStudy judge_image(ImageConditioning im, const ImageConditioningConfig& cfg);
ImageStudy image_study(std::uint64_t seed, const ImageConditioningConfig& cfg = {});
// The same grid and W_Q at each noise level (cfg.noise replaced): where the built-in margin stops
// carrying the positions to their own word. Without `noises`: cfg.noise_sweep.
std::vector<ImageStudy> image_noise_sweep(std::uint64_t seed, const ImageConditioningConfig& cfg,
                                          const std::vector<float>& noises);
std::vector<ImageStudy> image_noise_sweep(std::uint64_t seed, const ImageConditioningConfig& cfg);

// ---- a trained model's alignment -----------------------------------------------------------
// The first test pair of min_words to max_words source words with an adjective (which moves
// behind its noun) and a verb that moves at least two places to the end of its clause. Throws
// std::runtime_error when none has.
const SentencePair& reordered_test_pair(const std::vector<SentencePair>& test, std::size_t min_words = 8,
                                        std::size_t max_words = 12);

// Which target words of pair p stand off the diagonal (target position i ≠ source position a(i)),
// and which stay on it although other words cross them. A word k passes word i ahead when it
// comes after i in the source but before it in the target (a(k) > a(i), k < i), behind when the
// reverse; i − a(i) = passed_ahead − passed_behind, so a word keeps its place when the two
// balance. The rules that move words: an adjective goes after its noun, a verb to the end of its
// clause (attn/data/corpus.hpp).
struct DiagonalWord {
  std::size_t target = 0;
  int source = 0;
  ToyWordClass word_class = ToyWordClass::unknown;  // of the source word
  std::size_t passed_ahead = 0, passed_behind = 0;
};
struct DiagonalReading {
  std::vector<DiagonalWord> off;   // i ≠ a(i), in target order
  std::vector<DiagonalWord> kept;  // i = a(i) though some word passes it
};
DiagonalReading diagonal_reading(const SentencePair& p);

// A target word whose largest weight is not on the source word it translates.
struct AlignmentMiss {
  std::size_t target = 0;         // row
  int read = 0, truth = 0;        // the argmax column and the true one
  double weight_read = 0.0, weight_truth = 0.0;
  bool neighbour = false;         // |read − truth| = 1
  bool truth_unread = false;      // no row's argmax is `truth`
  int read_written_at = -1;       // the row whose true source is `read` (-1: none)
};
std::vector<AlignmentMiss> alignment_misses(const Mat& weights, const std::vector<int>& truth);

// Most target words (this course's test: at least kAlignmentBound; partly from kAlignmentPartly) put their largest
// weight on the source word they translate: follows_truth. off_diagonal: the target words whose
// true source is not at their own position (i ≠ a(i)), and how many of those the argmax finds.
inline constexpr double kAlignmentBound = 0.75, kAlignmentPartly = 0.5;
struct ModelAlignment {
  Mat weights;                  // (T, S) teacher-forced
  std::vector<int> argmax;      // (T,)
  AlignmentScore score, off_diagonal;
  std::vector<AlignmentMiss> misses;
  Verdict follows_truth;
};
ModelAlignment judge_alignment(Mat weights, const std::vector<int>& truth);
// Bahdanau's α, teacher-forced on the reference (attn/studies/interpretability.hpp:
// seq2seq_teacher_alignment), judged against the pair's true alignment.
ModelAlignment bahdanau_alignment(const Seq2Seq& m, const SentencePair& p, const Vocab& sv, const Vocab& tv);

// How alike the heads of one layer are: the mean, over every pair of heads, of the mean over rows
// of ½Σ|p − p'| (total variation, 0 = the same weights, 1 = no overlap). redundant: at most
// kRedundantHeadsTvd — the heads read the same words with nearly the same weights.
inline constexpr double kRedundantHeadsTvd = 0.1;
struct LayerSimilarity {
  std::size_t layer = 0;
  double mean_tvd = 0.0, max_tvd = 0.0;  // over head pairs
  Verdict redundant;
};
// heads: (H, T, S) -> the verdict over the H·(H − 1)/2 pairs (inconclusive for H < 2).
LayerSimilarity layer_similarity(const Tensor3& heads, std::size_t layer);

struct HeadAgreement {
  std::size_t layer = 0, head = 0;
  bool mean = false;  // the layer's heads averaged (head unused)
  AlignmentScore with_bahdanau, with_truth;
};
// The same question over many sentences, so that one sentence and a head picked after the fact do
// not decide it: every target word of the test pairs of min_words to max_words source words (at most
// max_pairs of them), teacher-forced. The Transformer is scored by its last decoder layer's heads
// averaged (chosen before looking), and each head is scored too.
struct CorpusAlignment {
  std::size_t sentences = 0, min_words = 0, max_words = 0;
  std::size_t layer = 0;                           // the last decoder layer
  AlignmentScore bahdanau, last_layer_mean;
  std::vector<std::vector<AlignmentScore>> heads;  // [layer][head]
  std::size_t best_layer = 0, best_head = 0;       // the head with most hits over all the sentences
  Verdict transformer_better;                      // judge_better_alignment(last_layer_mean, bahdanau)
  std::size_t transformer_params = 0, bahdanau_params = 0;  // parameter_count of each model
};
// a's share above b's by more than two standard errors of the difference, √(p(1−p)/n + q(1−q)/m):
// holds; below by as much: fails; between: inconclusive (within noise).
Verdict judge_better_alignment(const AlignmentScore& a, const AlignmentScore& b);
CorpusAlignment corpus_alignment(const Seq2Seq& bahdanau, const Transformer& m, const std::vector<SentencePair>& pairs,
                                 const Vocab& sv, const Vocab& tv, std::size_t min_words = 8, std::size_t max_words = 12,
                                 std::size_t max_pairs = 200);

// Does the model that aligns more words also translate better? Validation BLEU as each model's file
// records it ("valid_bleu"; NaN when a file records none). measured: the BLEU of the model that
// aligns more minus the other's; holds at ≥ 0 (the better aligner is not the worse translator),
// fails below; inconclusive when the alignment is the same within noise or a BLEU is missing.
// Like is compared with like: both figures are the validation BLEU at the step each run kept, its
// best on the validation set ("best_step" of "steps"); when a file does not record which step it
// kept (step 0), the figures may not be alike and the verdict is inconclusive.
struct RecordedBleu {
  double bleu = NAN;                // "valid_bleu"
  std::size_t step = 0, steps = 0;  // "best_step", "steps"; 0: not recorded
};
// at_last_step: the model that aligns more kept the last step of its run (best_step = steps): its
// validation BLEU was still at its best when training stopped, so it may still have been
// improving, and a lower BLEU may be a shorter training budget rather than anything alignment
// says. measured = steps − best_step of that model, holds at ≤ 0; inconclusive when no model
// aligns more or its steps are not recorded.
struct AlignmentAndBleu {
  double transformer_bleu = 0.0, bahdanau_bleu = 0.0;
  RecordedBleu transformer, bahdanau;  // the same figures with the steps they were kept at
  Verdict same_order, at_last_step;
};
AlignmentAndBleu judge_alignment_and_bleu(const Verdict& transformer_better, const RecordedBleu& transformer,
                                          const RecordedBleu& bahdanau);
// Both figures known to be best-on-validation figures (as from files recording their best_step).
AlignmentAndBleu judge_alignment_and_bleu(const Verdict& transformer_better, double transformer_bleu,
                                          double bahdanau_bleu);
// A checkpoint's recorded "valid_bleu" as a number; NaN when absent or not a number.
double recorded_bleu(const std::map<std::string, std::string>& metadata);
// The same with the step it was kept at ("best_step") of "steps" (0 when absent or not a number).
RecordedBleu recorded_validation(const std::map<std::string, std::string>& metadata);

struct TransformerHeads {
  Tensor4 weights;                       // (layers, heads, T, S), the <eos> step dropped
  std::vector<HeadAgreement> rows;       // per layer: every head, then the mean
  std::size_t best_layer = 0, best_head = 0;
  AlignmentScore best;                   // the head with most hits (the first on ties)
  // Every head with best.hits hits, as (layer, head), best first: more than one is a tie.
  std::vector<std::pair<std::size_t, std::size_t>> best_heads;
  std::vector<std::size_t> perfect;      // per layer: heads whose argmax matches at every word
  std::vector<LayerSimilarity> similarity;
  // matches_bahdanau: best-head share minus Bahdanau's share ≥ 0 (the Transformer does as well).
  Verdict matches_bahdanau;
  CorpusAlignment many;                  // transformer_heads: the same over the test split
  AlignmentAndBleu bleu;                 // many.transformer_better set against the recorded BLEUs
};
// weights: (layers, heads, T, S); bahdanau: chapter 01's alignment on the same pair.
TransformerHeads judge_heads(Tensor4 weights, const std::vector<int>& truth, const ModelAlignment& bahdanau);
// judge_heads on pair p, corpus_alignment over corpus.test against the Bahdanau model, and that
// verdict against the validation BLEU each model's file records (the metadata of m and bahdanau_model).
TransformerHeads transformer_heads(const Transformer& m, const Seq2Seq& bahdanau_model, const SentencePair& p,
                                   const ToyCorpus& corpus, const ModelAlignment& bahdanau,
                                   const std::map<std::string, std::string>& transformer_metadata = {},
                                   const std::map<std::string, std::string>& bahdanau_metadata = {});

// (layers, heads, T, S) -> head h of layer l as (T, S).
Mat head_map(const Tensor4& w, std::size_t layer, std::size_t head);

}  // namespace attn
