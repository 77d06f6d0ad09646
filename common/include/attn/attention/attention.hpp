// Scaled dot-product attention (Vaswani et al. 2017, eq. 1):
//   Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k + M) · V
// Each query row asks "which keys match me?"; the weights say how much of each value to take.
#pragma once

#include "attn/tensor/tensor.hpp"

namespace attn {

struct AttentionResult {
  Mat scores;   // (T, S) Q·Kᵀ·scale, before the mask and softmax
  Mat weights;  // (T, S) softmax(scores + mask), rows sum to 1 (or 0 when fully masked)
  Mat output;   // (T, d_v) weights · V
};

struct AttentionResult3 {
  Tensor3 scores;   // (H, T, S)
  Tensor3 weights;  // (H, T, S)
  Tensor3 output;   // (H, T, d_v)
};

// The default scale 1/√d_k; pass scale explicitly (e.g. 1) to see what happens without it.
float default_attention_scale(std::size_t d_k);

// q: (T, d_k), k: (S, d_k), v: (S, d_v), mask: (T, S) additive or empty -> output: (T, d_v)
// scale <= 0 means 1/√d_k.
AttentionResult scaled_dot_product_attention(const Mat& q, const Mat& k, const Mat& v, const Mat& mask = {},
                                             float scale = 0.0f);

// Per head: q: (H, T, d_k), k: (H, S, d_k), v: (H, S, d_v), mask: (T, S) shared or empty.
AttentionResult3 scaled_dot_product_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                              const Mat& mask = {}, float scale = 0.0f);

// Reference: the same formula with plain loops in double, for tests.
MatD attention_reference(const Mat& q, const Mat& k, const Mat& v, const Mat& mask = {}, double scale = 0.0);

}  // namespace attn
