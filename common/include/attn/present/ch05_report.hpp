// Presentation of chapter 05 (positional encodings): each function prints one step's results
// through the Narrator; the numbers and verdicts come from attn/studies/position_study.hpp and the
// sentences are chosen by the verdicts' outcomes. position_model loads a shipped checkpoint (or
// trains and saves it with --train), the one file I/O of the chapter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attn/present/checkpoint_set.hpp"
#include "attn/present/narrate.hpp"
#include "attn/studies/position_study.hpp"
#include "attn/studies/self_attention_study.hpp"

namespace attn {

// Step 1: the reversed sentence gives the same rows reordered (or not).
void report_order_blind(Narrator& nar, const PermutationCheck& c);
// Step 2: one row per encoding (and none / ALiBi with a causal mask), and which of them see order.
void report_reversal(Narrator& nar, const ReversalStudy& s);
// Step 2's "why": the symmetry of |i − j|, when the table bears it out.
void explain_reversal(Narrator& nar, const ReversalStudy& s);
// Step 3: PE(pos + k) = M_k·PE(pos) for every pos checked.
void report_shift(Narrator& nar, const ShiftCheck& c);
// Step 3: PE(pos)·PE(pos + k) measured at two positions (recorded "pe_similarity"), against the
// closed form, and where it dips and rises again.
void report_similarity(Narrator& nar, const SimilarityCheck& c);
// "0", "1", …, "n − 1": position labels for tables and heatmaps.
Labels index_labels(std::size_t n);
// Step 4: what a learned table says at its first missing position (position table.shape(0)).
void report_learned_limit(Narrator& nar, const Mat& table);
// Step 5: pair 0 of the last word rotated by hand, from q and q_rot.
void report_rope_pair(Narrator& nar, const Labels& words, const Mat& q, const Mat& q_rot);
// Step 6: the notation (h, H; the causal form), the slopes of `heads` heads, their bias over
// `positions` (recorded as "alibi_bias") and
// head 0's bias as a heatmap ("alibi_bias_head0").
void show_alibi_bias(Narrator& nar, const AlibiSlopeShape& slopes, std::size_t positions);
// Step 6's formula line: §3's m_h for H a power of 2, the authors' code's two-part rule otherwise.
std::string alibi_formula(const AlibiSlopeShape& slopes);
// Step 5: only m − n matters; then RoFormer's bound for this d and for big_d, with the rebound verdict.
void report_rope_relative(Narrator& nar, const RelativeCheck& c);
void report_rope_bound(Narrator& nar, std::size_t d, std::size_t big_d, std::size_t max_distance);
// Step 6: slope 0 is no position at all.
void report_zero_slope(Narrator& nar, const ZeroSlopeCheck& c);
// Step 7's five files, "ch05/<encoding>.safetensors" for every encoding: one set (CheckpointSet,
// attn/present/checkpoint_set.hpp), read together and, with --train, written together.
std::vector<std::string> position_checkpoint_names();
// Step 7: the trained model of one encoding, from its file in files, or trained and staged there
// when train is true (one line per model then; files.commit() writes the five).
std::unique_ptr<PositionModel> position_model(Narrator& nar, PositionEncoding e, CheckpointSet& files, bool train,
                                              const ExtrapolationConfig& cfg);
// Step 7: the task and the model, from the config (keys, values, heads, d_k, chance).
void describe_recall_task(Narrator& nar, const ExtrapolationConfig& cfg);
// Step 7 and the seeds: the run's --seed is not used; the training seed and the test data's seeds are fixed.
void report_extrapolation_seeds(Narrator& nar, std::uint64_t run_seed, std::uint64_t train_seed, bool train);
// Step 7: the order-blind vote at L, 2L, 4L and whether the model without positions beats it
// (s.none_sees_order), each outcome its own sentence.
void report_none_vs_vote(Narrator& nar, const ExtrapolationStudy& s);
// Step 7: the table (exported as "extrapolation", rows named in the manifest) and the two claims.
void report_extrapolation(Narrator& nar, const ExtrapolationStudy& s);
// The closing lines, chosen by the verdicts of the steps they sum up.
std::vector<std::string> ch05_takeaway(const PermutationCheck& order, const ShiftCheck& shift,
                                       const RelativeCheck& rope, const ZeroSlopeCheck& alibi,
                                       const ExtrapolationStudy& x,
                                       const std::string& sentence, const std::string& reversed);

}  // namespace attn
