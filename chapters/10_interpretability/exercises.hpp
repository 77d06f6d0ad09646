// Chapter 10 exercises: measure a head from its weights — its entropy, and whether it is an
// induction head.
//   scripts/exercises check 10     build your exercises.cpp and run its checks
//   scripts/exercises hint 10      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <vector>

#include "attn/tensor/tensor.hpp"

namespace ex10 {

// 10.1 — p: (T_q, T_k), each row a distribution -> (T_q,): each row's entropy in nats,
// H_i = −Σ_j p_ij · ln p_ij, where a weight of exactly 0 contributes 0 (masked keys).
attn::Vec attention_entropy(const attn::Mat& p);

// 10.2 — p: (T, T) one head's weights over a sequence of T tokens (queries = keys = positions).
// For each query position i whose token appeared earlier (at some j < i with tokens[j] == tokens[i]),
// add up the weight p(i, j + 1) on the token that FOLLOWED each earlier copy; return the mean of
// those sums over such positions (0 if no position has an earlier copy).
double prefix_matching_score(const attn::Mat& p, const std::vector<int>& tokens);

}  // namespace ex10
