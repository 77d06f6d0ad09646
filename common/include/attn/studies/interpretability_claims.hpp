// Chapter 10's measurements, each with its verdict (numerics only; attn/present/interpretability_report.hpp
// prints them): the induction circuit of the attention-only model, the chapter 09 LM on the same
// test, and the five claims about attention weights. Every threshold a verdict uses is here, beside
// the claim it tests.
//   find_induction_heads  which head marks the previous token, which one matches prefixes, what
//                         zeroing each costs, whether the second reads the first (K- or
//                         Q-composition), whether the last layer's heads are redundant, and
//                         where each of their rows of the drawn map puts its largest weight
//   lm_induction_study    the chapter 09 LM on random tokens, and on held-out text, repeated once
//   distance_claim        claim 1: mean attention distance grows with depth
//   alignment_study       claim 2: argmax α is the aligned source word (Bahdanau, Transformer)
//   uniform_heads         claim 3: some heads are near uniform, and removing them matters little
//   perturbation_sweep    claim 4: permuted / uniform / zeroed weights vs another training seed
//   importance_claim      claim 5: gradient × input agrees with leave-one-out better than attention
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/studies/induction.hpp"
#include "attn/studies/interpretability.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// ---- the inputs ---------------------------------------------------------------------------------
// The evaluation set every induction figure averages: n sequences of the task, drawn from rng seed
// `seed` (2024 in the chapter), independent of the training batches.
constexpr std::uint64_t kEvalSeed = 2024;
InductionBatch evaluation_set(const InductionTask& task, std::size_t n, std::uint64_t seed = kEvalSeed);
// The one sequence step 1 draws: 6 random tokens repeated to max_period + 1 tokens (a map that wide
// still draws one column per key), from rng seed 7.
InductionBatch drawn_sequence(const InductionTask& task);
// A whole number in a checkpoint's metadata (0 when absent or not a number).
std::size_t metadata_count(const Metadata& md, const std::string& key);
// Tokens an induction model trained on, from its metadata: steps × batch × length (0 when absent).
std::size_t induction_tokens_seen(const Metadata& md);

// The shape of a training-loss curve recorded every `every` steps (point k: the mean over steps
// k·every + 1 … (k + 1)·every), and how a sparkline of `marks` cells bins it. The fall is measured
// from the first point to the last: plateau_until is the last step before the loss first drops
// below 90% of the way from the last value to the first, fallen_by the step by which it first
// drops below 10% of it; found = false when the curve does not fall.
struct CurveShape {
  std::size_t points = 0, marks = 0, per_mark_lo = 0, per_mark_hi = 0;
  std::size_t plateau_until = 0, fallen_by = 0;
  bool found = false;
};
CurveShape loss_curve_shape(const std::vector<float>& curve, std::size_t every, std::size_t marks);

// ---- induction heads ----------------------------------------------------------------------------
// Where one head's largest weight lies in each row of a sequence that has an earlier copy of its
// token (the rows prefix_matching_score averages over): on the token after the first copy, after a
// later copy, on the query's own position (the diagonal), on an earlier copy itself (token 0 too,
// when the row's token is token 0's), on token 0
// (another token: a possible attention sink), or elsewhere. The induction pattern is the token after an earlier copy,
// first or later: the cells prefix_matching_score (the maps' "match") sums.
struct DrawnPattern {
  std::size_t layer = 0, head = 0;
  std::size_t rows = 0, first_copy = 0, later_copy = 0, self_token = 0, same_token = 0, first_token = 0;
  std::size_t on_copy() const { return first_copy + later_copy; }  // after an earlier copy
  Verdict follows;  // judge_pattern(on_copy(), rows)
};
// The head follows the induction pattern: its largest weight is on the token after an earlier copy
// in ≥ 3/4 of the rows (holds), ≥ 1/2 (partly); no rows: inconclusive.
Verdict judge_pattern(std::size_t on_copy, std::size_t rows);
// p: (T, T) causal weights of one head; tokens: the T tokens.
DrawnPattern drawn_pattern(const Mat& p, const std::vector<int>& tokens);

struct InductionHeadRow {
  std::size_t layer = 0, head = 0;
  double previous_drawn = 0.0, previous_eval = 0.0;  // previous-token score: drawn sequence, evaluation set
  double prefix_drawn = 0.0, prefix_eval = 0.0;      // prefix-matching score, likewise
  double copying = 0.0;                              // copying_score of the head's OV circuit
  double second_if_zeroed = 0.0;                     // second-repeat loss with this head's output zeroed
  double self_drawn = 0.0;                           // mean weight on the diagonal (P_ii), drawn sequence
  Verdict self_head;                                 // judge_self_head(self_drawn)
};
// A "self" head: each token reads mostly itself, a mean weight on the diagonal ≥ 0.5 (holds).
constexpr double kSelfHeadAt = 0.5;
Verdict judge_self_head(double self_weight);
// The first period, where nothing can be predicted (its tokens are fresh and distinct): the mean
// probability the model puts on the tokens it has already seen, beside a uniform guess's
// (seen tokens / V), none of which can come next; and the mean entropy of its guesses (nats).
struct SeenMass {
  double model = 0.0, uniform = 0.0, entropy = 0.0;
  Verdict bets;  // judge_bets_on_seen(model, uniform)
};
// The model bets on seen tokens: its mass on them is at least twice a uniform guess's.
Verdict judge_bets_on_seen(double model, double uniform);
SeenMass first_period_seen_mass(const AttnOnly& m, const InductionBatch& b);

struct InductionCircuit {
  std::vector<InductionHeadRow> heads;  // layer by layer
  std::vector<HeadStat> eval_stats;     // head_stats over the evaluation set (entropy, distance, …)
  std::vector<HeadStat> drawn_stats;    // head_stats over the drawn sequence
  RepeatLosses base;                    // first and second repeat, no head edited
  SeenMass first_seen;                  // first_period_seen_mass of the evaluation set
  std::size_t eval_sequences = 0, eval_length = 0, min_period = 0, max_period = 0;
  std::size_t last_layer = 0;
  std::size_t previous_head = 0;  // layer 0's head with the largest previous-token score (evaluation set)
  std::size_t induction_head = 0; // the last layer's head with the largest prefix-matching score
  std::size_t most_needed = 0;    // the last layer's head whose zeroing raises the second-repeat loss most
  // The previous-token head on the evaluation set, by key position: 1 … max_period (where every
  // token's first copy has its successor) and after.
  double previous_early = 0.0, previous_late = 0.0;
  // After max_period, where else that head's weight goes: its own position and token 0.
  double previous_late_self = 0.0, previous_late_first = 0.0;
  double second_without_previous = 0.0, second_without_induction = 0.0, second_without_last_layer = 0.0;
  // The prefix score with the previous head zeroed: zeroing its output changes the induction
  // head's keys and queries alike, so this cannot tell K- from Q-composition.
  double induction_prefix_without_previous = 0.0;
  double uniform_prefix = 0.0;  // uniform_prefix_matching of the evaluation set: a head that points nowhere
  double uniform_previous = 0.0;  // uniform_previous_token of the evaluation set's lengths, likewise
  std::vector<DrawnPattern> drawn_patterns;  // the last layer's heads on the drawn sequence, head by head
  std::vector<std::size_t> zeroing_helps;    // heads (layer · H + head) whose zeroing lowers the second-period loss
  Verdict composes;   // judge_composition: the induction head reads the previous-token head's output
  Verdict redundant;  // judge_redundancy: the last layer's heads can stand in for each other
};
InductionCircuit find_induction_heads(const AttnOnly& m, const InductionTask& task, const InductionBatch& eval,
                                     const InductionBatch& drawn);
// Composition (K or Q): holds when the induction head's prefix score without the previous-token
// head is at most half of it with (measured = without / with).
Verdict judge_composition(double prefix_with, double prefix_without);
// Redundancy: holds when zeroing the most needed head raises the loss by at most a quarter of what
// zeroing the whole layer does (measured = that share).
Verdict judge_redundancy(double base_loss, double worst_single_loss, double whole_layer_loss);

// One probe of the chapter 09 LM: passages repeated once, and what it shows.
struct LmRepeatProbe {
  LmInduction result;
  std::vector<HeadStat> best;  // the 3 heads with the largest prefix matching
  std::size_t strong = 0;      // heads with prefix matching above 0.4
  Verdict copies;              // judge_copying(result)
  bool above_chance = false;   // both losses above log V
};
LmRepeatProbe lm_repeat_probe(const DecoderLM& m, const std::vector<std::vector<int>>& passages);
struct LmInductionStudy {
  LmRepeatProbe random;        // random token ids, repeated once
  std::optional<LmRepeatProbe> text;  // passages of held-out text, repeated once (when it holds them)
  std::size_t vocab = 0;
  double chance = 0.0;         // log V
  std::size_t unseen_ids = 0;  // vocabulary ids that never occur in the held-out text
  std::size_t held_out_tokens = 0;
  std::size_t drawn_unseen = 0, drawn = 0;  // of the random probe's ids (first copies), how many are unseen ones
};
// The second copy is easier than the first: first − second beyond 2 standard errors and beyond
// 0.1 nats (holds); as much harder (fails); else inconclusive.
Verdict judge_copying(const LmInduction& r);
// Random ids (`sequences` × `period`, PCG32 seed) and `sequences` passages of `period` tokens spread
// over `held_out` (skipped when it is too short), each repeated once.
LmInductionStudy lm_induction_study(const DecoderLM& m, const std::vector<int>& held_out, std::size_t period = 40,
                                    std::size_t sequences = 8, std::uint64_t seed = 77);

// ---- claim 1 ------------------------------------------------------------------------------------
// The chapter 09 LM's heads on real text: 4 consecutive windows of 128 held-out tokens.
constexpr std::size_t kLmTextWindows = 4, kLmTextTokens = 128;
struct DistanceClaim {
  std::vector<LayerStat> layers;
  double uniform = 0.0;  // uniform_distance of the same inputs: how far a head that points nowhere looks
  Verdict grows;  // judge_depth_trend(layers)
};
// Distance grows with depth: last / first layer's distance ≥ 1.1 holds; ≥ 1/1.1 partly (flat,
// within 10%); below that it shrinks (fails); no layers: inconclusive.
Verdict judge_depth_trend(const std::vector<LayerStat>& layers);
// heads: head_stats over inputs of these lengths (causal or not), for the uniform baseline.
DistanceClaim distance_claim(const std::vector<HeadStat>& heads, const std::vector<std::size_t>& lengths,
                             bool causal);

// ---- claim 2 ------------------------------------------------------------------------------------
// Step 4's example pair: the first of `pairs` with at most max_words source words (its map fits a
// 100-column screen) and at least min_reordered reordered target words (reordered_rows), so the map
// shows the language's reorderings; the first pair when none qualifies (found = false).
struct ExampleChoice {
  std::size_t index = 0, words = 0, reordered = 0, max_words = 0, min_reordered = 0;
  bool found = false;
};
ExampleChoice pick_alignment_example(const std::vector<SentencePair>& pairs, std::size_t max_words = 24,
                                     std::size_t min_reordered = 5);
// Target positions i > 0 whose source word comes before target word i − 1's: where the translation
// leaves the source order (a verb moved to its clause's end, an adjective after its noun).
std::vector<std::size_t> reordered_rows(const std::vector<int>& alignment);

// Rows of a (target × source) map whose largest weight is not on the true source word (chapter 07's
// alignment_misses says more about each; this is what step 4 lists).
struct RowMiss {
  std::size_t row = 0, read = 0, truth = 0;
};
std::vector<RowMiss> row_misses(const Mat& weights, const std::vector<int>& alignment);

// One decoder layer's cross-attention heads, judged together (no head picked on the words scored):
// their mean share of argmax hits, lowest and highest head, and how many reach kAlignsHolds.
struct LayerAlignment {
  std::size_t layer = 0, heads = 0, aligned = 0;
  double mean = 0.0, lo = 0.0, hi = 0.0;
  Verdict aligns;  // judge_alignment(mean)
};
std::vector<LayerAlignment> layer_alignment(const Mat& accuracy);
// The gap between two heads' shares of hits on the same sentences, and its standard error paired
// over the sentences: d_s = hits_a,s − hits_b,s, SE = √(n/(n − 1) · Σ_s (d_s − gap·words_s)²) / words.
struct HeadGap {
  double gap = 0.0, se = 0.0;
  Verdict clear;  // judge_greater(a, b, 2 SE): the better head is better beyond the noise
};
HeadGap head_gap(const std::vector<std::size_t>& hits_a, const std::vector<std::size_t>& hits_b,
                 const std::vector<std::size_t>& words);

struct AlignmentStudy {
  double bahdanau = 0.0;          // share of target words whose argmax α is the aligned source word
  std::size_t words = 0;          // target words scored
  std::size_t sentences = 0;      // the pairs they come from
  Verdict bahdanau_aligns;        // judge_alignment(bahdanau)
  Mat example, truth;             // (len(tgt), S): Bahdanau's α for the example pair, the true alignment
  std::optional<CrossAlignment> cross;  // the chapter 08 Transformer, when given
  std::size_t best_layer = 0, best_head = 0;
  double best = 0.0;
  Verdict best_aligns;
  std::vector<LayerAlignment> layers;             // layer_alignment of cross->accuracy
  std::size_t runner_layer = 0, runner_head = 0;  // the second-best head
  double runner_up = 0.0;
  HeadGap best_gap;                               // best against the runner-up, paired over sentences
  Mat best_example;               // the best head's weights for the example, the <eos> row dropped
  std::vector<RowMiss> example_misses, best_misses;  // row_misses of `example` and `best_example`
  std::vector<std::size_t> reordered;                      // reordered_rows of the example
};
// Attention aligns words: a share of argmax hits ≥ 0.8 holds, ≥ 0.5 partly.
constexpr double kAlignsHolds = 0.8, kAlignsPartly = 0.5;  // judge_alignment's cut-offs
Verdict judge_alignment(double accuracy);
AlignmentStudy alignment_study(const Seq2Seq& bahdanau, const Transformer* transformer,
                               const std::vector<SentencePair>& pairs, const SentencePair& example,
                               const Vocab& src_vocab, const Vocab& tgt_vocab);

// ---- claim 3 ------------------------------------------------------------------------------------
constexpr double kUniformAt = 0.95;  // H / log n at or above this: "within 5% of uniform"
struct UniformClaim {
  std::size_t heads = 0;
  std::vector<HeadStat> flat;   // heads with uniformity ≥ kUniformAt
  std::vector<HeadStat> rest;   // the other heads
  Verdict exist;                // at least one such head
  bool ablated = false;         // measured by zeroing them (the induction model only)
  OutputChange removal;         // all of them zeroed at once, on every repeat after the first
  Verdict harmless;             // judge_harmless(removal)
};
// Removing the near-uniform heads barely matters: |Δloss| ≤ 0.05 nats.
Verdict judge_harmless(const OutputChange& removal);
UniformClaim uniform_heads(const std::vector<HeadStat>& heads);
UniformClaim uniform_heads(const AttnOnly& m, const InductionBatch& eval, const std::vector<HeadStat>& heads);

// ---- claim 4 ------------------------------------------------------------------------------------
struct PerturbationRow {
  std::size_t layer = 0, head = 0;
  HeadEdit edit = HeadEdit::zero;
  OutputChange change;
  bool below_seed = false;  // TVD at most the other seed's
};
struct PerturbationSweep {
  OutputChange seeds;  // the other-seed model against this one
  std::vector<PerturbationRow> rows;
  std::size_t below = 0;
  Verdict little_change;  // judge_perturbation(below, rows)
};
// Editing one head's weights changes the output less than another seed does: a share of the
// edits ≥ 0.75 holds, ≥ 0.25 partly; no edits: inconclusive.
Verdict judge_perturbation(std::size_t below_seed, std::size_t edits);
PerturbationSweep perturbation_sweep(const AttnOnly& m, const AttnOnly& other_seed, const InductionBatch& eval,
                                     std::uint64_t seed = 11);

// ---- claim 5 ------------------------------------------------------------------------------------
struct ImportanceClaim {
  ImportanceAgreement agreement;
  std::vector<double> attn_se;  // per layer: standard error of the mean τ against leave-one-out
  double grad_se = 0.0, random_se = 0.0;
  std::vector<Verdict> attn_vs_random;  // per layer: τ above random scores' beyond 2 standard errors
  Verdict grad_vs_random;
  std::size_t best_layer = 0;           // the attention layer with the largest τ
  std::size_t best_top1_layer = 0;      // the attention layer whose top-1 share is largest
  double difference_se = 0.0;           // of the per-sequence (gradient τ − best layer's τ)
  Verdict gradients_win;                // gradient τ above the best layer's beyond 2 standard errors
  Verdict informative;                  // judge_informative: some ranking's τ is above random scores'
  bool too_few = false;                 // fewer than kMinImportanceSequences: every verdict inconclusive
};
// Below 16 sequences no verdict is drawn: a standard error from n values is itself uncertain by
// about 1/√(2(n − 1)) of it (41% at n = 4, 18% at 16), too loose for a 2-SE rule.
constexpr std::size_t kMinImportanceSequences = 16;
// The τ test has power: at least one ranking (an attention layer or gradient × input) is above
// random scores beyond the noise (measured = how many are); else it cannot decide claim 5.
Verdict judge_informative(const std::vector<Verdict>& attn_vs_random, const Verdict& grad_vs_random);
// The standard errors and verdicts of an agreement: each τ against random scores' beyond 2
// standard errors of their difference, and gradient × input against the best attention layer
// beyond 2 standard errors of the per-sequence difference; all inconclusive (too_few) when the
// agreement has fewer than kMinImportanceSequences sequences.
ImportanceClaim judge_importance(const ImportanceAgreement& agreement);
// The first `sequences` of the evaluation set, each queried at the last token of its second repeat.
ImportanceClaim importance_claim(const AttnOnly& m, const InductionBatch& eval, std::size_t sequences = 32,
                                 std::uint64_t seed = 5);

}  // namespace attn
