// Alignments read off attention weights (see attn/attention/alignment.hpp).
#include "attn/attention/alignment.hpp"

#include <algorithm>
#include <string>

#include "attn/tensor/tensor_ops.hpp"

namespace attn {

std::vector<int> argmax_alignment(const Mat& weights) { return argmax_rows(weights); }

AlignmentScore alignment_hits(const std::vector<int>& argmax, const std::vector<int>& reference) {
  AlignmentScore s;
  for (std::size_t t = 0; t < reference.size(); ++t) {
    if (reference[t] < 0) continue;  // translates no source word: not scored
    ++s.total;
    if (t >= argmax.size()) {
      ++s.missing;
      continue;
    }
    s.hits += argmax[t] == reference[t];
  }
  return s;
}

AlignmentScore alignment_hits(const Mat& weights, const std::vector<int>& reference) {
  const std::size_t src = weights.shape(1);
  for (std::size_t t = 0; t < reference.size(); ++t)
    if (reference[t] >= 0 && std::size_t(reference[t]) >= src)
      throw ShapeError("alignment_hits: reference[" + std::to_string(t) + "] = " + std::to_string(reference[t]) +
                       " is outside the " + std::to_string(src) + " source positions of weights " +
                       shape_str(shape_of(weights)));
  return alignment_hits(argmax_alignment(weights), reference);
}

AlignmentScore argmax_agreement(const Mat& a, const Mat& b) {
  if (a.shape(1) != b.shape(1))
    shape_mismatch("argmax_agreement", "a", shape_of(a), "b", shape_of(b), "need the same number of source positions");
  const std::vector<int> pa = argmax_alignment(a), pb = argmax_alignment(b);
  AlignmentScore s;
  s.total = std::min(pa.size(), pb.size());
  for (std::size_t t = 0; t < s.total; ++t) s.hits += pa[t] == pb[t];
  return s;
}

}  // namespace attn
