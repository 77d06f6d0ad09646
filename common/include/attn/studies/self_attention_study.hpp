// Chapter 03's checks and measurements, each returned with its verdict (attn/studies/verdict.hpp):
// weights rows sum to 1; the causal mask zeroes the future; shuffling the words shuffles the
// outputs (equivariance) while a mean-pooled summary stays (invariance); the √d_k table of
// attn/studies/scaling.hpp judged; the soft lookup turning hard as τ → 0; and the path-length
// argument of Vaswani et al. 2017, Table 1, measured: how many sequential steps (recurrent) or
// layers (attention) separate token 0 from the output at token n − 1.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/attention/self_attention.hpp"
#include "attn/nn/gru.hpp"
#include "attn/studies/lookup.hpp"
#include "attn/studies/scaling.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// Float rounding of a handful of products and sums of O(1) numbers stays far below this.
constexpr double kFloatCheckTol = 1e-5;

// Mean and variance (over all entries, divided by their count) of x: what step 1's N(0, 1) draws gave.
struct EntryStats {
  double mean = 0.0, variance = 0.0;
};
EntryStats entry_stats(const Mat& x);

// Rows of a weight matrix sum to 1: measured = max |row sum − 1|, bound kFloatCheckTol.
struct RowSumCheck {
  double min_sum = 0.0, max_sum = 0.0;
  Verdict sums_to_one;
};
RowSumCheck check_row_sums(const Mat& weights);

// The layer's output against a reference computed another way (attention_reference: double, plain
// loops): agrees when max |output − reference| ≤ kFloatCheckTol (float32 rounding stays far below).
struct ReferenceAgreement {
  double max_diff = 0.0;
  Verdict agrees;
};
ReferenceAgreement check_reference(const Mat& output, const Mat& reference);

// The causal mask, checked on its own outputs: the first query sees only itself (its weight on
// itself is 1), every masked pair has weight 0, and the last query, which sees every key, gives
// the same row as unmasked attention.
struct CausalCheck {
  double first_self_weight = 0.0, masked_weight_max = 0.0, last_row_diff = 0.0;
  Verdict first_sees_only_itself, masked_are_zero, last_row_unchanged;
};
// weights, output: with the causal mask; full_output: without; mask: the additive (−∞) mask.
CausalCheck check_causal(const Mat& weights, const Mat& output, const Mat& full_output, const Mat& mask);

// f(P·X) = P·f(X): out_permuted (the outputs of the permuted sentence) against the permuted
// outputs; and the mean over rows, which a permutation cannot change.
struct PermutationCheck {
  double equivariance_err = 0.0, pooled_err = 0.0;
  Verdict equivariant, pooled_invariant;
};
PermutationCheck check_permutation(const Mat& output, const Mat& out_permuted, const std::vector<std::size_t>& perm);

// The √d_k table judged: scaled variance within 15% of 1 at every d_k (unit_variance); the
// unscaled softmax's Jacobian at the largest d_k at most half the scaled one's (raw_vanishes);
// the scaled Jacobian norms within 25% of each other across d_k (scaled_steady).
// trials, n_keys: how many queries each row's variance comes from and how many keys each query
// meets (0: taken as exact). var_noise: three standard errors of the scaled variance,
// 3·√((2/d_k + 2(1 + 2/d_k)/n_keys)/trials) (a query's keys share its q, so they are not
// independent samples), at its largest d_k-wise; when it exceeds the 15% tolerance the sample is
// too small to judge it, and unit_variance is too_noisy rather than a refutation. within_noise:
// the worst deviation at most var_noise (inconclusive without a noise figure); chance_beyond_noise:
// an upper bound on the chance that some row's noise alone exceeds var_noise, if every variance is 1.
struct ScalingStudy {
  std::vector<ScalingRow> rows;
  double var_noise = 0.0, chance_beyond_noise = 0.0;
  std::size_t raw_peak = 0;  // the row where the unscaled Jacobian norm is largest
  Verdict unit_variance, raw_vanishes, scaled_steady, within_noise;
};
ScalingStudy judge_scaling(std::vector<ScalingRow> rows, std::size_t trials = 0, std::size_t n_keys = 0);
ScalingStudy scaling_study(Rng& rng, const std::vector<std::size_t>& d_ks, std::size_t n_keys, std::size_t trials);

// One soft lookup per temperature τ (rows from the largest τ to the smallest); becomes_hard: at the smallest τ the
// output is within 1e-3 of the best key's value row. intended: the key the query was made from (noise added);
// picks_intended: the best-matching key is that one (measured = 1 when another key won, bound 0;
// inconclusive when intended is out of range), so the hard lookup returns the intended row.
struct LookupRow {
  float tau = 1.0f;
  SoftLookup lookup;
  double dist_to_hard = 0.0;  // max |o − v_best|
};
struct LookupStudy {
  std::vector<LookupRow> rows;
  std::size_t best = 0, intended = 0;  // argmax_j q·k_j, and the key the query was made from
  Verdict becomes_hard, picks_intended;
};
LookupStudy lookup_study(const Vec& query, const Mat& keys, const Mat& values, std::vector<float> taus,
                         std::size_t intended = 0);

// ---- path length (Vaswani et al. 2017, Table 1) -----------------------------------------------
// How far apart token 0 and the output at token n − 1 are, and how much of token 0 arrives.
// Recurrent: a GRU, h_t = cell(x_t, h_{t−1}). Its path: the cell steps run one after another from
// the step that reads x_0 to the one that gives h_{n−1} (counted as they run). Its influence:
// max |Δh_{n−1}| when every entry of x_0 is raised by 1 (0 once the change is below float precision).
struct RecurrentPath {
  std::size_t steps = 0;
  double influence = 0.0;
};
RecurrentPath recurrent_path(const Gru& cell, const Mat& x);
// Attention: layers x ← x + Attn(x, mask) (rows rescaled to unit RMS; the same weights each layer,
// d_k = d_v = d_model) stacked until token n − 1 depends on token 0, followed through the computed
// weights (token i depends on token 0 after a layer if some key j with A_ij > 0 did before, or i
// itself did); 0 when max_layers were not enough.
std::size_t attention_path_layers(const Mat& x, const SelfAttentionWeights& w, const Mat& mask,
                                  std::size_t max_layers);
// max |Δ output_{n−1}| of one attention layer when every entry of x_0 is raised by 1.
double attention_influence(const Mat& x, const SelfAttentionWeights& w, const Mat& mask);
// A causal window of w keys: query i sees keys i − w + 1 … i (itself and w − 1 before it).
Mat causal_window_mask(std::size_t n, std::size_t w);

struct PathLengthRow {
  std::size_t n = 0;
  std::size_t recurrent_steps = 0, attention_layers = 0, window_layers = 0;
  double recurrent_influence = 0.0, attention_influence = 0.0;
};
struct PathLengthStudy {
  std::size_t d_model = 0, window = 0;
  std::vector<PathLengthRow> rows;
  // constant_attention: full attention needs at most 1 layer at every n (measured = the most);
  // recurrent_grows: measured = the fewest recurrent steps per n − 1, bound 1 (n − 1 steps or more);
  // window_formula: measured = the largest |window layers − ⌈(n − 1)/(w − 1)⌉|, bound 0;
  // attention_keeps_more: at the largest n, one attention layer's influence exceeds the GRU's.
  // dilution_explains: attention's influence falls from the smallest n to the largest by
  // attention_fall; weights spread evenly over token_growth = n_last / n_first more tokens would
  // give token_growth; measured = |ln(attention_fall / token_growth)|, bound ln 2 (within 2×).
  // first_rise: the first row whose attention influence exceeds the row before's (rows.size():
  // the column falls or stays at every step).
  double attention_fall = 0.0, token_growth = 0.0;
  std::size_t first_rise = 0;
  Verdict constant_attention, recurrent_grows, window_formula, attention_keeps_more, dilution_explains;
};
PathLengthStudy judge_path_length(std::vector<PathLengthRow> rows, std::size_t d_model, std::size_t window);
PathLengthStudy path_length_study(const std::vector<std::size_t>& sizes, std::size_t d_model, std::size_t window,
                                  std::uint64_t seed);

}  // namespace attn
