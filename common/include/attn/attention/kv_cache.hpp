// Autoregressive decoding with a KV cache. A decoder produces one token at a time; token t's
// attention needs the keys and values of tokens 0 … t. Without a cache every step recomputes
// them all (O(t·d_model²) projections per step, O(n²·d_model²) in total); with a cache each step
// projects only the new token and appends its k, v (O(d_model²) + O(t·d) per step).
// The cache costs memory: per token, per layer, 2 (K and V) × kv_heads × head_dim values.
// GQA (Ainslie et al. 2023) shares each K/V head between heads / kv_heads query heads and shrinks
// the cache by that factor; MQA (Shazeer 2019) keeps one K/V head.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/tensor/tensor.hpp"

namespace attn {

class Rng;

// One causal self-attention layer with grouped K/V heads, row-vector convention (x · W).
struct DecoderAttention {
  std::size_t d_model = 0, heads = 0, kv_heads = 0, head_dim = 0;
  Mat wq;  // (d_model, heads · head_dim)
  Mat wk;  // (d_model, kv_heads · head_dim)
  Mat wv;  // (d_model, kv_heads · head_dim)
  Mat wo;  // (heads · head_dim, d_model)
};

// Weights ~ N(0, 1/d_model) (keeps activations of order 1). kv_heads must divide heads.
DecoderAttention decoder_attention_init(std::size_t d_model, std::size_t heads, std::size_t kv_heads,
                                        std::size_t head_dim, Rng& rng);

// The cache of one layer: rows 0 … len − 1 hold the keys / values of the tokens so far.
struct KVCache {
  Mat k;  // (capacity, kv_heads · head_dim)
  Mat v;  // (capacity, kv_heads · head_dim)
  std::size_t len = 0;
};
KVCache kv_cache_make(const DecoderAttention& layer, std::size_t capacity);

// The whole sequence at once with a causal mask: x: (T, d_model) -> (T, d_model) = attention(x)·W_o.
Mat decoder_attention_forward(const DecoderAttention& layer, const Mat& x);

// One decoding step with the cache: x_t: (1, d_model) -> (1, d_model); appends k_t, v_t.
Mat decoder_attention_step(const DecoderAttention& layer, KVCache& cache, const Mat& x_t);

// Autoregressive generation from x0: (1, d_model): the next input is the RMS-normalised
// residual x_t + y_t (a stand-in for "embed the sampled token"). Returns the inputs x_0 … x_{steps−1}
// as rows, (steps, d_model). use_cache = false recomputes K and V of the whole prefix every step.
Mat generate(const DecoderAttention& layer, const Mat& x0, std::size_t steps, bool use_cache);

// Bytes the cache holds per token: kv_cache_bytes_per_token() in attn/attention/gqa.hpp.

}  // namespace attn
