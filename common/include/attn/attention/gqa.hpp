// Grouped-query attention (Ainslie et al. 2023, GQA) and multi-query attention (Shazeer 2019, MQA):
// H query heads share G key/value heads, G divides H; query head h reads K/V head h / (H/G).
//   G = H: multi-head attention (MHA)     G = 1: multi-query attention (MQA)
// Fewer K/V heads shrink the K/V projections and, above all, the KV cache a decoder keeps per token.
// This file: the per-head computation on already-projected heads, and the parameter / cache-byte
// counts chapter 04 prints (chapter 06's kv_cache.hpp has the decoding side).
#pragma once

#include <cstddef>

#include "attn/attention/attention.hpp"

namespace attn {

// kv: (G, S, d) -> (H, S, d): head h gets group h / (H/G). H % G != 0 throws ShapeError.
Tensor3 repeat_kv(const Tensor3& kv, std::size_t n_heads);

// q: (H, T, d_k), k: (G, S, d_k), v: (G, S, d_v), mask: (T, S) or empty -> per query head:
// softmax(q_h·k_gᵀ·scale + mask)·v_g with g = h / (H/G). scale <= 0 means 1/√d_k.
AttentionResult3 grouped_query_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, const Mat& mask = {},
                                         float scale = 0.0f);

// Parameters of one attention layer with right-multiplied projections (bias adds one per output):
//   W_Q: d_model × H·d_head,  W_K, W_V: d_model × G·d_head,  W_O: H·d_head × d_model
struct AttentionParamCount {
  std::size_t q = 0, k = 0, v = 0, o = 0;
  std::size_t total() const { return q + k + v + o; }
};
AttentionParamCount attention_param_count(std::size_t d_model, std::size_t n_heads, std::size_t n_kv_heads,
                                          std::size_t d_head, bool bias = false);

// Bytes a decoder's KV cache grows by per generated token: K and V, for every layer and K/V head:
//   2 · n_layers · G · d_head · bytes_per_value   (bytes_per_value = 2 for fp16/bf16)
std::size_t kv_cache_bytes_per_token(std::size_t n_layers, std::size_t n_kv_heads, std::size_t d_head,
                                     std::size_t bytes_per_value = 2);

}  // namespace attn
