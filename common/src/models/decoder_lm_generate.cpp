// Sampling and generation (see attn/models/decoder_lm_generate.hpp).
#include "attn/models/decoder_lm_generate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "attn/tensor/softmax.hpp"

namespace attn {

std::vector<std::pair<int, float>> top_entries(const Vec& probs, std::size_t k) {
  std::vector<int> idx(probs.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + long(k), idx.end(), [&](int a, int b) {
    return probs(std::size_t(a)) > probs(std::size_t(b)) || (probs(std::size_t(a)) == probs(std::size_t(b)) && a < b);
  });
  std::vector<std::pair<int, float>> out;
  for (std::size_t i = 0; i < k; ++i) out.emplace_back(idx[i], probs(std::size_t(idx[i])));
  return out;
}

Vec sampling_distribution(const Vec& logits, const SamplerConfig& cfg) {
  const std::size_t n = logits.size();
  if (n == 0) throw ShapeError("sampling_distribution: empty logits");
  if (!(cfg.temperature >= 0.0f) || !(cfg.top_p > 0.0f && cfg.top_p <= 1.0f))
    throw std::invalid_argument("sampling_distribution: need temperature >= 0 and 0 < top_p <= 1");
  Vec p = xt::zeros<float>({n});
  if (cfg.temperature == 0.0f) {  // greedy
    p(std::size_t(top_entries(logits, 1)[0].first)) = 1.0f;
    return p;
  }
  softmax_row_temperature(p.data(), logits.data(), n, cfg.temperature);  // p = softmax(logits / τ)
  // Keep the best tokens: top-k first, then the smallest prefix whose mass reaches top_p.
  const auto order = top_entries(p, n);
  std::size_t keep = cfg.top_k > 0 ? std::min(cfg.top_k, n) : n;
  if (cfg.top_p < 1.0f) {
    double mass = 0.0;
    std::size_t j = 0;
    while (j < keep) {
      mass += order[j].second;
      ++j;
      if (mass >= double(cfg.top_p)) break;
    }
    keep = j;
  }
  double kept = 0.0;
  for (std::size_t j = 0; j < keep; ++j) kept += order[j].second;
  Vec q = xt::zeros<float>({n});
  for (std::size_t j = 0; j < keep; ++j) q(std::size_t(order[j].first)) = float(order[j].second / kept);
  return q;
}

int sample_token(const Vec& logits, const SamplerConfig& cfg, Rng& rng) {
  const Vec p = sampling_distribution(logits, cfg);
  const double u = rng.uniform();
  double cdf = 0.0;
  int last = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p(i) <= 0.0f) continue;
    cdf += p(i);
    last = int(i);
    if (u < cdf) return int(i);
  }
  return last;  // u beyond the rounded total: the last kept token
}

namespace {
void check_lengths(const char* fn, const DecoderLM& m, std::size_t prompt, std::size_t n_new) {
  if (prompt == 0) throw ShapeError(std::string(fn) + ": the prompt needs at least one token");
  if (prompt + n_new > m.cfg.context)
    throw ShapeError(std::string(fn) + ": " + std::to_string(prompt) + " prompt tokens + " + std::to_string(n_new) +
                     " new ones exceed the context of " + std::to_string(m.cfg.context));
}
}  // namespace

std::vector<int> generate_tokens(const DecoderLM& m, const std::vector<int>& prompt, std::size_t n_new,
                                 const SamplerConfig& cfg, std::uint64_t seed, CacheMode mode) {
  check_lengths("generate_tokens", m, prompt.size(), n_new);
  Rng rng(seed);
  std::vector<int> seq = prompt, out;
  if (n_new == 0) return out;
  std::vector<KVCache> cache;
  Vec logits;
  if (mode == CacheMode::Contiguous) {
    cache = decoder_lm_cache(m, prompt.size() + n_new);
    logits = decoder_lm_feed(m, cache, prompt);  // prefill: the whole prompt at once
  } else {
    logits = decoder_lm_last_logits(m, seq);
  }
  for (std::size_t i = 0; i < n_new; ++i) {
    const int tok = sample_token(logits, cfg, rng);
    out.push_back(tok);
    seq.push_back(tok);
    if (i + 1 == n_new) break;
    logits = mode == CacheMode::Contiguous ? decoder_lm_feed(m, cache, {tok})  // decode: one new token
                                           : decoder_lm_last_logits(m, seq);   // recompute the prefix
  }
  return out;
}

Vec decoder_lm_feed_paged(const DecoderLM& m, PagedKVCache& cache, std::size_t seq, const std::vector<int>& tokens) {
  if (cache.layers != m.blocks.size() || cache.width != m.cfg.n_kv_heads * m.cfg.d_head())
    throw ShapeError("decoder_lm_feed_paged: the paged cache has " + std::to_string(cache.layers) +
                     " layers of width " + std::to_string(cache.width) + ", the model needs " +
                     std::to_string(m.blocks.size()) + " of " + std::to_string(m.cfg.n_kv_heads * m.cfg.d_head()));
  if (seq >= cache.lengths.size()) throw std::out_of_range("decoder_lm_feed_paged: no sequence " + std::to_string(seq));
  const std::size_t start = cache.lengths[seq];
  std::vector<std::size_t> rows;  // one slot per new token, shared by every layer
  for (std::size_t i = 0; i < tokens.size(); ++i) rows.push_back(paged_kv_append_slot(cache, seq));
  return decoder_lm_feed_with(m, tokens, start, [&](std::size_t l, const Mat& q, const Mat& k, const Mat& v) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::copy(k.data() + i * cache.width, k.data() + (i + 1) * cache.width, cache.k[l].data() + rows[i] * cache.width);
      std::copy(v.data() + i * cache.width, v.data() + (i + 1) * cache.width, cache.v[l].data() + rows[i] * cache.width);
    }
    return paged_attention(cache, l, seq, q, m.cfg.n_heads);
  });
}

std::vector<std::vector<int>> generate_batch_paged(const DecoderLM& m, PagedKVCache& cache,
                                                   const std::vector<std::vector<int>>& prompts,
                                                   const std::vector<std::size_t>& n_new, const SamplerConfig& cfg,
                                                   std::uint64_t seed) {
  if (prompts.size() != n_new.size())
    throw std::invalid_argument("generate_batch_paged: " + std::to_string(prompts.size()) + " prompts but " +
                                std::to_string(n_new.size()) + " lengths");
  const std::size_t n = prompts.size();
  std::vector<std::size_t> ids;
  std::vector<Rng> rngs;
  std::vector<Vec> logits(n);
  std::vector<std::vector<int>> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    check_lengths("generate_batch_paged", m, prompts[i].size(), n_new[i]);
    ids.push_back(paged_kv_add_sequence(cache));
    rngs.emplace_back(seed + i);
    logits[i] = decoder_lm_feed_paged(m, cache, ids[i], prompts[i]);  // prefill each prompt
  }
  for (bool busy = true; busy;) {  // one round: every unfinished sequence advances one token
    busy = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i].size() == n_new[i]) continue;
      const int tok = sample_token(logits[i], cfg, rngs[i]);
      out[i].push_back(tok);
      if (out[i].size() < n_new[i]) {
        logits[i] = decoder_lm_feed_paged(m, cache, ids[i], {tok});
        busy = true;
      }
    }
  }
  return out;
}

}  // namespace attn
