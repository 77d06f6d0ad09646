// A tiny Transformer configuration for tests (d_model 16, 2 heads, d_ff 32) sized to a corpus's
// vocabularies; the tests that train or inspect one share it.
#pragma once

#include <cstddef>

#include "attn/data/corpus.hpp"
#include "attn/models/transformer.hpp"

inline attn::TransformerModelConfig tiny_transformer_config(const attn::ToyCorpus& corpus, std::size_t layers) {
  attn::TransformerModelConfig cfg;
  cfg.src_vocab = corpus.source_vocab.size();
  cfg.tgt_vocab = corpus.target_vocab.size();
  cfg.d_model = 16;
  cfg.n_heads = 2;
  cfg.d_ff = 32;
  cfg.enc_layers = cfg.dec_layers = layers;
  return cfg;
}
