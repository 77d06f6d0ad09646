// Chapter 09's measurements (see attn/studies/decoder_study.hpp).
#include "attn/studies/decoder_study.hpp"

#include <algorithm>
#include <cmath>

#include "attn/nn/activations.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/nn/linear.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/studies/timing.hpp"

namespace attn {

NormCost norm_cost(const Mat& x, int repeats) {
  NormCost c;
  c.rows = x.shape(0);
  c.channels = x.shape(1);
  const Norm rms = rmsnorm_init(c.channels), ln = layernorm_init(c.channels);
  Mat y;
  Vec mean, rstd;
  c.rms_seconds = best_seconds([&] { rmsnorm_forward(y, rstd, x, rms, 1e-5f); }, repeats);
  c.layer_seconds = best_seconds([&] { layernorm_forward(y, mean, rstd, x, ln, 1e-5f); }, repeats);
  return c;
}

FfnCost ffn_cost(std::size_t d, std::size_t hidden, std::size_t rows, std::uint64_t seed, int repeats) {
  Rng rng(seed);
  FfnCost c;
  c.d_model = d;
  c.relu_hidden = 4 * d;
  c.swiglu_hidden = hidden;
  c.relu_params = 2 * d * c.relu_hidden;
  c.swiglu_params = 3 * d * hidden;
  const Linear up = linear_init(d, c.relu_hidden, rng, false), down = linear_init(c.relu_hidden, d, rng, false);
  const SwiGLU sw = swiglu_init(d, hidden, rng);
  const Mat x = rng.normal_mat(rows, d);
  Mat h, y;
  SwiGLUCacheT<float> cache;
  c.relu_seconds = best_seconds(
      [&] {
        linear_forward(h, x, up);  // ReLU FFN: max(0, x·W1)·W2 (no biases, as the SwiGLU here)
        activation_forward(Activation::Relu, h, h);
        linear_forward(y, h, down);
      },
      repeats);
  c.swiglu_seconds = best_seconds([&] { swiglu_forward(y, cache, x, sw); }, repeats);
  return c;
}

std::vector<ShiftScore> shift_scores(const Vec& q, const Vec& k, std::size_t distance,
                                     const std::vector<std::size_t>& starts) {
  const std::size_t d = q.size();
  const std::size_t last = *std::max_element(starts.begin(), starts.end()) + distance + 1;
  const RopeTables tab = rope_tables(last, d);
  const Mat pe = sinusoidal_table(last, d);
  std::vector<ShiftScore> out;
  for (std::size_t m : starts) {
    Mat qm = xt::zeros<float>({std::size_t(1), d}), kn = xt::zeros<float>({std::size_t(1), d});
    xt::view(qm, 0, xt::all()) = q;
    xt::view(kn, 0, xt::all()) = k;
    const Mat qr = rope_rotate(qm, tab, m), kr = rope_rotate(kn, tab, m + distance);
    ShiftScore s;
    s.m = m;
    for (std::size_t i = 0; i < d; ++i) {
      s.rope += double(qr(0, i)) * kr(0, i);
      s.sinusoidal += double(q(i) + pe(m, i)) * double(k(i) + pe(m + distance, i));
    }
    out.push_back(s);
  }
  return out;
}

namespace {
DecoderLM with_positions(const DecoderLM& m, std::size_t positions) {
  if (positions <= m.cfg.context) return m;
  DecoderLM big = m;
  big.cfg.context = positions;
  big.rope = rope_tables(positions, m.cfg.d_head(), m.cfg.rope_theta);
  return big;
}
}  // namespace

std::vector<KvSpeedRow> kv_speed_sweep(const DecoderLM& m, const std::vector<int>& prompt,
                                       const std::vector<std::size_t>& lengths, const SamplerConfig& sc,
                                       std::uint64_t seed, int repeats) {
  std::vector<KvSpeedRow> rows;
  for (std::size_t n : lengths) {
    const DecoderLM mm = with_positions(m, prompt.size() + n);
    std::vector<int> a, b;
    KvSpeedRow r;
    r.tokens = n;
    r.cached_seconds = best_seconds([&] { a = generate_tokens(mm, prompt, n, sc, seed, CacheMode::Contiguous); },
                                    repeats, false);
    r.uncached_seconds = best_seconds([&] { b = generate_tokens(mm, prompt, n, sc, seed, CacheMode::None); },
                                      repeats, false);
    r.identical = a == b;
    rows.push_back(r);
  }
  return rows;
}

PrefillDecode prefill_vs_decode(const DecoderLM& m, const std::vector<int>& tokens, int repeats) {
  PrefillDecode p;
  p.tokens = tokens.size();
  Vec a, b;
  p.prefill_seconds = best_seconds(
      [&] {
        auto cache = decoder_lm_cache(m, tokens.size());
        a = decoder_lm_feed(m, cache, tokens);
      },
      repeats);
  p.decode_seconds = best_seconds(
      [&] {
        auto cache = decoder_lm_cache(m, tokens.size());
        for (int t : tokens) b = decoder_lm_feed(m, cache, {t});
      },
      repeats);
  p.max_logit_diff = double(xt::amax(xt::abs(a - b))());
  return p;
}

PagedStudy paged_study(const DecoderLM& m, const std::vector<std::vector<int>>& prompts,
                       const std::vector<std::size_t>& n_new, const SamplerConfig& sc, std::uint64_t seed,
                       std::size_t block_size) {
  PagedStudy s;
  s.block_size = block_size;
  s.sequences = prompts.size();
  s.max_len = m.cfg.context;
  const std::size_t width = m.cfg.n_kv_heads * m.cfg.d_head(), layers = m.blocks.size();
  const std::size_t pool_blocks = prompts.size() * ((m.cfg.context + block_size - 1) / block_size);
  PagedKVCache cache = paged_kv_make(layers, width, pool_blocks, block_size);
  s.generated = generate_batch_paged(m, cache, prompts, n_new, sc, seed);
  s.identical = true;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    s.lengths.push_back(cache.lengths[i]);
    s.tokens_stored += cache.lengths[i];
    if (generate_tokens(m, prompts[i], n_new[i], sc, seed + i) != s.generated[i]) s.identical = false;
  }
  s.blocks_used = cache.blocks_in_use();
  s.paged_bytes = paged_kv_bytes_in_use(cache);
  s.contiguous_bytes = contiguous_kv_bytes(layers, width, prompts.size(), m.cfg.context);
  s.exact_bytes = 2 * layers * s.tokens_stored * width * 4;
  return s;
}

}  // namespace attn
