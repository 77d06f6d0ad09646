// Chapter 08's measurements, each with its verdict (numerics only; attn/present/transformer_report.hpp
// prints them). Every threshold a verdict uses is here, beside the claim it tests.
//   parameter_parts        step 1: the parameters by part
//   encoder_sharpness      step 2: how widely each encoder head spreads its weight
//   decoder_mask_check           step 3: no weight above the diagonal of the decoder's self-attention
//   cross_head_alignment   step 4: which cross-attention head points at the aligned source word
//   row_moments            step 5: each row's mean and standard deviation (LayerNorm's effect)
//   training_summary       step 6: the learning-rate schedule and the label-smoothing floor
//   run_evaluations, length_counts, compare_buckets, first_failure, diagnose_beam,
//   judge_generalises      step 7: BLEU by length, beam vs greedy, training vs test BLEU
//   norm_placement_study   step 8: ‖∂L/∂W2‖ of each layer's FFN at initialisation (Xiong et al. 2020)
//   cost_study, account_training_time   step 9: parameters and FLOPs; the recorded training time
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention/alignment.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/models/seq2seq_eval.hpp"
#include "attn/models/transformer_decode.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/studies/transformer_cost.hpp"
#include "attn/studies/transformer_study.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// ---- step 1 -------------------------------------------------------------------------------------
struct ParameterParts {
  std::size_t embeddings = 0;  // source and target tables (the target one is tied to the output)
  std::size_t encoder = 0, decoder = 0;
  std::size_t output_bias = 0; // the output layer's bias (V numbers)
  std::size_t final_norms = 0; // Pre-Norm's final LayerNorms of each stack (0 under Post-Norm)
  std::size_t rest = 0;        // output_bias + final_norms
  std::size_t total = 0;
};
ParameterParts parameter_parts(const Transformer& m);

// ---- step 2 -------------------------------------------------------------------------------------
// The lesson's sentence: the first pair of `length` source words whose alignment moves at least
// `moved` words off the diagonal (the first pair when none does). Throws on an empty split.
const SentencePair& lesson_example(const std::vector<SentencePair>& pairs, std::size_t length = 10,
                                   std::size_t moved = 4);
// The example translated greedily, its attention weights and its teacher-forced pass.
struct ExampleRun {
  std::vector<int> src, out;  // ids; out without <eos>
  TransformerAttention att;
  TransformerTape tape;
};
ExampleRun run_example(const Transformer& m, const SentencePair& pair, const Vocab& src_vocab);

constexpr double kBroadHead = 0.25;  // a head whose rows' largest weight averages below this spreads widely
struct HeadSharpness {
  std::size_t layer = 0, head = 0;
  double mean_max = 0.0;  // the mean over rows of the row's largest weight
  double mean_entropy = 0.0;  // the mean over rows of −Σ w·ln w, in nats (ln S: uniform; 0: one word)
};
struct EncoderSharpness {
  std::vector<HeadSharpness> heads;  // layer by layer
  std::size_t sharpest = 0;          // index into heads
  double uniform = 0.0;              // 1/S: every weight equal
  double uniform_entropy = 0.0;      // ln S: a uniform row's entropy
  std::size_t broad = 0;             // heads with mean_max < kBroadHead
  Verdict mostly_broad;              // judge_mostly_broad(broad, heads)
  // In the sharpest head: the source column that is the largest weight of the most rows.
  std::size_t most_read = 0, most_read_rows = 0;
  // In the sharpest head, each row's largest weight and its column (the heatmap's 0.2-wide shades
  // cannot tell two close cells apart).
  std::vector<int> row_argmax;
  std::vector<double> row_max;
};
// Most heads spread widely: a share of broad heads ≥ 0.5 holds; no heads: inconclusive.
Verdict judge_mostly_broad(std::size_t broad, std::size_t heads);
EncoderSharpness encoder_sharpness(const Tensor4& enc_self);

// ---- step 3 -------------------------------------------------------------------------------------
struct DecoderMaskCheck {
  double above = 0.0;  // total weight above the diagonal, every layer and head
  Verdict masked;      // judge_masked(above)
  // Layer 0, head 0: of the rows after the first (which sees only <bos>), how many put their
  // largest weight on <bos> (column 0); parks_on_bos: judge_parks_on_bos(bos_rows, rows).
  std::size_t bos_rows = 0, rows = 0;
  Verdict parks_on_bos;
  std::vector<int> row_argmax;    // layer 0, head 0: each row's largest weight and its column
  std::vector<double> row_max;
};
// Most rows park their weight on <bos>: a share ≥ 0.5 holds; no rows: inconclusive.
Verdict judge_parks_on_bos(std::size_t bos_rows, std::size_t rows);
// The mask works: exactly 0 above the diagonal holds (exp(−∞) is exactly 0); anything more fails.
Verdict judge_masked(double above);
DecoderMaskCheck decoder_mask_check(const Tensor4& dec_self);

// ---- step 4 -------------------------------------------------------------------------------------
struct CrossHeadScore {
  std::size_t layer = 0, head = 0;
  AlignmentScore score;  // argmax_alignment of the head's rows against the reference alignment
};
struct CrossHeads {
  std::vector<CrossHeadScore> heads;  // layer by layer
  std::size_t best = 0;               // index into heads: the most hits (the first on ties)
  Verdict best_aligns;                // judge_alignment (attn/studies/interpretability_claims.hpp)
};
CrossHeads cross_head_alignment(const Tensor4& cross, const std::vector<int>& reference);
// The same over many pairs: each head's hits and scored words summed over every pair, read off the
// cross-attention of the reference translation fed in teacher-forced (the decoder reads the
// reference, so row i writes reference word i, whose aligned source word the pair records); the
// verdict is judge_alignment of the best head's share over all of them.
CrossHeads cross_head_alignment(const Transformer& m, const std::vector<SentencePair>& pairs,
                                const Vocab& src_vocab, const Vocab& tgt_vocab);

// ---- step 5 -------------------------------------------------------------------------------------
struct RowMoments {
  std::vector<double> mean, std;  // per row, over the row's d values (population std)
};
RowMoments row_moments(const Mat& x);

// ---- step 6 -------------------------------------------------------------------------------------
// The smallest label-smoothed cross-entropy any model can reach: the entropy of the smoothed target
// q = (1 − ε)·onehot + ε/V, −(1 − ε + ε/V)·ln(1 − ε + ε/V) − (V − 1)·(ε/V)·ln(ε/V), in nats.
double label_smoothing_floor(double epsilon, std::size_t vocab);
// The width of step 6's curves, in cells (one character each).
constexpr std::size_t kCurveCells = 50;
// What the gradient-norm sparkline shows, read from the same cells it draws (cell c averages steps
// [c·N/cells, (c+1)·N/cells), attn/present/sparkline.hpp): the cell where warm-up ends, the lowest
// cell up to it (the dip after the first steps) and the highest cell after that dip.
struct GradNormReading {
  std::size_t steps = 0, cells = 0;  // cells: the sparkline's width (at most steps)
  std::int64_t warmup = 0;
  std::size_t warmup_cell = 0;       // the cell holding step `warmup` (counted from 1)
  std::size_t dip_cell = 0, peak_cell = 0;
  double first = 0.0, last = 0.0, dip = 0.0, peak = 0.0;  // first/last: single steps; dip/peak: cells
  double first_cell = 0.0, last_cell = 0.0;                 // the means the sparkline's end cells draw
  // clip: the training's clip; clipped: the steps whose norm before clipping exceeds it (their
  // gradient was scaled by clip/g before Adam).
  double clip = 0.0;
  std::size_t clipped = 0;
  // peak_at_warmup: judge_at_most(|peak_cell − warmup_cell| / cells, kPeakNearWarmup): the largest
  // gradients come where the learning rate is largest.
  Verdict peak_at_warmup;
};
constexpr double kPeakNearWarmup = 0.1;  // this course's cut-off: within a tenth of the run
GradNormReading grad_norm_reading(const std::vector<float>& grad_norm, std::int64_t warmup, std::size_t cells,
                                  double clip = TransformerTrainConfig{}.clip);
struct TrainingSummary {
  std::size_t steps = 0, batch = 0, train_pairs = 0, d_model = 0, vocab = 0;
  std::int64_t warmup = 0;
  double lr_factor = 0.0, peak_lr = 0.0;  // the rate at step = warmup
  double passes = 0.0;                    // steps · batch / train_pairs
  double smoothing = 0.0, floor = 0.0;    // label_smoothing_floor(smoothing, vocab)
  double loss_first = 0.0, loss_last = 0.0;
  // A uniform guess over the V words scores ln V against any target that sums to 1, smoothed or
  // not; above_uniform: judge_greater(loss_first, uniform_loss, 0): the untrained model starts worse.
  double uniform_loss = 0.0;
  Verdict above_uniform;
  std::size_t best_step = 0;              // the step whose weights the checkpoint holds
  Verdict near_floor;                     // judge_near_floor(loss_last, floor)
  GradNormReading grad;                   // grad_norm_reading(curves.grad_norm, warmup, kCurveCells)
  // Why the first loss is above ln V: the model training starts from (seed start_seed), measured by
  // initial_predictions (attn/studies/transformer_study.hpp); start_explains:
  // judge_greater(start.unrelated_loss, uniform_loss, 0): its predictions, not uniform, cost more
  // than a uniform guess against a target they know nothing of. Inconclusive until explain_first_loss.
  InitialPredictions start;
  std::uint64_t start_seed = 0;
  std::size_t start_batch = 0;
  Verdict start_explains;
};
void explain_first_loss(TrainingSummary& s, const InitialPredictions& start, std::uint64_t seed, std::size_t batch);
// This course's test of the training loss (no paper's): at most kNearFloor nats above the floor
// holds, at most 0.5 partly.
constexpr double kNearFloor = 0.1;
Verdict judge_near_floor(double loss, double floor);
// From the checkpoint's metadata ("steps", "batch", "warmup", "lr_factor", "best_step") and curves.
TrainingSummary training_summary(const Metadata& md, const TrainingCurves& curves, std::size_t train_pairs,
                                 std::size_t d_model, std::size_t vocab, double smoothing = kLabelSmoothing);
// A whole number or a decimal from the metadata; 0 when absent or not a number.
double metadata_number(const Metadata& md, const std::string& key);


// Was the model still improving when training stopped? The validation BLEU's last rise, from the
// curve's last two points: last − previous ≥ kStillImproving holds (still rising), below fails
// (levelled off); fewer than two points: inconclusive.
constexpr double kStillImproving = 0.5;  // BLEU points: this course's cut-off
Verdict judge_still_improving(double last_rise);

// ---- step 7 -------------------------------------------------------------------------------------
struct TranslatorJob {
  std::string name;
  std::function<EvalResult()> run;
  Metadata checkpoint = {};  // the translating model's checkpoint metadata, when it has one
  TrainingCurves curves = {};  // and its training curves
  std::size_t parameters = 0;  // the translating model's trainable floats (0: not known)
};
struct ModelEval {
  std::string name;
  EvalResult result;
  double cpu_seconds = 0.0;  // CPU time of the thread that ran it (waiting for a core not counted)
  Metadata checkpoint = {};  // the job's
  TrainingCurves curves = {};
  std::size_t parameters = 0;  // the job's
};
// Every job on its own thread at once (each should use single-threaded BLAS), results in job order;
// on_done(done, total) after each one finishes, from the calling thread.
std::vector<ModelEval> run_evaluations(const std::vector<TranslatorJob>& jobs,
                                       const std::function<void(std::size_t, std::size_t)>& on_done = {});
const ModelEval& eval_named(const std::vector<ModelEval>& evals, const std::string& name);

// The first n training pairs (the split is in random order): training BLEU on as many sentences as
// the test split.
std::vector<SentencePair> training_sample(const ToyCorpus& corpus, std::size_t n);

struct LengthCounts {
  std::size_t shorter = 0, same = 0, longer = 0;  // outputs against their reference, in words
  std::size_t hyp_words = 0, ref_words = 0;
};
LengthCounts length_counts(const EvalResult& r);

struct BucketComparison {
  std::size_t at_least = 0, buckets = 0;  // buckets where a's BLEU ≥ b's
  double lowest = 0.0;                    // a's lowest bucket BLEU
};
BucketComparison compare_buckets(const EvalResult& a, const EvalResult& b);

// The first pair of `bucket` (source length) whose output is not its reference, in the pairs'
// order, and where it stands among all of the bucket's failures.
struct FailureExample {
  bool found = false;
  std::size_t index = 0;       // into the pairs
  Tokens hyp;
  std::size_t first_wrong = 0; // the first position where hyp and reference differ
  std::size_t wrong_words = 0; // positions of the reference that the output gets wrong
  // Every failure of the bucket by wrong_words: how many, their median, and how many have fewer
  // (milder) or more (worse) wrong words than this one. typical: judge_typical_failure.
  std::size_t failures = 0, milder = 0, worse = 0;
  double median_wrong = 0.0;
  Verdict typical;
  // The failures by cause (they add up to `failures`): every reference word right and words added
  // after its end (length alone); words wrong at the reference's length; words wrong and a
  // different length.
  std::size_t length_only = 0, wrong_same_length = 0, wrong_other_length = 0;
  // The word written at first_wrong, when the reference has it earlier: its last position there
  // (-1: it does not), and the source words the two positions translate (-1: no alignment).
  int copied_from = -1;
  int copied_source = -1, wanted_source = -1;
};
FailureExample first_failure(const std::vector<SentencePair>& pairs, const EvalResult& r, const LengthBucket& bucket);
// The example is typical when neither the milder nor the worse failures are more than
// kTypicalShare of all of them: judge_at_most(max(milder, worse) / failures, kTypicalShare).
constexpr double kTypicalShare = 0.75;
Verdict judge_typical_failure(std::size_t milder, std::size_t worse, std::size_t failures);

// The model's own score of an output Y (without <eos>): s(Y) = Σ log p(y_i | y_<i, x) / lp(|Y| + 1),
// <eos> included, lp of attn/models/transformer_decode.hpp — what beam search maximises.
double beam_score(const Transformer& m, const std::vector<int>& src, const std::vector<int>& out, double alpha);

// Why beam 4 can lose to greedy: on the sentences where the two outputs differ, does the search find
// a higher score (a working search), and does the model score its wrong output above the reference
// (a model error, not a search error)?
struct BeamDiagnosis {
  LengthCounts greedy, beam;
  std::size_t differ = 0;             // sentences whose beam output differs from greedy's
  std::size_t beam_higher = 0;        // of those, beam's output has the higher s(Y)
  std::size_t beam_exact = 0, greedy_exact = 0;  // of those, exactly the reference
  std::size_t beam_wrong = 0;         // of those, beam's output is not the reference
  std::size_t reference_lower = 0;    // of beam_wrong, the reference has the lower s(Y)
  std::size_t beam_shorter = 0;       // of `differ`, beam's output is the shorter one
  // Over every sentence in a bucket: exactly the reference, each search; and the BLEU of each (overall).
  std::size_t beam_exact_all = 0, greedy_exact_all = 0, sentences = 0;
  double beam_bleu = 0.0, greedy_bleu = 0.0;
  // The same BLEU in its parts (corpus_bleu over the same sentences): total lengths c (outputs) and r
  // (references), brevity penalty BP, and the precisions' geometric mean (p₁p₂p₃p₄)^¼ = BLEU / BP.
  BleuScore beam_parts, greedy_parts;
  double beam_precision = 0.0, greedy_precision = 0.0;
  // Does length explain the BLEU gap? judge_length_explains(BPs and BLEUs of beam and greedy).
  Verdict length_explains;
  // Do BLEU and exact match rank beam and greedy the same way? judge_metrics_agree(beam − greedy
  // BLEU, beam − greedy exact matches).
  Verdict metrics_agree;
  double alpha = 0.0;
  Verdict ends_early;                 // judge_greater(beam.shorter, greedy.shorter, 0): beam stops sooner
  Verdict search_works;               // judge_search_works(beam_higher, differ)
  Verdict model_error;                // judge_model_error(reference_lower, beam_wrong)
};
// Two measures of one comparison agree when their differences have the same sign: holds; opposite
// signs fail (one prefers beam, the other greedy); a tie in either is inconclusive. measured = the
// product of the two differences.
Verdict judge_metrics_agree(double bleu_diff, double exact_diff);
// BLEU = BP · P, so beam's BLEU over greedy's is (BP_beam / BP_greedy) · (P_beam / P_greedy). The
// share of the gap that length explains is ln(BP_beam / BP_greedy) / ln(BLEU_beam / BLEU_greedy)
// (measured): at least kLengthShare holds (most of the gap is the brevity penalty), below fails (the
// gap is in the n-gram precisions); BLEUs within kBleuTie points of each other (no gap to explain),
// or a zero or non-finite score, are inconclusive. BLEU and BP on the 0–1 scale (corpus_bleu's).
constexpr double kLengthShare = 0.5;  // this course's cut-off: "most of the gap"
constexpr double kBleuTie = 0.05;     // BLEU points (0–100): below the printed precision
Verdict judge_length_explains(double beam_bp, double greedy_bp, double beam_bleu, double greedy_bleu);
// The search finds what it looks for: beam's score is the higher in ≥ 90% of the differing sentences.
Verdict judge_search_works(std::size_t beam_higher, std::size_t differ);
// The losses are the model's: the reference scores below beam's wrong output in ≥ 50% of them.
Verdict judge_model_error(std::size_t reference_lower, std::size_t beam_wrong);
// Every count is over the pairs whose source lies in one of greedy's length buckets: the sentences
// its BLEU covers (a pair shorter than the first bucket is left out, as BLEU leaves it out).
BeamDiagnosis diagnose_beam(const Transformer& m, const std::vector<SentencePair>& pairs, const EvalResult& greedy,
                            const EvalResult& beam, const Vocab& src_vocab, const Vocab& tgt_vocab,
                            double alpha = kLengthPenaltyAlpha);

// No overfitting: training BLEU at most 2 points above test BLEU holds, at most 5 partly.
constexpr double kOverfitGap = 2.0;
Verdict judge_generalises(double train_bleu, double test_bleu);

// Pre-Norm beats Post-Norm on the longest sentences: BLEU higher by more than 1 point holds,
// lower by more than 1 fails, else inconclusive.
Verdict judge_pre_better(double pre_bleu, double post_bleu);

// Step 7's evaluations are named: "<model>_greedy", "<model>_beam4", "<other>_greedy" (the other
// norm's model, when shipped), "<model>_train" (greedy on training_sample), model =
// "transformer_post" or "transformer_pre"; and the RNN models' names.
std::string transformer_model_name(const std::string& norm);  // "post" → "transformer_post"
std::string other_norm(const std::string& norm);              // "post" ↔ "pre"
// Which weights a checkpoint holds: of its `steps` training steps, the best by validation BLEU.
struct CheckpointNote {
  std::size_t steps = 0, best_step = 0;
  double valid_bleu = 0.0;
  std::string seed;  // "" when not recorded
  // The validation curve's last two points (steps and BLEU) and judge_still_improving(last − previous).
  double previous_step = 0.0, last_step = 0.0, previous_bleu = 0.0, last_bleu = 0.0;
  Verdict still_improving;
};
CheckpointNote checkpoint_note(const Metadata& md, const TrainingCurves& curves = {});
struct TranslationFindings {
  std::string model, other;             // transformer_model_name of this and the other norm
  bool other_present = false;
  CheckpointNote own, other_checkpoint;  // this model's and the other norm's (when present)
  BucketComparison vs_bahdanau;         // this model greedy against chapter 01's
  BeamDiagnosis beam;
  double test_bleu = 0.0, beam_bleu = 0.0, train_bleu = 0.0, valid_bleu = 0.0;
  double test_exact = 0.0, bahdanau_bleu = 0.0, bahdanau_exact = 0.0;  // overall
  std::size_t train_sentences = 0;
  Verdict generalises;                  // judge_generalises(train_bleu, test_bleu)
  // The same on the longest bucket: greedy BLEU on the training sample's long sentences against
  // the test split's (train_long_sentences of them in the sample).
  double train_long = 0.0, test_long = 0.0;
  std::size_t train_long_sentences = 0, test_long_sentences = 0;
  Verdict generalises_long;             // judge_generalises(train_long, test_long)
  double post_long = 0.0, pre_long = 0.0;  // greedy BLEU on the longest bucket
  std::string long_bucket;              // its label
  Verdict pre_better_long;              // judge_pre_better (inconclusive without the other model)
  FailureExample failure;               // the first wrong greedy output on the longest bucket
};
// own: this model's checkpoint metadata (its validation BLEU is the one printed) and curves.
TranslationFindings translation_findings(const std::vector<ModelEval>& evals, const std::string& norm,
                                         const Transformer& m, const ToyCorpus& corpus, const Metadata& own,
                                         const TrainingCurves& own_curves = {});

// ---- step 8 -------------------------------------------------------------------------------------
// Xiong et al. 2020, Fig. 3: at initialisation, the gradient norm of each layer's FFN W2 grows with
// the layer index under Post-Norm and stays level under Pre-Norm.
// (ffn_w2_grad_norms, attn/studies/transformer_study.hpp, measures them.)
struct NormPlacementStudy {
  std::size_t layers = 0, batch = 0;
  FfnGradNorms post, pre;
  // last layer / first layer, per stack
  double post_enc = 0.0, post_dec = 0.0, pre_enc = 0.0, pre_dec = 0.0;
  // Pre-Norm, every layer against layer 0: the layer whose ratio lies farthest from 1, and that ratio
  // (farthest_from_first); level is judged on it, so one layer outside the band is enough to miss it.
  std::size_t pre_enc_far_layer = 0, pre_dec_far_layer = 0;
  double pre_enc_far = 0.0, pre_dec_far = 0.0;
  Verdict post_grows_enc, post_grows_dec;  // judge_grows(post_enc), judge_grows(post_dec)
  Verdict pre_level_enc, pre_level_dec;    // judge_level(pre_enc_far), judge_level(pre_dec_far)
};
// Of layers 1…n−1, the one whose norm over layer 0's lies farthest from 1: {layer, ratio}; {0, NaN}
// with fewer than two layers.
std::pair<std::size_t, double> farthest_from_first(const std::vector<double>& norms);
// This course's tests of the paper's picture (Xiong et al. give no number):
// grows with depth: last / first ≥ kGrows holds, ≥ 1.1 partly; below fails.
constexpr double kGrows = 1.25, kLevel = 0.1;
Verdict judge_grows(double last_over_first);
// Stays level: |ratio − 1| ≤ kLevel holds, ≤ 0.25 partly; beyond fails (ratio: a layer over layer 0).
Verdict judge_level(double layer_over_first);
NormPlacementStudy norm_placement_study(const TransformerModelConfig& cfg, const ToyCorpus& corpus,
                                        std::size_t layers = 6, std::size_t batch = 32, std::uint64_t seed = 1);

// --norm-study's reading of warmup_study (attn/studies/transformer_study.hpp): does warm-up lower
// the loss of each norm, and is Pre-Norm lower than Post-Norm? Xiong et al. 2020 find that
// Post-Norm needs warm-up and Pre-Norm trains without it. Diverged runs (NaN) are counted, and
// left out of the means.
struct WarmupArm {
  double mean = 0.0, sd = 0.0;  // over the finite runs' losses (sd: sample standard deviation)
  std::size_t runs = 0, diverged = 0;
};
struct WarmupEffect {
  WarmupArm with, without;
  double noise = 0.0;  // two standard errors of without.mean − with.mean (NaN under 2 runs each)
  // helps: more runs diverged without warm-up than with → holds (fewer → fails); otherwise
  // judge_greater(without.mean, with.mean, noise).
  Verdict helps;
};
struct WarmupFindings {
  std::vector<WarmupRun> runs;
  std::size_t steps = 0, seeds = 0;
  WarmupEffect post, pre;
  WarmupArm post_all, pre_all;  // each norm over both schedules
  double noise = 0.0;           // two standard errors of post_all.mean − pre_all.mean
  Verdict pre_lower;            // judge_greater(post_all.mean, pre_all.mean, noise)
};
WarmupFindings warmup_findings(std::vector<WarmupRun> runs, std::size_t steps);

// ---- step 9 -------------------------------------------------------------------------------------
// The lengths step 9 prices: kCostLengths[0] is the one FLOPs/token is given at.
inline constexpr std::size_t kCostLengths[] = {32, 512, 4096};
struct CostRow {
  double params = 0.0, flops_per_token = 0.0;  // FLOPs per token at T = kCostLengths[0]
  // At each of kCostLengths: projections + scores, and the score terms (Q·Kᵀ and weights·V) alone,
  // each as a share of all FLOPs (every layer; a decoder layer counts its self- and cross-attention).
  double share[3] = {}, score_share[3] = {};
};
CostRow cost_row(const TransformerConfig& c);
struct CostStudy {
  CostRow base, ours;                  // Vaswani et al.'s base model, and ours by the same formula
  std::size_t built = 0;               // parameter_count of the model as built
  std::size_t source_table = 0;        // src_vocab · d_model: the table the formula shares with the target
  std::size_t source_words = 0, d_model = 0, d_ff = 0;
  std::size_t output_bias = 0;         // tgt_vocab: the output layer's bias, which the formula leaves out
  std::size_t final_norms = 0;         // Pre-Norm's final LayerNorms (parameter_parts), also left out
};
CostStudy cost_study(const Transformer& m);

// What the checkpoint's recorded training time measures, judged like with like. Two stored
// figures of the same training: the checkpoint's wall clock (recorded on a shared machine) and the
// same training retrained alone on the idle machine (README.md), which gave bit-identical weights:
// their ratio says how much of the recording is waiting. The step timed now is compared with the
// idle run's time per step against the spread of the steps timed now, and never decides a verdict
// about the stored figures. When no idle figure is known (a model trained now, or another
// checkpoint), the recorded time is compared with the CPU work measured now instead.
struct TrainingTimeAccount {
  double recorded_s = 0.0;               // the checkpoint's train_seconds: wall clock of the whole run
  std::size_t steps = 0, validations = 0, valid_sentences = 0;
  double step_cpu_ms = 0.0, step_wall_ms = 0.0;  // one step, measured now (time_transformer_step): medians
  double step_min_cpu_ms = 0.0, step_max_cpu_ms = 0.0;  // the spread of the steps timed now
  double load_now = 0.0;                 // the 1-minute load average when the step was timed (NaN: unknown)
  double step_wall_ratio = 0.0;          // step_wall / step_cpu
  Verdict step_waited;                   // judge_at_least(step_wall_ratio, kStepWaited): the step waited for a core
  double test_cpu_s = 0.0;               // this run's greedy pass over the test split, CPU seconds
  std::size_t test_sentences = 0;
  double valid_cpu_s = 0.0;              // one validation pass: this run's greedy test CPU time × valid/test
  double estimate_s = 0.0;               // steps · step_cpu + validations · valid_cpu (measured now)
  double ratio = 0.0;                    // recorded / estimate
  double mean_train_length = 0.0;        // source words per training sentence (the step is timed at 30)
  Verdict accounted;                     // judge_accounted(ratio): used when alone_s is not known
  double alone_s = 0.0;                  // the same training on an idle machine, when known (0: not known)
  double recorded_over_alone = 0.0;      // recorded / alone (NaN when alone is not known)
  Verdict recorded_waited;               // judge_recorded_waited(recorded_over_alone): both stored
  double alone_step_ms = 0.0;            // alone / steps: the idle run's time per step, validations included
  Verdict alone_step_in_spread;          // judge_in_spread(alone_step_ms, step_min_cpu_ms, step_max_cpu_ms)
  // (median step now − alone_step_ms) / alone_step_ms: how far the median timed now lies from the idle
  // figure, whatever the spread says (negative: below it)
  double median_vs_alone = 0.0;
};
// A step whose wall clock is at least kStepWaited × its CPU time spent the difference waiting.
constexpr double kStepWaited = 1.1;
// The recording is the work: recorded / estimate ≤ 1.5 holds; beyond it the run mostly waited.
Verdict judge_accounted(double recorded_over_estimate);
// The recorded wall clock is mostly waiting: recorded / alone ≥ kRecordedWaited holds (the shared
// machine's run took at least 1.5× the same training alone), below fails; NaN inconclusive.
constexpr double kRecordedWaited = 1.5;  // this course's cut-off
Verdict judge_recorded_waited(double recorded_over_alone);
// A figure against the spread [lo, hi] of the runs timed now: inside holds, outside fails (measured
// = the figure, bound = lo, partly = hi, so a report can say on which side); NaN inconclusive.
Verdict judge_in_spread(double figure, double lo, double hi);
// A stored figure (README.md, "Retrained one at a time on the idle machine"): the wall clock of
// training the shipped model again with nothing else running, 125.2 s for "post", 114.4 s for
// "pre"; 0 for another name.
double retrained_alone_seconds(const std::string& norm);
// alone_s: retrained_alone_seconds of the model when it is the shipped one, else 0; load_now:
// load_average() (attn/studies/peak_flops.hpp) when the step was timed.
TrainingTimeAccount account_training_time(double recorded_s, std::size_t steps, std::size_t validations,
                                          const StepTiming& step, double test_greedy_cpu_s,
                                          const ToyCorpus& corpus, double alone_s = 0.0,
                                          double load_now = std::numeric_limits<double>::quiet_NaN());

}  // namespace attn
