// A small random decoder LM for the tests of generation and of chapter 09's studies: 23 tokens,
// d_model 16, 2 layers, 4 query heads sharing 2 K/V heads, d_ff 24, context 64; weights drawn far
// from the init's 0.02 (and gains near 1), so that its next-token distribution is not flat.
#pragma once

#include <cstdint>
#include <string>

#include "attn/models/decoder_lm.hpp"
#include "attn/tensor/rng.hpp"

inline attn::DecoderLM small_decoder_lm(std::uint64_t seed) {
  attn::DecoderLMConfig c;
  c.vocab = 23;
  c.d_model = 16;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.d_ff = 24;
  c.context = 64;
  attn::DecoderLM m = attn::decoder_lm_init(c, seed);
  attn::Rng rng(seed + 7);
  attn::visit_decoder_params([&](const std::string&, auto& t) {
    for (auto& x : t) x = rng.normal() * 0.5f + (t.dimension() == 1 ? 1.0f : 0.0f);
  }, m);
  return m;
}
