// A tiny Transformer configuration for tests (d_model 16, 2 heads, d_ff 32) sized to a corpus's
// vocabularies; the tests that train or inspect one share it.
#pragma once

#include <cstddef>

#include "attn/data/corpus.hpp"
#include "attn/models/transformer.hpp"

// A small toy corpus (200 training pairs) of sources min_len … max_len words long.
inline attn::ToyCorpus tiny_toy_corpus(std::size_t min_len = 4, std::size_t max_len = 8, std::size_t n_test = 10) {
  attn::CorpusConfig cc;
  cc.n_train = 200;
  cc.n_valid = 10;
  cc.n_test = n_test;
  cc.min_len = min_len;
  cc.max_len = max_len;
  return attn::make_toy_corpus(cc);
}

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
