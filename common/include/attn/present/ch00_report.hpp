// Presentation of chapter 00 (the Seq2Seq bottleneck): each function prints one step's results
// through the Narrator; the numbers and verdicts come from attn/studies/seq2seq_study.hpp, and the
// sentences are chosen by the verdicts' outcomes. Nothing here measures.
#pragma once

#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/studies/seq2seq_study.hpp"

namespace attn {

// Step 1: when the model's best validation score came at its last training step, says that it may
// still have been improving (nothing when it peaked earlier).
void report_best_step(Narrator& nar, const ChapterModel& cm);
// Step 2: the first word that occurs twice in the sentence, and how far apart its two rows are
// (nothing when no word repeats).
void report_repeated_word(Narrator& nar, const Mat& rows, const Labels& words);
// Step 3: cos(h_j, c) for each source word (recorded as "cosine_to_c") and what to see in it.
void report_cosine_to_c(Narrator& nar, const Vec& cos, const Labels& words);
// Step 4: the decoder's states (recorded as "decoder_states", "decoder_logits"), the table of what
// each step read, wrote and with what probability, and the output against the reference.
void report_decoding(Narrator& nar, const DecodeTrace& tr, const SentencePair& pair, const Vocab& target_vocab);
// Step 4's pointer to the failure: where the output first differs from its reference (with the
// probability p(y_i) there, from rows), how the later words fare, and what kind of wrong each is.
void report_output_diff(Narrator& nar, const OutputDiff& d, const std::vector<DecodeRow>& rows);
// Step 5: the by-length table and chart, the fall from the shortest to the longest bucket judged
// against the source article's figures, and the published ones (Bahdanau et al. 2014, Table 1).
void report_bottleneck_bleu(Narrator& nar, const BottleneckStudy& s);
// Step 5's comparison once the fall holds (v = the bottleneck's `collapses`): "steeper than the
// article's 47%" when the whole percents differ, "as steep as" when they are equal; both say the span
// is wider (5-10 to 51-60 words against the article's 10 to 50).
std::string fall_against_article(const Verdict& v);
// Step 5's "why": what lifts BLEU above token accuracy and what pulls it below, and in which
// buckets each wins (the largest gap either way, as printed).
std::string bleu_vs_token_why(const BottleneckStudy& s);
// Step 6: accuracy by target position (recorded as "position_accuracy") and its two verdicts.
void report_positions(Narrator& nar, const BottleneckStudy& s);

// The closing lines, each chosen by the verdict of the step it sums up; context_size: |c|.
std::vector<std::string> ch00_takeaway(const BottleneckStudy& s, std::size_t context_size);

}  // namespace attn
