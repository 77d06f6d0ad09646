// Chapter 04's checks, each returned with its verdict (attn/studies/verdict.hpp): do the heads
// attend differently; does the step-by-step trace agree with the training layer and with
// PyTorch's nn.MultiheadAttention (data/golden/mha); is GQA plain MHA with each K/V head repeated;
// and where, in the original Transformer's FLOP count, attention overtakes the rest.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/attention/multi_head.hpp"
#include "attn/studies/transformer_cost.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// The largest max |A_a − A_b| over pairs of heads; differ: at least 0.05 (inconclusive with one head).
struct HeadDiversity {
  std::size_t heads = 0;
  double most_different = 0.0;
  Verdict differ;
};
HeadDiversity head_diversity(const Tensor3& weights);

// Rows of the (h, n, n) weights that stay near uniform: every weight within tol of 1/n. A heatmap
// whose first shade starts at 1/n draws such rows as scattered marks; the count says how many.
struct NearUniformRows {
  std::size_t rows = 0, near = 0;  // h·n rows in all; of them, near uniform
  double uniform = 0.0, tol = 0.0;  // 1/n and the tolerance
  double largest = 0.0;             // the largest weight: the top of step 3's shading
  std::vector<std::pair<std::size_t, std::size_t>> which;  // the near-uniform rows as (head, row)
};
NearUniformRows near_uniform_rows(const Tensor3& weights, double tol = 0.05);

// Why several heads (Vaswani et al. 2017, §3.2.2: "with a single attention head, averaging inhibits
// this"): a query that wants two words, 'red' and 'ball', among n = 3 ('red', 'ball', 'the').
// One head of width 2 scores both alike and must split its weight between them; two heads of
// width 1 each score one of them, so each can put nearly all its weight on its own word.
// The queries and keys are set by hand with entries ±gain (no training): one head's q = (g, g),
// keys red = (g, 0), ball = (0, g), the = (0, 0); head 0: q = g, keys (g, 0, 0); head 1: keys (0, g, 0).
// keeps_both: the smaller of the two heads' weights on their own word is at least
// kTwoTargetsBound (this course's test); fails with a small gain, where no head commits.
inline constexpr double kTwoTargetsBound = 0.9;
struct TwoTargets {
  std::vector<std::string> words;         // red, ball, the
  double gain = 0.0;
  std::vector<double> one_head;           // (n,) the single head's weights
  std::vector<std::vector<double>> two;   // (2, n) head 0 and head 1
  double one_head_best = 0.0;             // the single head's largest weight on red or ball
  double two_heads_own = 0.0;             // min(head 0 on red, head 1 on ball)
  Verdict keeps_both;
};
TwoTargets two_targets(double gain = 2.0);

// What h heads cost beside one head of the full width d_model, on n tokens (a multiply-add counts 2):
// the parameters (4·d²) and the FLOPs of the projections (8·n·d²) and of QKᵀ and AV (4·n²·d) do
// not depend on h; the score entries (and the softmax's exponentials) do: h·n².
struct HeadCost {
  std::size_t heads = 0;
  double params = 0.0, projection_flops = 0.0, score_flops = 0.0, score_entries = 0.0;
};
HeadCost head_cost(std::size_t n, std::size_t d_model, std::size_t heads);

// Two computations of the same numbers: agree when max |a − b| ≤ bound.
struct Agreement {
  double max_diff = 0.0;
  Verdict agree;
};
Agreement judge_agreement(double max_diff, double bound);
// multi_head_trace's output against multi_head_forward (the layer the Transformer trains) on x.
Agreement trace_vs_layer(const Mat& x, const MultiHead& p);
// GQA with its K/V heads repeated per query head, run as plain MHA: the same output within float32
// rounding (bound kGqaRepeatTol: the same products, but BLAS may block a (h·d_k)-wide product
// differently from a (g·d_k)-wide one, which moves the last bit of a sum: a few 1e-8 here).
inline constexpr double kGqaRepeatTol = 1e-6;
Agreement gqa_vs_repeated_mha(const Mat& x, const MultiHead& gqa);
// MHA turned into GQA with g K/V heads the way Ainslie et al. 2023 (§2) convert a checkpoint
// before uptraining: each group's K and V projection columns are the mean of its heads' columns.
// g divides mha.n_heads (else ShapeError); g = n_heads returns mha's weights unchanged.
MultiHead mean_pool_kv(const MultiHead& mha, std::size_t g);
// What sharing costs before any uptraining, on x, with GQA = mean_pool_kv(mha, g): max |GQA − MHA|
// over the outputs, and the relative error ‖GQA − MHA‖_F / ‖MHA‖_F (the whole outputs, so one
// element's maximum is not set against another's). A measurement, no claim.
struct GqaPoolingCost {
  std::size_t heads = 0, kv_heads = 0;  // h query heads; g K/V heads (g = h: nothing pooled)
  double max_diff = 0.0;
  double frobenius_diff = 0.0, frobenius_output = 0.0;  // ‖GQA − MHA‖_F and ‖MHA‖_F
  // ‖GQA − MHA‖_F / ‖MHA‖_F (NaN when the MHA output is all zeros).
  double relative() const { return frobenius_output > 0.0 ? frobenius_diff / frobenius_output : NAN; }
};
GqaPoolingCost gqa_pooling_cost(const Mat& x, const MultiHead& mha, std::size_t g);
// The pooled output is nearer the MHA output than all zeros are: relative() < 1 (measured =
// relative(), bound 1; inconclusive when relative() is NaN). Random heads can fail it.
Verdict pooling_beats_zeros(const GqaPoolingCost& c);
// The pooled output keeps most of the MHA output: relative() at most 0.5 (the course's criterion).
Verdict pooling_keeps_most(const GqaPoolingCost& c);
// nn.MultiheadAttention (16 wide, 4 heads, biases) on the golden inputs of `dir` (X, W_Q, …, b_O,
// output .npy) against multi_head_trace; bound 1e-5. Each file is shape-checked under its name.
Agreement pytorch_parity(const std::string& dir);

// Sequence lengths (from `lengths`, ascending) where attention reaches half of one encoder layer's
// FLOPs, and where the scores alone reach the feed-forward's FLOPs; 0 where none of them does.
struct AttentionCrossings {
  std::size_t half_the_work = 0, scores_match_ffn = 0;
};
AttentionCrossings attention_crossings(const TransformerConfig& cfg, const std::vector<std::size_t>& lengths);

}  // namespace attn
