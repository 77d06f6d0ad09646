// Reading a word alignment off attention weights, and scoring it against a reference alignment
// (the toy corpus's SentencePair::alignment, or another model's argmax alignment):
//   argmax_alignment(W)[i] = the source position j with the largest weight W(i, j)
//   alignment_agreement(a, ref) = how many target positions i have a[i] == ref[i]
#pragma once

#include <cstddef>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

// weights: (T, S) -> T source positions, one per row (the first one on ties).
std::vector<int> argmax_alignment(const Mat& weights);

struct AlignmentAgreement {
  std::size_t hits = 0;   // positions where the two alignments name the same source word
  std::size_t total = 0;  // positions compared
  double share() const { return total == 0 ? 0.0 : double(hits) / double(total); }
};

// Compares the first min(|predicted|, |reference|) positions (a reference may be shorter than a
// decoded output that ran on, or longer than one that stopped early).
AlignmentAgreement alignment_agreement(const std::vector<int>& predicted, const std::vector<int>& reference);

}  // namespace attn
