// Chapter 01 exercises: Bahdanau's three steps for one decoder step, on plain vectors.
//   scripts/exercises check 01     build your exercises.cpp and run its checks
//   scripts/exercises hint 01      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include "attn/tensor/tensor.hpp"

namespace ex01 {

// 01.1 — energies e_j = v_aᵀ tanh(s_prev·W_a + h_j·U_a), one per source word (right-multiplied).
// s_prev: (Hd,), H: (S, He) rows h_j, w_a: (Hd, A), u_a: (He, A), v_a: (A,) -> e: (S,)
attn::Vec bahdanau_energies(const attn::Vec& s_prev, const attn::Mat& H, const attn::Mat& w_a,
                            const attn::Mat& u_a, const attn::Vec& v_a);

// 01.2 — alignment weights α = softmax(e): non-negative, summing to 1, finite for large energies.
// e: (S,) -> α: (S,)
attn::Vec attention_weights(const attn::Vec& e);

// 01.3 — the context vector c = Σ_j α_j h_j = αᵀH.   alpha: (S,), H: (S, He) -> c: (He,)
attn::Vec context_vector(const attn::Vec& alpha, const attn::Mat& H);

}  // namespace ex01
