// Attention as a soft database lookup. A hard lookup returns the value whose key equals the
// query; attention returns Σ_j softmax_j(q·k_j / τ) v_j, a blend weighted by similarity. As the
// temperature τ → 0 the softmax becomes one-hot on the best-matching key: the hard lookup.
#pragma once

#include "attn/tensor/tensor.hpp"

namespace attn {

struct SoftLookup {
  Vec weights;  // (S,) softmax(q·kᵀ/τ)
  Vec output;   // (d_v,) weights·V
  std::size_t best = 0;  // argmax_j q·k_j: what a hard lookup returns
};

// query: (d,), keys: (S, d), values: (S, d_v), tau > 0.
SoftLookup soft_lookup(const Vec& query, const Mat& keys, const Mat& values, float tau);

// Permutation helpers: out[i] = x[perm[i]] (row i of the result is row perm[i] of x).
Mat permute_rows(const Mat& x, const std::vector<std::size_t>& perm);

}  // namespace attn
