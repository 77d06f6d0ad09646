// Chapter 10 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 10
// p(i, j) is the weight query i puts on key j; p.shape(0) rows, p.shape(1) columns.
// Plain loops are perfectly fine here.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex10 {

// Exercise 10.1 — attention_entropy
// Hint: loop over rows; inside, sum −p·log(p) over the columns, but skip entries equal to 0
// (log 0 is −∞, and 0·(−∞) is NaN in floating point: the limit of p·log p at 0 is 0).
// Hint: use the natural logarithm (std::log): a row spread evenly over n keys then has entropy log n.
attn::Vec attention_entropy(const attn::Mat& p) {
  throw attn::NotImplemented("10.1 attention_entropy: H_i = −Σ_j p_ij·log p_ij, skipping zeros");
}

// Exercise 10.2 — prefix_matching_score
// Hint: for position i, look for earlier positions j < i holding the same token; the induction
// head's target is the position right AFTER each of them, j + 1 (not j itself).
// Hint: average only over positions that have at least one earlier copy: the first occurrences
// cannot be predicted, and counting them as 0 would make a perfect head score below 1.
double prefix_matching_score(const attn::Mat& p, const std::vector<int>& tokens) {
  throw attn::NotImplemented("10.2 prefix_matching_score: weight on the successors of earlier copies, averaged");
}

}  // namespace ex10
