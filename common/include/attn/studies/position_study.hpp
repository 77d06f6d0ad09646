// Chapter 05's checks and measurements, each returned with its verdict (attn/studies/verdict.hpp),
// results keyed by encoding (never by an index into all_position_encodings()):
//   reversal_study         which encodings tell a sentence from its reverse
//   sinusoidal_shift_error PE(pos + k) = M_k·PE(pos) with one M_k for every pos
//   rope_relative_error    q_m·k_n unchanged when both positions move by s: only m − n matters
//   rope_bound_rebound     how far RoFormer's long-range bound climbs back after distance 16
//   extrapolation_study    the five trained models at L, 2L, 4L and the claims about them
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attn/position/position_encoding.hpp"
#include "attn/studies/extrapolation.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// ---- does the encoding see order? ------------------------------------------------------------
// gap = max |Attn(reversed X) − reversed(Attn(X))|; tells_apart: gap ≥ 1e-3, far above the float
// rounding (~1e-7) that an order-blind encoding leaves.
struct ReversalRow {
  PositionEncoding encoding = PositionEncoding::None;
  bool causal = false;  // with a causal mask
  double gap = 0.0;
  Verdict tells_apart;
};
struct ReversalStudy {
  std::vector<ReversalRow> rows;  // every encoding without a mask, then none and alibi with one
  const ReversalRow& at(PositionEncoding e, bool causal = false) const;
};
ReversalRow judge_reversal(PositionEncoding e, bool causal, double gap);
// x, x_reversed: (T, d); learned: the (untrained) table for Learned; alibi_slope for ALiBi's one head.
ReversalStudy reversal_study(const Mat& x, const Mat& x_reversed, const SelfAttentionWeights& w,
                             const Mat& learned, float alibi_slope);

// ---- sinusoidal: one linear map per offset ------------------------------------------------------
// max over pos in 0 … n_positions − 1 − k and every entry of |M_k·PE(pos) − PE(pos + k)|; bound 1e-5.
struct ShiftCheck {
  long k = 0;
  std::size_t last_pos = 0;  // the largest pos checked
  double max_error = 0.0;
  Verdict independent_of_pos;
};
ShiftCheck judge_shift(long k, std::size_t last_pos, double max_error);
ShiftCheck sinusoidal_shift_error(std::size_t d, long k, std::size_t n_positions);

// PE(pos)·PE(pos + k) for k = 0 … max_k, measured from the table at two positions (rows: pos_a,
// pos_b), against the closed form Σ_i cos(k·ω_i) (attn/position/sinusoidal.hpp); of_k_only: every
// entry within 1e-4 of it. It is not a distance: dip is its first local minimum (k ≥ 1) and rise
// the largest value after it (dip_k = 0 when it only falls).
struct SimilarityCheck {
  std::size_t pos_a = 0, pos_b = 0;
  Mat rows;  // (2, max_k + 1)
  double max_diff = 0.0;
  Verdict of_k_only;
  std::size_t dip_k = 0, rise_k = 0;
  double dip = 0.0, rise = 0.0;
};
SimilarityCheck sinusoidal_similarity_check(std::size_t d, std::size_t max_k, std::size_t pos_a, std::size_t pos_b);
// The dip and rise of a similarity curve s (as in SimilarityCheck), filled into c.
void find_dip_and_rise(const Vec& s, SimilarityCheck& c);

// RoPE's angles at a head width d_k: pair i turns by θ_i = base^(−2i/d_k) per position, so the
// largest angle between a query and a key is (L − 1)·θ_i in training and (4L − 1)·θ_i at 4L.
// A pair that never completes a turn in training ((L − 1)·θ_i < 2π) meets angles at the test
// length that it never saw: unseen_pairs counts them.
struct RopeReach {
  std::size_t d_k = 0, train_len = 0, test_len = 0;
  std::vector<double> theta, train_angle, test_angle;  // per pair, radians
  std::size_t unseen_pairs = 0;
};
RopeReach rope_reach(std::size_t d_k, std::size_t train_len, std::size_t test_len, double base = 10000.0);

// ---- RoPE: only m − n matters ------------------------------------------------------------------
// max over m, n < T and the shifts s of |q_m·k_n − q_(m+s)·k_(n+s)| (rotated by position; scores
// of O(1) in float: bound 1e-4).
struct RelativeCheck {
  std::vector<std::size_t> shifts;
  double max_diff = 0.0;
  Verdict relative_only;
};
RelativeCheck judge_relative(std::vector<std::size_t> shifts, double max_diff);
RelativeCheck rope_relative_error(const Mat& q, const Mat& k, const std::vector<std::size_t>& shifts);

// The largest RoFormer bound at distances from..max_distance as a fraction of distance 0, and where.
struct BoundRebound {
  std::size_t d = 0, at = 0;
  double fraction = 0.0;
};
BoundRebound rope_bound_rebound(std::size_t d, std::size_t from, std::size_t max_distance);
// Fewer frequencies, less decay: the small-d bound climbs back at least 10 points higher.
Verdict judge_rebound(const BoundRebound& small_d, const BoundRebound& big_d);

// ---- ALiBi's slopes for H heads -------------------------------------------------------------------
// alibi_slopes(H) and what they are: geometric when every ratio of neighbouring slopes equals the
// first (largest relative difference at most 1e-5; one or two slopes are trivially geometric) — the
// §3 sequence, which the slopes are when H is a power of 2. For other H they follow the authors'
// code (attn/position/alibi.hpp): the slopes of base_heads heads, then every other slope of
// 2·base_heads heads. steepest: the head with the largest slope.
struct AlibiSlopeShape {
  std::size_t heads = 0, base_heads = 0;  // base_heads: the largest power of 2 ≤ heads
  std::vector<double> slopes;
  double ratio = 0.0;  // slopes[1] / slopes[0] (0 with one head)
  Verdict geometric;   // measured: the largest |ratio_i / ratio − 1|
  std::size_t steepest = 0;
  bool power_of_two() const { return base_heads == heads; }
};
AlibiSlopeShape judge_alibi_slopes(const std::vector<double>& slopes);
// One causal ALiBi head with equal raw scores: the last query of a `length`-token sequence puts
// softmax_j(−slope·(length − 1 − j)) on key j. nearest: its weight on itself (j = length − 1);
// farthest: on key 0; ratio = nearest / farthest = e^(slope·(length − 1)); uniform = 1/length.
// nearly_blind: ratio at most 1.25 (the course's criterion: no key gets 25% more than another).
struct AlibiReach {
  double slope = 0.0, nearest = 0.0, farthest = 0.0, ratio = 0.0, uniform = 0.0;
  Verdict nearly_blind;
};
AlibiReach alibi_equal_score_reach(double slope, std::size_t length);
AlibiSlopeShape alibi_slope_shape(std::size_t heads);

// ---- ALiBi with slope 0 is no position at all ----------------------------------------------------
struct ZeroSlopeCheck {
  double max_diff = 0.0;
  Verdict same_as_none;  // bound 0: the bias adds exact zeros
};
ZeroSlopeCheck judge_zero_slope(double max_diff);
ZeroSlopeCheck alibi_zero_slope_check(const Mat& x, const SelfAttentionWeights& w);

// ---- length extrapolation, measured ---------------------------------------------------------------
struct ExtrapolationStudy {
  std::map<PositionEncoding, std::vector<ExtrapolationResult>> results;  // at L, 2L, 4L
  // rope_natural: RoPE's accuracy drop from L to 4L at most 2 points (the source article's
  // "naturally extrapolates"); alibi_over_sinusoidal: ALiBi's drop smaller than sinusoidal's beyond
  // twice the standard error of the difference (Press et al. 2021).
  Verdict rope_natural, alibi_over_sinusoidal;
  // The best order-blind reader on the same test sets (order_blind_vote_row; empty when not run),
  // and none_sees_order: judge_none_vs_vote at L.
  std::vector<ExtrapolationResult> order_blind;
  Verdict none_sees_order;
  std::size_t d_k = 0;  // the models' head width (extrapolation_study: d_model / heads)
  std::size_t values = 0;  // the task's values (extrapolation_study: cfg.values): chance is 1/values
  const ExtrapolationResult& at(PositionEncoding e, std::size_t multiple) const;  // multiple: 1, 2 or 4
  double drop(PositionEncoding e) const;  // accuracy at L − accuracy at 4L
};
// The table's cells that are right more often than chance (acc > 1/values) yet score a CE above a
// uniform guess's ln(values): confidently wrong when wrong. In encoding order, L before 2L before 4L;
// empty when values is 0.
struct ConfidentlyWrong {
  PositionEncoding encoding{};
  std::size_t times_l = 1;  // 1, 2 or 4: the test length in multiples of L
  double loss = 0.0, accuracy = 0.0, chance_loss = 0.0;
};
std::vector<ConfidentlyWrong> confidently_wrong(const ExtrapolationStudy& s);
// The cross-entropy of a uniform guess over `values` classes: ln(values) nats (NaN for 0).
double uniform_guess_loss(std::size_t values);
// The standard error of an accuracy measured on `scored` positions: √(p(1 − p)/scored).
double accuracy_standard_error(const ExtrapolationResult& r);
ExtrapolationStudy judge_extrapolation(std::map<PositionEncoding, std::vector<ExtrapolationResult>> results);
// Does the model without positions read order from its causal mask? Its accuracy above the best
// order-blind vote's (order_blind_vote) by more than twice the standard error of the difference,
// √(p(1 − p)/N + q(1 − q)/M): holds; within it: inconclusive; below by as much: fails.
Verdict judge_none_vs_vote(const ExtrapolationResult& none, const ExtrapolationResult& vote);
// model_for(e) gives the trained model of encoding e (loaded or trained by the caller); each is
// evaluated with extrapolation_table_row. A non-finite loss or accuracy throws (no verdict from it).
ExtrapolationStudy extrapolation_study(const ExtrapolationConfig& cfg,
                                       const std::function<std::unique_ptr<PositionModel>(PositionEncoding)>& model_for);

}  // namespace attn
