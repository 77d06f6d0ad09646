// Chapter 01 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 01
// Vectors and matrices are xtensor containers: v(i), m(i, j), m.shape(0); xt::zeros<float>({n}).
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex01 {

// Exercise 01.1 — bahdanau_energies
// Hint: one of the two products inside tanh does not depend on j — how often must you compute it?
// Hint: check the sizes: each product inside tanh has A numbers, and v_a turns A numbers into one.
attn::Vec bahdanau_energies(const attn::Vec& s_prev, const attn::Mat& H, const attn::Mat& w_a,
                            const attn::Mat& u_a, const attn::Vec& v_a) {
  throw attn::NotImplemented("01.1 bahdanau_energies: e_j = v_aᵀ tanh(s_prev·W_a + h_j·U_a)");
}

// Exercise 01.2 — attention_weights
// Hint: exp(1000) overflows a float; which constant can you subtract from every energy without changing α?
attn::Vec attention_weights(const attn::Vec& e) {
  throw attn::NotImplemented("01.2 attention_weights: exp(e_j − max) / Σ_k exp(e_k − max)");
}

// Exercise 01.3 — context_vector
// Hint: α has one weight per source word; which axis of H runs over the source words?
attn::Vec context_vector(const attn::Vec& alpha, const attn::Mat& H) {
  throw attn::NotImplemented("01.3 context_vector: c = Σ_j α_j h_j (a weighted sum of H's rows)");
}

}  // namespace ex01
