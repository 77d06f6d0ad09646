// Chapter 05 exercises: the sinusoidal table, the RoPE rotation and the ALiBi bias, by hand.
//   scripts/exercises check 05     build your exercises.cpp and run its checks
//   scripts/exercises hint 05      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex05 {

// 05.1 — -> (n_positions, d), d even: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same angle).
attn::Mat sinusoidal_table(std::size_t n_positions, std::size_t d);

// 05.2 — x: (n, d), d even -> (n, d): row t sits at position start + t; rotate each ADJACENT pair
// (x[2i], x[2i+1]) by the angle pos·θ_i, θ_i = 10000^(−2i/d):
//   y[2i] = x[2i]·cos − x[2i+1]·sin,   y[2i+1] = x[2i]·sin + x[2i+1]·cos
attn::Mat rope_rotate(const attn::Mat& x, std::size_t start);

// 05.3 — -> (n_heads, n, n) for n_heads a power of 2: bias(h, i, j) = −m_h·|i − j| with slopes
// m_h = 2^(−8(h+1)/n_heads) for h = 0 … n_heads − 1 (Press et al. 2021, §3).
attn::Tensor3 alibi_bias(std::size_t n_heads, std::size_t n);

}  // namespace ex05
