// Chapter 04's checks, each returned with its verdict (attn/studies/verdict.hpp): do the heads
// attend differently; does the step-by-step trace agree with the training layer and with
// PyTorch's nn.MultiheadAttention (data/golden/mha); is GQA plain MHA with each K/V head repeated;
// and where, in the original Transformer's FLOP count, attention overtakes the rest.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
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

// Two computations of the same numbers: agree when max |a − b| ≤ bound.
struct Agreement {
  double max_diff = 0.0;
  Verdict agree;
};
Agreement judge_agreement(double max_diff, double bound);
// multi_head_trace's output against multi_head_forward (the layer the Transformer trains) on x.
Agreement trace_vs_layer(const Mat& x, const MultiHead& p);
// GQA with its K/V heads repeated per query head, run as plain MHA: the same output (bound 0: the
// same products in the same order).
Agreement gqa_vs_repeated_mha(const Mat& x, const MultiHead& gqa);
// MHA turned into GQA with g K/V heads the way Ainslie et al. 2023 (§2) convert a checkpoint
// before uptraining: each group's K and V projection columns are the mean of its heads' columns.
// g divides mha.n_heads (else ShapeError); g = n_heads returns mha's weights unchanged.
MultiHead mean_pool_kv(const MultiHead& mha, std::size_t g);
// What sharing costs before any uptraining, on x: max |GQA − MHA| over the outputs, with GQA =
// mean_pool_kv(mha, g), beside max |MHA output| for scale. A measurement, no claim.
struct GqaPoolingCost {
  std::size_t heads = 0, kv_heads = 0;  // h query heads; g K/V heads (g = h: nothing pooled)
  double max_diff = 0.0, max_output = 0.0;
};
GqaPoolingCost gqa_pooling_cost(const Mat& x, const MultiHead& mha, std::size_t g);
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
