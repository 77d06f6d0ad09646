// Chapter 09 exercises: RMSNorm, and one decoding step with a RoPE-rotated, grouped KV cache.
//   scripts/exercises check 09     build your exercises.cpp and run its checks
//   scripts/exercises hint 09      the hints again
// Your file is exercises.cpp; solutions.cpp holds one worked answer (peek only when stuck).
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace ex09 {

// 09.1 — x: (N, d), gamma: (d,) -> (N, d): y = x / √(mean(x²) + eps) · γ, the mean over each row's d
// entries (Zhang & Sennrich 2019). No mean subtraction, no β.
attn::Mat rmsnorm(const attn::Mat& x, const attn::Vec& gamma, float eps);

// 09.2 — one decoding step of causal grouped-query attention with a KV cache, for the token at
// position `pos` (rows 0 … pos − 1 of the caches already hold the earlier tokens' keys, rotated, and
// values). q: (H·dh,), k, v: (G·dh,) are this token's projections before RoPE.
//   1. rotate q and k by RoPE at position pos, each head separately, ADJACENT pairs (2i, 2i+1),
//      θ_i = 10000^(−2i/dh) (as attn/position/rope.hpp)
//   2. write the rotated k and v into row pos of k_cache and v_cache: (capacity, G·dh)
//   3. for each query head h, with K/V head g = h / (H/G): softmax over keys 0 … pos of
//      q_h·k_j/√dh, then Σ_j p_j v_j  -> the heads side by side, (H·dh,)
attn::Vec decode_step(attn::Mat& k_cache, attn::Mat& v_cache, std::size_t pos, const attn::Vec& q,
                      const attn::Vec& k, const attn::Vec& v, std::size_t n_heads, std::size_t n_kv_heads);

}  // namespace ex09
