// Chapter 07 exercises: cross-attention yourself, and the mask a decoder needs to read a padded source.
//   scripts/exercises check 07     build your exercises.cpp and run its checks
//   scripts/exercises hint 07      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex07 {

// 07.1 — y: (T, d_y) the sequence that asks, x: (S, d_x) the sequence that is read,
// w_q: (d_y, d_k), w_k: (d_x, d_k), w_v: (d_x, d_v) -> (T, d_v):
// softmax((y·w_q)·(x·w_k)ᵀ / √d_k)·(x·w_v).
attn::Mat cross_attention(const attn::Mat& y, const attn::Mat& x, const attn::Mat& w_q, const attn::Mat& w_k,
                          const attn::Mat& w_v);

// 07.2 — a batch pads short sources to a common length S; only the first `valid` source positions
// are real words. Return the additive (T, S) mask for T target positions: 0 where source position
// j may be read (j < valid), −∞ where it is padding.
attn::Mat source_padding_mask(std::size_t t, std::size_t s, std::size_t valid);

}  // namespace ex07
