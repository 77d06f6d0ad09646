// Chapter 01 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 01
// Vectors and matrices are xtensor containers: v(i), m(i, j), m.shape(0); xt::zeros<float>({n}).
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex01 {

// Exercise 01.1 — bahdanau_energies
// Hint: q = s_prev·W_a is the same for every j: compute it once (A numbers).
// Hint: for each j: k_j = h_j·U_a (A numbers), e_j = Σ_a v_a[a]·tanh(q[a] + k_j[a]).
attn::Vec bahdanau_energies(const attn::Vec& s_prev, const attn::Mat& H, const attn::Mat& w_a,
                            const attn::Mat& u_a, const attn::Vec& v_a) {
  throw attn::NotImplemented("01.1 bahdanau_energies: e_j = v_aᵀ tanh(s_prev·W_a + h_j·U_a)");
}

// Exercise 01.2 — attention_weights
// Hint: subtract the largest energy before exp, then divide by the sum.
attn::Vec attention_weights(const attn::Vec& e) {
  throw attn::NotImplemented("01.2 attention_weights: exp(e_j − max) / Σ_k exp(e_k − max)");
}

// Exercise 01.3 — context_vector
// Hint: c[k] = Σ_j alpha[j]·H(j, k): a weighted sum of H's rows, not of its columns.
attn::Vec context_vector(const attn::Vec& alpha, const attn::Mat& H) {
  throw attn::NotImplemented("01.3 context_vector: c = Σ_j α_j h_j (a weighted sum of H's rows)");
}

}  // namespace ex01
