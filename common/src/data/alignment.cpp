// Alignments from attention weights (see attn/data/alignment.hpp).
#include "attn/data/alignment.hpp"

#include <algorithm>

namespace attn {

std::vector<int> argmax_alignment(const Mat& weights) {
  // weights: (T, S) -> (T,)
  if (weights.shape(1) == 0) throw ShapeError("argmax_alignment: weights " + shape_str(shape_of(weights)) + " have no columns");
  std::vector<int> out(weights.shape(0));
  for (std::size_t i = 0; i < weights.shape(0); ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < weights.shape(1); ++j)
      if (weights(i, j) > weights(i, best)) best = j;
    out[i] = int(best);
  }
  return out;
}

AlignmentAgreement alignment_agreement(const std::vector<int>& predicted, const std::vector<int>& reference) {
  AlignmentAgreement a;
  a.total = std::min(predicted.size(), reference.size());
  for (std::size_t i = 0; i < a.total; ++i) a.hits += predicted[i] == reference[i];
  return a;
}

}  // namespace attn
