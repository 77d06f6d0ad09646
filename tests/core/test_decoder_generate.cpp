// Sampling, generation and the paged KV cache (attn/models/decoder_lm_generate.hpp,
// attn/attention/paged_kv_cache.hpp): temperature / top-k / top-p by hand, same seed -> same text,
// cached = uncached tokens, paged = contiguous tokens for a batch of mixed lengths, block tables.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/models/decoder_lm_generate.hpp"
#include "attn/tensor/rng.hpp"
#include "small_decoder.hpp"

using namespace attn;


TEST_CASE("sampling: temperature, top-k and top-p by hand") {
  Vec logits = {2.0f, 1.0f, 0.0f, -1.0f};
  const Vec p1 = sampling_distribution(logits, {1.0f, 0, 1.0f});
  double z = std::exp(2.0) + std::exp(1.0) + 1.0 + std::exp(-1.0);
  CHECK(p1(0) == doctest::Approx(std::exp(2.0) / z));
  const Vec p2 = sampling_distribution(logits, {0.5f, 0, 1.0f});  // τ = 0.5 doubles the logits
  z = std::exp(4.0) + std::exp(2.0) + 1.0 + std::exp(-2.0);
  CHECK(p2(1) == doctest::Approx(std::exp(2.0) / z));
  const Vec pk = sampling_distribution(logits, {1.0f, 2, 1.0f});  // top-2, renormalised
  CHECK(pk(2) == 0.0f);
  CHECK(pk(0) == doctest::Approx(std::exp(2.0) / (std::exp(2.0) + std::exp(1.0))));
  // top-p 0.7: p1 = 0.644, 0.237, …: 0.644 < 0.7, so the second token is needed too.
  const Vec pp = sampling_distribution(logits, {1.0f, 0, 0.7f});
  CHECK(pp(1) > 0.0f);
  CHECK(pp(2) == 0.0f);
  CHECK(double(xt::sum(pp)()) == doctest::Approx(1.0));
  const Vec pg = sampling_distribution(logits, {0.0f, 0, 1.0f});  // greedy
  CHECK(pg(0) == 1.0f);
  Rng rng(1);
  CHECK(sample_token(logits, {0.0f, 0, 1.0f}, rng) == 0);
  const auto top = top_entries(p1, 2);
  CHECK(top[0].first == 0);
  CHECK(top[1].first == 1);
  CHECK_THROWS_AS(sampling_distribution(logits, {1.0f, 0, 0.0f}), std::invalid_argument);
  // Draws follow the distribution: 4000 draws of p1, each frequency within 4 standard errors.
  std::vector<int> hits(4, 0);
  for (int i = 0; i < 4000; ++i) ++hits[std::size_t(sample_token(logits, {1.0f, 0, 1.0f}, rng))];
  for (std::size_t i = 0; i < 4; ++i) {
    const double p = p1(i), se = std::sqrt(p * (1 - p) / 4000.0);
    CHECK(std::abs(hits[i] / 4000.0 - p) < 4 * se);
  }
}

TEST_CASE("generation: same seed, same tokens; cached and uncached agree; lengths are checked") {
  const DecoderLM m = small_decoder_lm(3);
  const std::vector<int> prompt{1, 5, 7};
  const SamplerConfig sc{0.9f, 0, 0.95f};
  const auto a = generate_tokens(m, prompt, 30, sc, 42, CacheMode::Contiguous);
  const auto b = generate_tokens(m, prompt, 30, sc, 42, CacheMode::Contiguous);
  const auto c = generate_tokens(m, prompt, 30, sc, 42, CacheMode::None);
  const auto d = generate_tokens(m, prompt, 30, sc, 43, CacheMode::Contiguous);
  CHECK(a.size() == 30);
  CHECK(a == b);
  CHECK(a == c);
  CHECK(a != d);
  CHECK(generate_tokens(m, prompt, 30, {0.0f, 0, 1.0f}, 1) == generate_tokens(m, prompt, 30, {0.0f, 0, 1.0f}, 2));
  CHECK_THROWS_AS(generate_tokens(m, prompt, 62, sc, 1), ShapeError);
  CHECK_THROWS_AS(generate_tokens(m, {}, 2, sc, 1), ShapeError);
}

TEST_CASE("paged KV cache: block tables, memory, and the same tokens as the contiguous cache") {
  PagedKVCache c = paged_kv_make(2, 8, 6, 4);
  const std::size_t s0 = paged_kv_add_sequence(c), s1 = paged_kv_add_sequence(c);
  for (int i = 0; i < 5; ++i) paged_kv_append_slot(c, s0);  // 5 tokens: 2 blocks
  for (int i = 0; i < 3; ++i) paged_kv_append_slot(c, s1);  // 3 tokens: 1 block
  CHECK(c.tables[s0].size() == 2);
  CHECK(c.tables[s1].size() == 1);
  CHECK(c.blocks_in_use() == 3);
  CHECK(paged_kv_row(c, s0, 4) == c.tables[s0][1] * 4);  // token 4 opens the second block
  CHECK(paged_kv_row(c, s1, 2) == c.tables[s1][0] * 4 + 2);
  CHECK(paged_kv_bytes_in_use(c) == 2 * 2 * 3 * 4 * 8 * 4);
  CHECK(contiguous_kv_bytes(2, 8, 2, 16) == 2 * 2 * 2 * 16 * 8 * 4);
  CHECK_THROWS_AS(paged_kv_row(c, s1, 3), std::out_of_range);
  paged_kv_free_sequence(c, s0);
  CHECK(c.blocks_in_use() == 1);
  for (int i = 0; i < 21; ++i) paged_kv_append_slot(c, s1);  // 24 tokens: 6 full blocks, the whole pool
  CHECK_THROWS_AS(paged_kv_append_slot(c, s1), std::runtime_error);

  // A batch of mixed lengths through one pool gives each sequence the tokens it gets alone.
  const DecoderLM m = small_decoder_lm(5);
  const SamplerConfig sc{0.8f, 0, 0.95f};
  const std::vector<std::vector<int>> prompts{{1}, {2, 3, 4, 5, 6, 7, 8}, {9, 10, 11}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 1, 2, 3, 4, 5, 6, 7}};
  const std::vector<std::size_t> n_new{12, 3, 20, 9};
  PagedKVCache pool = paged_kv_make(m.blocks.size(), m.cfg.n_kv_heads * m.cfg.d_head(), 40, 5);
  const auto got = generate_batch_paged(m, pool, prompts, n_new, sc, 100);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == generate_tokens(m, prompts[i], n_new[i], sc, 100 + i));
    CHECK(pool.lengths[i] == prompts[i].size() + n_new[i] - 1);
  }
  // The paged feed's logits equal the contiguous ones.
  PagedKVCache p2 = paged_kv_make(m.blocks.size(), m.cfg.n_kv_heads * m.cfg.d_head(), 8, 3);
  const std::size_t id = paged_kv_add_sequence(p2);
  const Vec lp = decoder_lm_feed_paged(m, p2, id, {4, 8, 15, 16});
  const Vec lq = decoder_lm_feed_paged(m, p2, id, {23 % 23, 42 % 23});
  const Vec want = decoder_lm_last_logits(m, {4, 8, 15, 16, 0, 19});
  CHECK(float(xt::amax(xt::abs(lq - want))()) < 1e-4f);
  CHECK(float(xt::amax(xt::abs(lp - decoder_lm_last_logits(m, {4, 8, 15, 16})))()) < 1e-4f);
}
