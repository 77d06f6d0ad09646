// Presentation of chapter 02 (Luong attention): each function prints one step's results through
// the Narrator; the numbers and verdicts come from attn/studies/seq2seq_study.hpp, and the
// sentences are chosen by the verdicts' outcomes. Nothing here measures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/studies/seq2seq_study.hpp"

namespace attn {

// Step 2: each trained model's scores at the same step of the same sentence (recorded as
// luong_{dot,general,concat}_scores with the states h_t_dot, H_dot, h_t_concat, H_concat and the
// weights W_a, W_c, v_c), and the source word each puts its largest score on.
struct ScoreViews {
  ScoreView dot, general, concat;
  const Seq2Seq *general_model = nullptr, *concat_model = nullptr;
};
void report_scores(Narrator& nar, const ScoreViews& v, const SentencePair& pair, std::size_t step);
// Step 3: the general model's weights at step t, global and in a local-m window of half-width
// shown_d (recorded as "alpha_global", "alpha_local_m"), and at the first step where that window
// misses the word translated ("alpha_local_m_outside"); the local-p model's row and its sum
// ("alpha_local_p"), its centres beside the words translated ("local_p_positions"), its alignment
// ("local_p_alignment", the general model's as "general_alignment", the reference as
// "reference_alignment") and how often each looks at the word it translates.
struct WindowModels {
  const Seq2Seq& general;
  const DecodeTrace& general_trace;
  const Seq2Seq& local_p;
  const DecodeTrace& local_p_trace;
};
void report_windows(Narrator& nar, const WindowModels& m, const SentencePair& pair, std::size_t t, std::size_t shown_d,
                    const Vocab& target_vocab);
// Step 4: the by-length table and chart of every model, and each Luong model judged against
// Bahdanau over every metric and bucket.
void report_match(Narrator& nar, const std::vector<NamedResult>& results, const std::vector<MatchStudy>& matches);
// Sets each match's best_step and steps from its model's checkpoint record ("best_step", "steps").
void note_checkpoint_steps(std::vector<MatchStudy>& matches, const std::map<std::string, ChapterModel>& models);
// Step 1: how big each model is (model_sizes): a table of its parameters by part and in all, and
// a line on what is the same (the widths, when they are) and which parts' counts differ.
void report_model_sizes(Narrator& nar, const ModelSizes& s, const Seq2SeqConfig& widths);
// Step 6's "why": which parts of a training step can cost differently (parts_differing).
std::string train_step_why(const ModelSizes& s);
// Step 4's "why", its first clause: what the compared models share, tied to step 1's counts.
std::string shared_sizes_clause(const ModelSizes& s, const Seq2SeqConfig& widths);
// Step 1: where the loaded models' training times come from (each checkpoint's own record).
void report_training_records(Narrator& nar, const std::vector<const ChapterModel*>& models);
// Step 5: the cost table (recorded as "score_times", seconds, kScoreKinds columns), each timing's
// spread (recorded as "score_spreads"), each ratio against Bahdanau's spread ("score_ratio_spreads",
// column 0 is 1), the operation counts, the order over all rounds (order_sentence) and how far
// Bahdanau and concat, equal in counted work, ran apart. The spread table with each row's dot
// verdict, and every per-size verdict, only with --full: under load they change from run to run.
void report_score_cost(Narrator& nar, const ScoreCostStudy& s);
// Step 5's verdict on dot's speed per call (dot_faster), as step 5 (--full) prints it.
std::string dot_speed_sentence(const ScoreCostStudy& s);
// Step 5's operation counts at the study's ops_row beside the measured times; with --full also the
// per-size verdicts mads_explain and tanh_split in words (mads_sentence, tanh_split_sentence).
void report_score_ops(Narrator& nar, const ScoreCostStudy& s);
std::string mads_sentence(const ScoreCostStudy& s);
std::string tanh_split_sentence(const ScoreCostStudy& s);
// order_in_rounds in words: in how many of all rounds both tanh scores took longer than both without.
std::string order_sentence(const ScoreCostStudy& s);
// How far the ratios moved between rounds (max_ratio_spread).
std::string stability_sentence(const ScoreCostStudy& s);
// Step 5's "why": what the counts say about the order over all rounds (order_in_rounds), with
// general's multiply-adds beside Bahdanau's.
std::string score_cost_why(const ScoreCostStudy& s);
// Step 6 (--time-training): ms per training step (recorded as "step_times"), the article's claim,
// the fastest model, and the step's gain beside the score's per call (g).
void report_train_steps(Narrator& nar, const TrainStepStudy& s, const StepGainStudy& g, const Seq2SeqConfig& sizes);
// The article's training-speed claim's verdict in words ("held", "did not hold", …).
std::string train_claim_words(const TrainStepStudy& s);

// The match of the model named `model` among matches (std::invalid_argument when absent).
const MatchStudy& match_of(const std::vector<MatchStudy>& matches, const std::string& model);
std::vector<std::string> ch02_takeaway(const std::vector<MatchStudy>& matches, const ScoreCostStudy& cost,
                                       const TrainStepStudy* steps);

}  // namespace attn
