// Presentation of chapter 07 (cross-attention): each function prints one step's results through
// the Narrator and records what it prints for --export; the numbers and verdicts come from
// attn/studies/cross_attention_study.hpp, and the sentences are chosen by the verdicts' outcomes.
// Shares are printed as "hits/total (x.y%)", one decimal, the same rule everywhere. Nothing here
// measures.
#pragma once

#include <string>
#include <vector>

#include "attn/data/safetensors.hpp"  // Metadata
#include "attn/present/narrate.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/studies/cross_attention_study.hpp"

namespace attn {

// "1 source word", "3 source words"; likewise target_words: steps 1 and 3's counts.
std::string source_words(std::size_t n);
std::string target_words(std::size_t n);
// "5/8 (62.5%)": the share with one decimal (exact for up to 8 words, one rule for every row).
std::string format_share(const AlignmentScore& a);
// How chapters 07 and 08 print a model file's path: relative to the working folder when the file
// lies under it ("data/ch01/bahdanau.safetensors"); otherwise the full path and the data place it
// was found in (attn/data/data_files.hpp: data_places), so that a learner sees which copy is read.
std::string shown_model_path(const std::string& path);

// Step 3: the row sums of the weights and their verdict.
void report_cross_row_sums(Narrator& nar, const RowSumCheck& c, std::size_t t, std::size_t s);
// Step 4: output against its double reference.
void report_reference(Narrator& nar, const ReferenceCheck& c);
// Step 5: cross_attention(Y, Y) against self_attention(Y); own_weights: d_x ≠ d_y, so the step drew
// square W_K, W_V of its own.
void report_self_case(Narrator& nar, const SelfCaseCheck& c, bool own_weights);
// Step 6: one row per source length (recorded as "length_table": S, min and max row sum, largest
// weight; "length_weights": (lengths, T, S_max), zero beyond each S, its tokens the target's and the
// longest source's; manifest "length_sources").
void report_source_lengths(Narrator& nar, const SourceLengthStudy& s, const Labels& target, std::size_t d_v);
// Step 7: the padding mask drawn ('█' visible, '·' masked, with its legend), the masked weights,
// and the three checks (recorded: padding_X, padding_mask, padding_weights, padding_output,
// unpadded_output, unmasked_weights, unmasked_output).
void report_padding(Narrator& nar, const PaddingStudy& p, const Mat& x_padded, const Labels& source,
                    const Labels& target);
// Step 8: the painted grid beside what each position reads, one map per word, and the verdict
// (recorded: image_latent, image_text, image_W_*, image_weights, image_output, image_layout).
// noisier: the same grid at each of cfg.noise_sweep's levels (image_noise_sweep), one line.
void report_image(Narrator& nar, const ImageStudy& s, const ImageConditioningConfig& cfg,
                  const std::vector<ImageStudy>& noisier = {});
// Step 9: Bahdanau's heatmap (recorded "bahdanau_weights", with the pair in the manifest's
// "alignment_pair"), which target words stand off the diagonal (d, by word class), its share, and
// each miss explained from the map.
void report_bahdanau(Narrator& nar, const ModelAlignment& a, const SentencePair& p, const DiagonalReading& d,
                     const ChapterModel& model);
// The name of a toy word class, as printed ("adjective").
std::string word_class_name(ToyWordClass c);
// The off-diagonal target words of p, and those kept on the diagonal with how many words pass them.
void report_diagonal(Narrator& nar, const DiagonalReading& d, const SentencePair& p);
// Step 10: every head's map, the agreement table, how alike each layer's heads are, and the best
// head beside Bahdanau's map (recorded "cross_weights"); metadata: the checkpoint's, as stored (which
// model, how it was trained). alone_s: the same training's wall clock retrained alone on the idle
// machine (attn/studies/transformer_claims.hpp: retrained_alone_seconds) when the model is the
// shipped one, else 0 (not known).
void report_transformer(Narrator& nar, const TransformerHeads& t, const ModelAlignment& bahdanau,
                        const SentencePair& p, const std::string& model, const Metadata& metadata,
                        double alone_s = 0.0);
// Step 10's answer over many sentences (attn/studies/cross_attention_study.hpp: corpus_alignment):
// Bahdanau against the last layer's heads averaged, and the verdict's words; then the two models'
// parameters and recorded validation BLEU, and whether the one that aligns more also translates better.
void report_corpus_alignment(Narrator& nar, const CorpusAlignment& c, const AlignmentAndBleu& bleu);
// bleu.same_order's sentence (shared by step 10 and the takeaway); empty when not judged.
std::string alignment_and_bleu_sentence(const CorpusAlignment& c, const AlignmentAndBleu& bleu);
// Step 10 when chapter 08's model is not in data/: says so.
void report_no_transformer(Narrator& nar);

// The closing lines, each chosen by the verdict of the step it sums up (transformer: null when
// the model was not available).
std::vector<std::string> ch07_takeaway(std::size_t t, std::size_t s, const SelfCaseCheck& self,
                                       const SourceLengthStudy& lengths, const PaddingStudy& padding,
                                       const ImageStudy& image, const ModelAlignment& bahdanau,
                                       const TransformerHeads* transformer);

}  // namespace attn
