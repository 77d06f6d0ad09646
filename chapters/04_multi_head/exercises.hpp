// Chapter 04 exercises: split Q into heads, then write multi-head attention end to end.
//   scripts/exercises check 04     build your exercises.cpp and run its checks
//   scripts/exercises hint 04      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex04 {

// 04.1 — x: (n, h·d_k) -> (h, n, d_k): head i is the column block [i·d_k, (i+1)·d_k).
attn::Tensor3 split_heads(const attn::Mat& x, std::size_t n_heads);

// 04.2 — x: (n, d_model), W_Q, W_K, W_V, W_O: (d_model, d_model), no biases -> (n, d_model):
// Q = X·W_Q (likewise K, V); per head i: O_i = softmax(Q_i·K_iᵀ/√d_k)·V_i; concat the O_i; ·W_O.
attn::Mat multi_head_attention(const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k, const attn::Mat& w_v,
                               const attn::Mat& w_o, std::size_t n_heads);

}  // namespace ex04
