// Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), the fixed table added to embeddings:
//   PE(pos, 2i) = sin(pos·ω_i),  PE(pos, 2i+1) = cos(pos·ω_i),  ω_i = 1 / 10000^(2i/d)
// Pair i is a point on a circle turned by pos·ω_i. Moving k positions on turns every pair by k·ω_i,
// so PE(pos + k) = M_k · PE(pos) with M_k block-diagonal (one 2×2 rotation per pair) that does not
// depend on pos — the paper's reason to hope the model can "attend by relative positions".
// Tested in tests/core/test_positional.cpp and against tests/golden/golden_positional.py.
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace attn {

// The paper's base: wavelengths form a geometric progression from 2π to 10000·2π (§3.5).
constexpr double kSinusoidalBase = 10000.0;

// ω_i = base^(−2i/d) for i = 0 … d/2 − 1 -> (d/2,). d must be even (std::invalid_argument otherwise).
Vec sinusoidal_frequencies(std::size_t d, double base = kSinusoidalBase);

// -> (n_positions, d): row pos is PE(pos). Computed in double, stored as float.
Mat sinusoidal_table(std::size_t n_positions, std::size_t d, double base = kSinusoidalBase);

// -> (d, d): M_k with PE(pos + k)ᵀ = M_k · PE(pos)ᵀ for every pos (k may be negative).
// Block i (rows/cols 2i, 2i+1) = [[cos kω_i, sin kω_i], [−sin kω_i, cos kω_i]].
Mat sinusoidal_shift(std::size_t d, long k, double base = kSinusoidalBase);

// -> (max_distance + 1,): PE(pos)·PE(pos + k) = Σ_i cos(k·ω_i) for k = 0 … max_distance
// (independent of pos; largest at k = 0, where it equals d/2).
Vec sinusoidal_similarity(std::size_t d, std::size_t max_distance, double base = kSinusoidalBase);

}  // namespace attn
