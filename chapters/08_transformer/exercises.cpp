// Chapter 08 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 08
// Tensors are xtensor containers: m.shape(0), m(i, j) an element, xt::zeros<float>({a, b}).
// Plain loops are perfectly fine here.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex08 {

// Exercise 08.1 — causal_self_attention
// Hint: scores(i, j) = Σ_c q(i, c)·k(j, c) / √d, but only for j ≤ i; the rest get −∞ before the softmax.
// Hint: a row's softmax subtracts its largest *visible* score; masked entries end up exactly 0.
// Hint: row 0 can only see itself, so out(0, ·) = v(0, ·) — a quick check of your mask's direction.
attn::Mat causal_self_attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v) {
  throw attn::NotImplemented("08.1 causal_self_attention: scores with −∞ where j > i, softmax per row, times V");
}

// Exercise 08.2 — beam_step
// Hint: every (k, v) with a finite cum[k] is a candidate with score cum[k] + logp(k, v): a sum of
// log-probabilities, i.e. the log of the product of probabilities.
// Hint: keep the `width` largest (std::partial_sort or a full sort with a comparator); break ties by
// parent, then token, so the result is deterministic.
std::vector<attn::BeamCandidate> beam_step(const std::vector<double>& cum, const attn::Mat& logp, std::size_t width) {
  throw attn::NotImplemented("08.2 beam_step: score every (hypothesis, token) by cum + log p, keep the best `width`");
}

}  // namespace ex08
