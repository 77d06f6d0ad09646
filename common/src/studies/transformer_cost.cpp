// Parameter and FLOP counts of the original Transformer (see attn/studies/transformer_cost.hpp).
#include "attn/studies/transformer_cost.hpp"

namespace attn {

namespace {
// One attention block with biases: W_Q, W_K, W_V, W_O (d × d each) + 4 bias vectors.
double attention_block_params(double d) { return 4 * d * d + 4 * d; }
// FFN(x) = max(0, x·W1 + b1)·W2 + b2 (§3.3).
double ffn_params(double d, double dff) { return 2 * d * dff + dff + d; }
}  // namespace

LayerCost encoder_layer_cost(const TransformerConfig& cfg, std::size_t T) {
  const double d = double(cfg.d_model), dff = double(cfg.d_ff), t = double(T);
  LayerCost c;
  c.attention_params = attention_block_params(d);
  c.ffn_params = ffn_params(d, dff);
  c.norm_params = 2 * 2 * d;  // two LayerNorms, γ and β each
  c.projection_flops = 4 * 2 * t * d * d;
  c.score_flops = 2 * 2 * t * t * d;
  c.ffn_flops = 2 * 2 * t * d * dff;
  return c;
}

LayerCost decoder_layer_cost(const TransformerConfig& cfg, std::size_t T, std::size_t S) {
  const double d = double(cfg.d_model), dff = double(cfg.d_ff), t = double(T), s = double(S);
  LayerCost c;
  c.attention_params = 2 * attention_block_params(d);  // masked self-attention + cross-attention
  c.ffn_params = ffn_params(d, dff);
  c.norm_params = 3 * 2 * d;
  // self: Q, K, V, O on T tokens; cross: Q and O on T tokens, K and V on S encoder outputs
  c.projection_flops = 4 * 2 * t * d * d + 2 * 2 * t * d * d + 2 * 2 * s * d * d;
  c.score_flops = 2 * 2 * t * t * d + 2 * 2 * t * s * d;
  c.ffn_flops = 2 * 2 * t * d * dff;
  return c;
}

TransformerParams transformer_params(const TransformerConfig& cfg) {
  TransformerParams p;
  p.encoder = double(cfg.n_encoder) * encoder_layer_cost(cfg, 1).params();
  p.decoder = double(cfg.n_decoder) * decoder_layer_cost(cfg, 1, 1).params();
  p.embedding = double(cfg.vocab) * double(cfg.d_model);  // §3.4: one matrix for both embeddings and the pre-softmax layer
  return p;
}

}  // namespace attn
