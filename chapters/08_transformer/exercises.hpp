// Chapter 08 exercises: the decoder's causal self-attention, then one step of beam search.
//   scripts/exercises check 08     build your exercises.cpp and run its checks
//   scripts/exercises hint 08      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>
#include <vector>

#include "attn/models/transformer_decode.hpp"
#include "attn/tensor/tensor.hpp"

namespace ex08 {

// 08.1 — q, k, v: (T, d) of one head -> (T, d): softmax(Q·Kᵀ/√d + M)·V with the causal mask
// M_ij = 0 for j ≤ i and −∞ for j > i, so position i reads only positions 0 … i.
attn::Mat causal_self_attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v);

// 08.2 — one step of beam search: cum (K,) the live hypotheses' Σ log p (−∞ = no hypothesis),
// logp (K, V) each one's next-token log-probabilities -> the `width` best extensions
// (parent k, token v, score cum[k] + logp(k, v)), best first; equal scores: lower parent, then
// lower token first.
std::vector<attn::BeamCandidate> beam_step(const std::vector<double>& cum, const attn::Mat& logp, std::size_t width);

}  // namespace ex08
