// Reading an alignment off attention weights: for each target word, the source word it attends to
// most, and how often that is the word it translates.
//   weights: (T, S), row t = target word t's weights over the S source words (a decoder's α rows,
//            a cross-attention head's rows); rows need not sum to 1, only their order matters.
//   reference: reference[t] = the source position that target word t translates, or a negative
//            value (kNoSource) for a target word that translates none (an inserted word, <eos>).
// A target word with no aligned source is left out of the score (neither hit nor miss). A target
// word of the reference that has no row in `weights` (decoding stopped early) counts as a miss.
// Rows beyond the reference (decoding ran on) are not scored.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

inline constexpr int kNoSource = -1;

// How many target words put their largest weight where they should.
struct AlignmentScore {
  std::size_t hits = 0;     // target words whose argmax is the reference source position
  std::size_t total = 0;    // target words with an aligned source (the denominator), `missing` included
  std::size_t missing = 0;  // of `total`, target words with no row in the weights (scored as misses)
  double share() const { return total == 0 ? 0.0 : double(hits) / double(total); }  // 0 when nothing is scored
};

// For each target word t, the source position of its largest weight (the first one on ties).
// weights: (T, S) with S ≥ 1 when T ≥ 1 -> (T,)
std::vector<int> argmax_alignment(const Mat& weights);

// weights: (T, S), reference: (T_ref,) with entries < S or negative (ShapeError otherwise).
AlignmentScore alignment_hits(const Mat& weights, const std::vector<int>& reference);
// The same, from argmax positions already read off (argmax_alignment); entries are not range-checked.
AlignmentScore alignment_hits(const std::vector<int>& argmax, const std::vector<int>& reference);

// Two weight matrices over the same source (two models, two heads): on how many of the target rows
// that both have do their argmax positions agree. a: (Ta, S), b: (Tb, S) -> hits of total =
// min(Ta, Tb), missing = 0.
AlignmentScore argmax_agreement(const Mat& a, const Mat& b);

}  // namespace attn
