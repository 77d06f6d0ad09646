// Parameters and FLOPs of the original Transformer (Vaswani et al. 2017, base model, Table 3):
// d_model 512, 8 heads × 64, feed-forward 2048, 6 encoder + 6 decoder layers, shared 37000-token
// BPE vocabulary (§5.1). FLOPs count a multiply-add as 2; softmax, layer norm and residual adds are
// left out (they are O(T·d) or O(T²·h), a few percent at most).
//   per layer, sequence length T:  projections Q, K, V, O  4 · 2·T·d²
//                                  scores Q·Kᵀ and A·V      2 · 2·T²·d   (all heads together)
//                                  feed-forward            2 · 2·T·d·d_ff
#pragma once

#include <cstddef>

namespace attn {

struct TransformerConfig {
  std::size_t d_model = 512;  // Table 3, base
  std::size_t n_heads = 8;    // d_head = 64
  std::size_t d_ff = 2048;
  std::size_t n_encoder = 6;
  std::size_t n_decoder = 6;
  std::size_t vocab = 37000;  // §5.1: shared source-target BPE vocabulary (English–German)
};

struct LayerCost {
  double attention_params = 0, ffn_params = 0, norm_params = 0;
  double projection_flops = 0;  // Q, K, V, O projections
  double score_flops = 0;       // Q·Kᵀ and A·V
  double ffn_flops = 0;
  double params() const { return attention_params + ffn_params + norm_params; }
  double flops() const { return projection_flops + score_flops + ffn_flops; }
  double attention_share() const { return (projection_flops + score_flops) / flops(); }
};

// One encoder layer (self-attention + feed-forward, two layer norms) on T tokens.
LayerCost encoder_layer_cost(const TransformerConfig& cfg, std::size_t T);
// One decoder layer (masked self-attention on T target tokens, cross-attention to S source tokens,
// feed-forward, three layer norms). Causal masking does not change the dense FLOPs counted here.
LayerCost decoder_layer_cost(const TransformerConfig& cfg, std::size_t T, std::size_t S);

struct TransformerParams {
  double encoder = 0, decoder = 0, embedding = 0;  // embedding shared by both sides and the softmax
  double total() const { return encoder + decoder + embedding; }
};
TransformerParams transformer_params(const TransformerConfig& cfg);

}  // namespace attn
