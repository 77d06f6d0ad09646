// Chapters 00–02's measurements on the trained translation models, each returned with its verdict
// (attn/studies/verdict.hpp): one sentence through a model step by step (00), the bottleneck by
// length and by target position (00), Bahdanau's alignment and where it misses (01), attention
// against no attention by length (01), each Luong model against Bahdanau over every metric and
// bucket (02), the cost of one score function and of one training step (02).
//   const BottleneckStudy b = judge_bottleneck(evaluate_model(m, test, sv, tv), position_ranges(), test);
//   if (b.collapses.holds()) …
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "attn/attention/alignment.hpp"
#include "attn/models/seq2seq_eval.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// A by-length figure as the chapters print it and results.json holds it (one decimal): the
// verdicts below judge these, so each can be recomputed from the export.
double as_printed(double figure);

// ---- one sentence, step by step ----------------------------------------------------------------
// The rows of a greedy trace (B = 1): source embeddings (S, E) and decoder states s_i (T, dec_hidden).
Mat source_embedding_rows(const DecodeTrace& tr);
Mat decoder_state_rows(const DecodeTrace& tr);
// Step i: the word read (y_{i−1}), the word written (argmax of the logits; <eos> on the last step)
// and the probability softmax(logits) gives it.
struct DecodeRow {
  int input = 0, output = 0;
  double p = 0.0;
};
std::vector<DecodeRow> decode_rows(const DecodeTrace& tr);
// The output words of a trace, its <eos> step last: the row labels of its alignment.
Labels output_words(const DecodeTrace& tr, const Vocab& target_vocab);

// A model's parameter count by part: the checkpoint name up to its first '.' ("encoder", "init",
// "attention", "decoder", "out", "src_emb", …); the parts sum to parameter_count(m).
std::map<std::string, std::size_t> parameter_groups(const Seq2Seq& m);
// Each row's cosine with the last row (cos(h_j, h_S) of the encoder states; 0 for a zero row).
Vec cosine_to_last(const Mat& rows);

// ---- chapter 00: the bottleneck ----------------------------------------------------------------
// The source article "Attention: from Seq2Seq to the Transformer revolution" reports BLEU 35.2 at
// source length 10 and 18.7 at length 50 without attention (47% lower), naming no source.
inline constexpr double kArticleBleuAt10 = 35.2, kArticleBleuAt50 = 18.7;
// Target-position ranges of the by-position table: 1-5, 6-10, 11-20, …, 51-60 (inclusive, 1-based).
std::vector<LengthBucket> position_ranges();

struct BottleneckStudy {
  EvalResult eval;                    // by source length (default_length_buckets())
  double first_bleu = 0.0, last_bleu = 0.0;  // shortest and longest bucket, as printed
  // collapses: measured = 1 − last/first, bound the article's 1 − 18.7/35.2 (a fall at least as steep
  // holds), partly 0.1; inconclusive when the shortest bucket already scores 0 (nothing to fall from).
  Verdict collapses;
  Mat position_acc;                   // (buckets, ranges) % right, NaN where a bucket has no such position
  std::vector<LengthBucket> ranges;
  // Of the position ranges that the shortest sentences have (the ones shared by every bucket): the
  // one that loses most from the shortest to the longest bucket, its two figures, and the verdict
  // shared_positions_lose: measured = the smallest loss among them (points), bound 5, partly 0.
  std::size_t shared_ranges = 0, worst_range = 0;
  std::vector<double> shared_losses;  // points lost by each shared range (as printed), in range order
  double worst_from = 0.0, worst_to = 0.0;
  Verdict shared_positions_lose;
  // first_words_hold_best: in the longest bucket, positions 1-5 against the best other range
  // (judge_greater with no noise margin: measured = the difference in points).
  double first_long = 0.0, best_other_long = 0.0;
  Verdict first_words_hold_best;
};
// eval: the model's evaluation on `pairs` (evaluate_model); the position table is computed here.
BottleneckStudy judge_bottleneck(EvalResult eval, const std::vector<LengthBucket>& ranges,
                                 const std::vector<SentencePair>& pairs);

// One output against its reference, word by word: where it first goes wrong and what kind of
// wrong each word is. Positions from 0. A written word not at its place counts as `elsewhere` when
// the reference still has an unmatched copy of it (its order is wrong); else `extra` when the
// reference has the word but fewer times than the output writes it, else `foreign` (nowhere in the
// reference). Reference words left unmatched are `missing`. `wrong_ending` pairs a foreign word
// with a missing one of the same stem and another ending ("pint-a" for "pint-o": the verb's -a/-o).
struct OutputDiff {
  bool exact = false;
  std::size_t first_wrong = 0;   // the first position where they differ (min length when one is a prefix)
  std::string written, wanted;   // the words there ("" past an end)
  int written_at_in_ref = kNoSource;  // the first reference position holding `written` (kNoSource: none)
  std::size_t in_place = 0, elsewhere = 0, after_first_right = 0, after_first = 0;
  // Wrong words: foreign, nowhere in the reference; extra, the reference's own words written more
  // often than it has them; missing, reference words never written (each in output or reference order).
  std::vector<std::string> foreign, extra, missing;
  std::vector<std::pair<std::string, std::string>> wrong_ending;  // (written, the reference's)
};
OutputDiff compare_output(const Tokens& output, const Tokens& reference);

// ---- chapter 01: the alignment ----------------------------------------------------------------
// The nth (0 or 1 = the first, as pair_of_length counts; wrapping) pair of this source length whose translation moves at least
// `min_moved` words off their position; pairs.front() when none does.
const SentencePair& reordered_pair(const std::vector<SentencePair>& pairs, std::size_t length, std::uint64_t nth,
                                   std::size_t min_moved = 4);
// The first output position whose word translates a source word at another position (the last
// position when none does), capped at steps − 1.
std::size_t first_reordered_step(const std::vector<int>& alignment, std::size_t steps);

// Bahdanau's step i of a trace: e_ij, α_ij, c_i and the source position of the largest α.
struct AttentionStepView {
  Vec energies, alpha, context;
  std::size_t top = 0;
};
AttentionStepView bahdanau_step_view(const DecodeTrace& tr, std::size_t i);

// A written word whose largest weight is not on the source word it translates, and what may
// explain it: where the looked-at word is, where it is translated, and whether the translated
// source word has a single translation in the training pairs (then the decoder can write it
// without reading it).
struct AlignmentMiss {
  std::size_t row = 0;           // output position
  int translates = 0, looks_at = 0;  // source positions
  int looked_word_written_at = kNoSource;  // the output position that translates the looked-at word
  std::size_t translations = 0, occurrences = 0;  // of the translated source word, in `train`
};
struct SentenceAlignmentStudy {
  AlignmentScore all;        // every written word with a reference
  AlignmentScore reordered;  // only those whose source word is at another position
  std::size_t off_diagonal = 0;  // written words whose largest weight is off the diagonal
  std::vector<AlignmentMiss> misses;
  // is_alignment: measured = all.share(), bound 0.8, partly 0.5; follows_reorderings: the same on
  // the reordered words (inconclusive when the sentence has none).
  Verdict is_alignment, follows_reorderings;
};
// weights: (T, S) α rows of a trace; written: the words written (rows past it, <eos>, not scored).
SentenceAlignmentStudy alignment_study(const Mat& weights, std::size_t written, const SentencePair& pair,
                               const std::vector<SentencePair>& train);

// The same question over a whole split: each pair's teacher-forced α (the decoder reads the
// reference's previous word, so every reference word has a row: seq2seq_teacher_alignment), its
// argmax against the pair's reference alignment, summed over the pairs. is_alignment: measured =
// all.share(), bound 0.8, partly 0.5; follows_reorderings: the same on the words whose source word
// is at another position (inconclusive when there are none, or no words at all).
struct TestAlignmentStudy {
  std::size_t sentences = 0;
  AlignmentScore all, reordered;
  Verdict is_alignment, follows_reorderings;
};
// Adds one pair's weights (T, S) to the running counts (all words; only the moved ones).
void add_alignment_counts(TestAlignmentStudy& s, const Mat& weights, const SentencePair& pair);
// Judges the counts gathered so far (sets the two verdicts).
void judge_test_alignment(TestAlignmentStudy& s);
TestAlignmentStudy test_alignment_study(const Seq2Seq& m, const std::vector<SentencePair>& pairs,
                                        const Vocab& src_vocab, const Vocab& tgt_vocab);

// Bahdanau against no attention by length (chapter 01).
struct AttentionGainStudy {  // figures as printed
  double attention_first = 0.0, attention_last = 0.0, baseline_last = 0.0;
  double attention_drop = 0.0;  // 1 − last/first of the attention model
  // helps_long: attention's BLEU at the longest bucket above the baseline's by more than 5 points;
  // keeps_length: attention_drop at most 0.05 (partly 0.15).
  Verdict helps_long, keeps_length;
};
AttentionGainStudy judge_attention_gain(const EvalResult& attention, const EvalResult& baseline);

// The outputs that differ from their reference, over every pair `eval` holds (eval.hyps, eval.refs):
// how many, how many of them run past the reference's end (token accuracy does not count those
// extra words), and one to show: the shortest that runs past the end, else the shortest wrong one
// (example = eval.refs.size() when every output is right).
struct WrongOutputs {
  std::size_t judged = 0, wrong = 0, too_long = 0;
  std::size_t example = 0;
};
WrongOutputs wrong_outputs(const EvalResult& eval);

// ---- chapter 02: Luong against Bahdanau ---------------------------------------------------------
// How big the compared models are, counted from their weights: each model's parameters by part
// (parameter_groups) and in all; the parts whose count is not the same in every model; and whether
// every model has the same widths (E, H per encoder direction, Hd, A: Seq2SeqConfig).
struct ModelSizes {
  std::vector<std::string> names;                       // as given
  std::vector<std::map<std::string, std::size_t>> parts;  // per model: parameter_groups
  std::vector<std::size_t> totals;                      // per model: parameter_count
  std::vector<std::string> parts_differing;             // every part name, in order, whose count differs
  bool same_widths = true;
  std::size_t smallest = 0, largest = 0;                // indices into names (the first on ties)
};
ModelSizes model_sizes(const std::vector<std::pair<std::string, const Seq2Seq*>>& models);
// Bounds of "matches": every by-length figure (BLEU, exact match %, token accuracy %) within 3
// points of Bahdanau's in every bucket; within 10 is "close" (partly).
inline constexpr double kMatchPoints = 3.0, kClosePoints = 10.0;
struct MetricGap {
  double gap = 0.0;     // model − reference as printed, signed, the largest |·| over the buckets
  std::string bucket;   // where it is
};
struct MatchStudy {
  std::string model, reference;
  MetricGap bleu, exact, token;
  std::string worst_metric;  // "bleu", "exact", "token": the largest |gap| of the three
  MetricGap worst;
  Verdict matches;           // measured = |worst.gap|, bound kMatchPoints, partly kClosePoints
  // The checkpoint judged: the training step whose weights it holds (its best validation BLEU) of
  // the steps it was trained for (0, 0: not known). At the last step the model may still have been
  // improving, so the gaps are judged where training stopped, not where the model would settle.
  std::size_t best_step = 0, steps = 0;
  bool best_at_last_step() const { return steps > 0 && best_step == steps; }
};
MatchStudy judge_match(const std::string& model, const EvalResult& m, const std::string& reference,
                       const EvalResult& r);
// The comparison whose largest gap is smallest (the first of equals): the model closest to the
// reference over every metric and bucket. Throws std::invalid_argument when matches is empty.
const MatchStudy& closest_match(const std::vector<MatchStudy>& matches);

// One trained Luong model's scores at decoder step t of its own greedy trace of a sentence.
struct ScoreView {
  Mat h_t;      // (1, Hd)
  Mat H;        // (S, He) its encoder states
  Vec scores;   // (S,) score(h_t, h̄_s) with the model's own score function and weights
  std::size_t top = 0;  // the source position of the largest score
};
ScoreView luong_score_view(const Seq2Seq& m, const DecodeTrace& tr, std::size_t t);

// The general model's weights at step t, softmax over every source word (global) and over the
// local-m window |s − p_t| ≤ half_width, p_t = min(t, S − 1) (t and s from 0), from the same
// scores; the window's first and last source position after the sentence's ends cut it.
struct WindowViews {
  Vec global, local_m;
  std::size_t centre = 0, first = 0, last = 0;
  std::size_t words() const { return last - first + 1; }
};
WindowViews window_views(const Seq2Seq& m, const DecodeTrace& tr, std::size_t t, std::size_t half_width);
// The first output step r (from 0, before `steps`) whose reference source word lies outside the
// local-m window |s − min(r, S − 1)| ≤ half_width: where p_t = t misses the word to translate;
// `steps` when every step's word is inside.
std::size_t first_step_outside_window(const std::vector<int>& alignment, std::size_t src_len, std::size_t steps,
                                      std::size_t half_width);
// The local-p model's α row at step t and its sum: eq. 10 multiplies the softmax by a Gaussian
// after normalising, so the sum is below 1 unless p_t sits on the chosen word.
struct LocalPStepView {
  Vec alpha;
  double p = 0.0, sum = 0.0;
};
LocalPStepView local_p_step_view(const DecodeTrace& tr, std::size_t t);

// Local-p's predicted centre p_t beside the source position each output word translates
// (S for <eos> and for words past the reference): (steps, 2).
Mat local_p_positions(const DecodeTrace& tr, const SentencePair& pair);

// The cost of one score function (time_score_rounds) at each (S, hidden), per kind in
// kScoreKinds order; gains are Bahdanau's seconds / the kind's. spread: per kind, the slowest of
// the timing rounds / the fastest (empty: taken as 1, rounds that agree).
inline const std::vector<std::string> kScoreKinds = {"bahdanau", "dot", "general", "concat"};
// What one call (B = 1) computes, counted from the code (attn/attention/additive_attention.cpp,
// luong_attention.cpp): multiply-adds (matrix products and the plain loops alike), tanh calls and
// exp calls (the softmax's). A = attention width.
//   bahdanau: W_a·s (hidden·A) + v_aᵀ on S rows (S·A) + context (S·hidden); S·A tanh; S exp
//   dot:      h_tᵀh̄_s (S·hidden) + context (S·hidden); S exp
//   general:  h_t·W_a (hidden²) + (h_t·W_a)·h̄_s (S·hidden) + context (S·hidden); S exp
//   concat:   h_t·W_c[:Hd] (hidden·A) + v_cᵀ on S rows (S·A) + context (S·hidden); S·A tanh; S exp
struct ScoreOps {
  double multiply_adds = 0.0, tanh = 0.0, exp = 0.0;
};
ScoreOps score_ops(const std::string& kind, std::size_t src_len, std::size_t hidden, std::size_t attn);
struct ScoreCostRow {
  std::size_t src_len = 0, hidden = 0;
  std::vector<double> seconds;  // one per kScoreKinds (the median round)
  std::vector<double> spread;   // one per kScoreKinds, ≥ 1
  // Round by round (time_score_rounds: the kinds interleaved), seconds per kind; empty when only
  // the medians are known.
  std::vector<std::vector<double>> rounds;
  double gain(std::size_t kind) const { return seconds[0] / seconds[kind]; }
  double spread_of(std::size_t kind) const { return kind < spread.size() ? spread[kind] : 1.0; }
  // How far the ratio seconds[a] / seconds[b] moved between rounds: with rounds, the second-largest
  // round's ratio ÷ the second-smallest (both kinds timed in the same round, under the same load);
  // without, the two timings' spreads multiplied.
  double ratio_spread(std::size_t a, std::size_t b) const;
  double gain_spread(std::size_t kind) const { return ratio_spread(0, kind); }
  double max_spread() const;  // the largest spread in the row
};
struct ScoreCostStudy {
  std::vector<ScoreCostRow> rows;
  // Dot's gain at the shortest and the longest S (both at the smallest hidden), and at the widest hidden.
  double dot_short = 0.0, dot_long = 0.0, dot_wide = 0.0;
  std::size_t short_len = 0, long_len = 0, wide_len = 0, small_hidden = 0, wide_hidden = 0;
  double max_spread = 1.0;  // the largest spread of any timing in the table
  double max_ratio_spread = 1.0;  // the largest ratio spread against Bahdanau in the table
  // Dot's own time from the shortest to the longest S (smallest hidden) against the S ratio that
  // its S·hidden multiply-adds predict; growth_off = how far apart the two are (≥ 1, either way);
  // growth_noise = the two dot timings' spreads multiplied.
  double dot_growth = 0.0, predicted_growth = 0.0, growth_off = 1.0, growth_noise = 1.0;
  // The two rows' gain spreads multiplied (at least 1.1): what dot_gain_grows is judged against.
  double trend_noise = 1.1;
  // On a log scale, each judged against the rounds' spread, so that timings which disagree between
  // rounds get no firm verdict (inconclusive):
  // dot_row_faster[r]: row r's gain against its own gain spread, judge_greater(ln gain, 0,
  //   ln gain_spread): holds faster beyond it, fails slower beyond it, inconclusive within it;
  //   rows_faster / rows_slower count the rows that hold / fail;
  // dot_faster: holds when every row holds, fails when any row fails, else inconclusive
  //   (measured = rows_faster, bound = the number of rows);
  // dot_gain_grows: judge_greater(ln dot_long, ln dot_short, ln trend_noise): holds rose, fails
  //   fell, inconclusive within the noise;
  // dot_follows_cost: judge_greater(ln 1.5, ln growth_off, ln growth_noise): holds within 1.5× of
  //   S·hidden's prediction, fails further off.
  std::vector<Verdict> dot_row_faster;
  std::size_t rows_faster = 0, rows_slower = 0;
  Verdict dot_faster, dot_gain_grows, dot_follows_cost;
  // What the operation counts explain, at the row `ops_row` (the longest S at the smallest hidden):
  // ops[k] per kind there; general_mads = general's multiply-adds ÷ Bahdanau's (above 1: more work).
  std::size_t ops_row = 0;
  std::vector<ScoreOps> ops;
  double general_mads = 1.0;
  // mads_explain: do multiply-adds alone predict which of general and Bahdanau is faster? At each
  //   row, judge_greater(ln gain(general), 0, ln ratio spread) against the side the multiply-add
  //   ratio predicts: holds when every row is on the predicted side beyond its spread, fails when
  //   any row is on the other side beyond it, else inconclusive (measured = rows against, bound 0).
  // tanh_split: are the two kinds with S·A tanh calls (Bahdanau, concat) both slower than the two
  //   without (dot, general)? At each row, each of the four (tanh kind, tanh-free kind) pairs
  //   judged against its own ratio spread: holds when every pair of every row is slower beyond its
  //   spread, fails when any pair is faster beyond it, else inconclusive; split_rows: rows where
  //   every pair holds.
  // split_rounds / split_total: over every row's rounds, the rounds in which both tanh kinds took
  //   longer than both tanh-free kinds (the order, round by round; 0 of 0 without rounds).
  // order_in_rounds: did that order hold in most rounds? measured = split_rounds, bound =
  //   split_total / 2: holds above half, fails at half or below, inconclusive with no rounds. Pooled
  //   over every size, so one slow round moves it by one count, not a size's verdict (what the
  //   default lesson reports; the per-size verdicts above are --full's).
  // concat_gain_low / high: the smallest and largest Bahdanau ÷ concat over the rows — two kinds with
  //   the same counted work, so how far apart they run is not the score's arithmetic.
  Verdict mads_explain, tanh_split, order_in_rounds;
  double concat_gain_low = 1.0, concat_gain_high = 1.0;
  std::size_t mads_rows_against = 0, split_rows = 0, split_rounds = 0, split_total = 0;
  std::vector<std::size_t> split_row_index;  // the rows counted in split_rows, in table order
};
ScoreCostStudy judge_score_cost(std::vector<ScoreCostRow> rows);
// Times every kind at each (S, hidden), interleaved round by round (time_score_rounds); A =
// hidden/2; 7 rounds of 150 calls (40 above hidden 256).
ScoreCostStudy score_cost_study(const std::vector<std::pair<std::size_t, std::size_t>>& sizes);

// The source article "Attention: from Seq2Seq to the Transformer revolution" says Luong trains
// 1.5–2× faster than Bahdanau (no measurement is published).
inline constexpr double kArticleSpeedupLow = 1.5, kArticleSpeedupHigh = 2.0;
struct TrainStepStudy {
  std::vector<std::string> models;  // Bahdanau first
  std::vector<double> ms;           // median ms per step, same order
  std::vector<double> spreads;      // per model, second-slowest step / second-fastest (≥ 1; empty: 1)
  double general_speedup = 0.0, dot_speedup = 0.0;  // Bahdanau's ms / the model's, rounded to 0.01 as printed
  double general_spread = 1.0;  // the ratio's spread: Bahdanau's timing spread × general's
  std::size_t fastest = 0;  // the index of the smallest ms (the first of equals)
  std::size_t reps = 0;     // steps timed per model (train_step_study; 0 when judged from given times)
  // claim: measured = ln(general_speedup / 1.5), bound = ln general_spread — holds when measured ≥
  // bound (at or above 1.5× beyond the spread; exactly 1.5× with no spread holds), fails when
  // measured < −bound, inconclusive within; beyond: the same against 2.0 (the range's top).
  Verdict claim, beyond;
};
// models: names of config_for, "bahdanau", "luong_dot" and "luong_general" among them; spreads:
// one per model, or empty (timings taken as exact).
TrainStepStudy judge_train_steps(std::vector<std::string> models, std::vector<double> ms,
                                 std::vector<double> spreads = {});
// Does global-general gain less per training step than its score function alone gains per call?
// call_gain: step 5's general gain at src_len (the smallest hidden), spread its ratio's spread;
// smaller: judge_greater(ln call_gain, ln step_gain, ln spread) (holds: the step gains less beyond
// the spread; fails: more); inconclusive (NaN call_gain) when step 5 has no row at src_len.
struct StepGainStudy {
  double call_gain = 0.0, step_gain = 0.0, spread = 1.0;
  std::size_t src_len = 0, hidden = 0;
  Verdict smaller;
};
StepGainStudy judge_step_gain(const ScoreCostStudy& cost, const TrainStepStudy& steps, std::size_t src_len);
TrainStepStudy train_step_study(const std::vector<std::string>& models, std::size_t src_vocab, std::size_t tgt_vocab,
                                std::size_t batch, std::size_t src_len, std::size_t reps);

}  // namespace attn
