// Presentation of chapter 01 (Bahdanau attention): each function prints one step's results through
// the Narrator; the numbers and verdicts come from attn/studies/seq2seq_study.hpp, and the
// sentences are chosen by the verdicts' outcomes. Nothing here measures.
#pragma once

#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/studies/seq2seq_study.hpp"

namespace attn {

// Step 2: which two source words score highest, and the weights step 3's softmax gives them.
void report_energies(Narrator& nar, const AttentionStepView& v, const SentencePair& pair);
// Step 3: α (recorded as "alpha") and where its largest weight falls, against the word translated.
void report_alpha(Narrator& nar, const AttentionStepView& v, const SentencePair& pair, std::size_t step);
// Step 5: the alignment heatmap (recorded as "alignment", the reference as "reference_alignment"),
// its two verdicts, and each miss with what the map and the training pairs say about it.
void report_alignment(Narrator& nar, const Mat& alignment, const Labels& out_words, const SentencePair& pair,
                      const SentenceAlignmentStudy& s);
// Step 6: the by-length table beside chapter 00's model, the two verdicts, the source article's
// figures and the published ones.
// Step 4: the context vector c_i (recorded as "context") and how close it is to the row of H that
// α weights most.
void report_context(Narrator& nar, const AttentionStepView& v, const Mat& H, const SentencePair& pair);
// Step 7: the parameters of this model against chapter 00's (base), by part, summed.
void report_parameters(Narrator& nar, const Seq2Seq& m, const Seq2Seq& base);
// baseline_still_improving: chapter 00's model was best at its last training step.
// Step 6: how many of the attention model's outputs are wrong, how many run past the reference's
// end (which token accuracy does not count), and one of them beside its reference.
void report_wrong_outputs(Narrator& nar, const WrongOutputs& w, const EvalResult& eval);
void report_attention_gain(Narrator& nar, const std::vector<NamedResult>& results, const AttentionGainStudy& g,
                           bool baseline_still_improving);

// Step 5: the same two questions over every test pair (teacher-forced α), with their verdicts.
void report_test_alignment(Narrator& nar, const TestAlignmentStudy& t);

// The alignment line is judged on the test set (t), not on step 5's one sentence.
std::vector<std::string> ch01_takeaway(const AttentionGainStudy& g, const TestAlignmentStudy& t);

}  // namespace attn
