// The five ways chapter 05 gives (or does not give) self-attention a sense of order, behind one
// switch, so the same sentence or model can be run with each:
//   none         X                                      (permutation-equivariant)
//   sinusoidal   X + PE            (Vaswani et al. 2017, §3.5; attn/position/sinusoidal.hpp)
//   learned      X + P[pos]        (a trained table; attn/position/learned_position.hpp)
//   rope         Q, K rotated by position   (Su et al. 2021; attn/position/rope.hpp)
//   alibi        scores − m·|i − j|         (Press et al. 2021; attn/position/alibi.hpp)
#pragma once

#include <string>
#include <vector>

#include "attn/attention/self_attention.hpp"

namespace attn {

enum class PositionEncoding { None, Sinusoidal, Learned, Rope, Alibi };

const char* position_encoding_name(PositionEncoding e);  // "none", "sinusoidal", …
const std::vector<PositionEncoding>& all_position_encodings();

// Single-head self-attention with one encoding applied. x: (T, d_model); learned_table: (≥ T, d_model)
// (used only by Learned); alibi_slope used only by Alibi; mask: (T, T) or empty -> output (T, d_v).
// Rope needs an even d_k.
Mat positioned_self_attention(const Mat& x, const SelfAttentionWeights& w, PositionEncoding enc,
                              const Mat& learned_table = {}, float alibi_slope = 0.25f, const Mat& mask = {});

}  // namespace attn
