// Chapter 02 exercises: Luong's general score and the local-p window, on plain vectors.
//   scripts/exercises check 02     build your exercises.cpp and run its checks
//   scripts/exercises hint 02      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex02 {

// 02.1 — general scores: score_s = h_tᵀ W_a h̄_s = (h_t·W_a)·h̄_s, one per source position.
// h_t: (Hd,), H: (S, He) rows h̄_s, w_a: (Hd, He) -> (S,)
attn::Vec luong_general_scores(const attn::Vec& h_t, const attn::Mat& H, const attn::Mat& w_a);

// 02.2 — the predicted position of local-p (Luong et al. 2015, eq. 9):
//   p_t = S · σ(v_pᵀ tanh(h_t·W_p))      h_t: (Hd,), w_p: (Hd, P), v_p: (P,) -> p_t in (0, S)
double local_p_position(const attn::Vec& h_t, const attn::Mat& w_p, const attn::Vec& v_p, std::size_t src_len);

// 02.3 — local-p weights (eq. 10): softmax of the scores over the window |s − p_t| ≤ D (positions
// outside get 0), each then multiplied by exp(−(s − p_t)² / (2σ²)) with σ = D/2. Positions s are
// 0-based. scores: (S,) -> α: (S,)
attn::Vec local_p_weights(const attn::Vec& scores, double p_t, std::size_t half_width);

}  // namespace ex02
