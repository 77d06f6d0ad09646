// Chapter 09's measurements (see attn/studies/decoder_study.hpp).
#include "attn/studies/decoder_study.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "attn/attention/gqa.hpp"
#include "attn/data/text_corpus.hpp"
#include "attn/nn/activations.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/nn/linear.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/studies/efficient_sweep.hpp"  // loglog_fit

namespace attn {

RangeVerdict judge_within(double from_best, double from_median, double lo, double hi) {
  RangeVerdict v{from_best, from_median, lo, hi, Outcome::inconclusive};
  if (!std::isfinite(from_best) || !std::isfinite(from_median)) return v;
  const bool a = from_best >= lo && from_best <= hi, b = from_median >= lo && from_median <= hi;
  v.outcome = a && b ? Outcome::holds : !a && !b ? Outcome::fails : Outcome::inconclusive;
  return v;
}

RangeVerdict judge_rmsnorm_saving(const TimeSpread& rms, const TimeSpread& layer) {
  return judge_within(1.0 - rms.best / layer.best, 1.0 - rms.median / layer.median, 0.0, 1.0);
}

Verdict judge_disturbed(const TimeSpread& a, const TimeSpread& b) {
  auto ratio = [](const TimeSpread& t) { return t.best > 0.0 ? t.median / t.best : 0.0; };
  return judge_at_least(std::max(ratio(a), ratio(b)), kDisturbed);
}

Verdict judge_slower(const TimeSpread& a, const TimeSpread& b) {
  return judge_greater(a.median, b.median, std::max(a.median - a.best, b.median - b.best));
}

Verdict judge_shift_invariant(const std::vector<ShiftScore>& rows) {
  if (rows.empty()) return {};
  double lo = rows[0].rope, hi = rows[0].rope, size = 0.0;
  for (const ShiftScore& r : rows) {
    lo = std::min(lo, r.rope);
    hi = std::max(hi, r.rope);
    size = std::max(size, std::abs(r.rope));
  }
  return judge_at_most(hi - lo, 1e-5 * std::max(1.0, size));
}

Verdict judge_repetition(double greedy_share, double sampled_share) {
  return judge_greater(greedy_share, sampled_share, 0.1);
}

Verdict judge_same_tokens(const std::vector<KvSpeedRow>& rows) {
  if (rows.empty()) return {};
  const bool all = std::all_of(rows.begin(), rows.end(), [](const KvSpeedRow& r) { return r.identical; });
  return judge_at_least(all ? 1.0 : 0.0, 1.0);
}

namespace {
Mat first_rows(const Mat& x, std::size_t n) {
  return xt::view(x, xt::range(0, std::min(n, x.shape(0))), xt::all());
}
double row_mean(const Mat& x, std::size_t r) { return double(xt::mean(xt::view(x, r, xt::all()))()); }
}  // namespace

NormStudy norm_study(const DecoderLM& m, const std::vector<int>& prompt, std::size_t rows, int repeats) {
  NormStudy s;
  // The residual stream after block 0 for the prompt: a real input to block 1's norm.
  s.x = first_rows(decoder_lm_trace(m, prompt).block0_output, 3);
  const float eps = float(m.cfg.norm_eps);
  s.eps = m.cfg.norm_eps;
  const Norm rms = rmsnorm_init(s.x.shape(1)), ln = layernorm_init(s.x.shape(1));
  Vec rstd, mean;
  rmsnorm_forward(s.rms_y, rstd, s.x, rms, eps);
  layernorm_forward(s.ln_y, mean, rstd, s.x, ln, eps);
  s.mean_x = row_mean(s.x, 0);
  s.mean_rms = row_mean(s.rms_y, 0);
  s.mean_ln = row_mean(s.ln_y, 0);
  // The failure case: row 0 moved by kNormShift, a large mean; LayerNorm removes it, RMSNorm keeps it.
  Mat shifted = first_rows(s.x, 1) + float(kNormShift), rms_s, ln_s;
  rmsnorm_forward(rms_s, rstd, shifted, rms, eps);
  layernorm_forward(ln_s, mean, rstd, shifted, ln, eps);
  s.shifted_mean_rms = row_mean(rms_s, 0);
  s.shifted_mean_ln = row_mean(ln_s, 0);
  s.shifted_ln_change = double(xt::amax(xt::abs(ln_s - first_rows(s.ln_y, 1)))());
  s.gap_rms_ln = double(xt::amax(xt::abs(first_rows(s.rms_y, 1) - first_rows(s.ln_y, 1)))());
  s.shifted_gap_rms_ln = double(xt::amax(xt::abs(rms_s - ln_s))());
  const Mat big = Rng(3).normal_mat(rows, m.cfg.d_model);
  s.rows = rows;
  s.channels = m.cfg.d_model;
  Mat y;
  std::tie(s.rms, s.layer) = time_interleaved([&] { rmsnorm_forward(y, rstd, big, rms, eps); },
                                              [&] { layernorm_forward(y, mean, rstd, big, ln, eps); }, repeats);
  s.saving = judge_rmsnorm_saving(s.rms, s.layer);
  s.disturbed = judge_disturbed(s.rms, s.layer);
  // How stable is one run's saving? The same figure from further blocks of alternated runs.
  for (int b = 0; b < kNormBlocks; ++b) {
    const auto [r, l] = time_interleaved([&] { rmsnorm_forward(y, rstd, big, rms, eps); },
                                         [&] { layernorm_forward(y, mean, rstd, big, ln, eps); }, kNormBlockRuns);
    s.block_savings.push_back(l.best > 0.0 ? 1.0 - r.best / l.best : std::numeric_limits<double>::quiet_NaN());
  }
  return s;
}

FfnCost ffn_cost(std::size_t d, std::size_t hidden, std::size_t rows, std::uint64_t seed, int repeats) {
  Rng rng(seed);
  FfnCost c;
  c.d_model = d;
  c.rows = rows;
  c.relu_hidden = 4 * d;
  c.swiglu_hidden = hidden;
  c.relu_params = 2 * d * c.relu_hidden;
  c.swiglu_params = 3 * d * hidden;
  const Linear up = linear_init(d, c.relu_hidden, rng, false), down = linear_init(c.relu_hidden, d, rng, false);
  const SwiGLU sw = swiglu_init(d, hidden, rng);
  const Mat x = rng.normal_mat(rows, d);
  Mat h, y;
  SwiGLUCacheT<float> cache;
  std::tie(c.relu, c.swiglu) = time_interleaved(
      [&] {
        linear_forward(h, x, up);  // ReLU FFN: max(0, x·W1)·W2 (no biases, as the SwiGLU here)
        activation_forward(Activation::Relu, h, h);
        linear_forward(y, h, down);
      },
      [&] { swiglu_forward(y, cache, x, sw); }, repeats);
  c.swiglu_slower = judge_slower(c.swiglu, c.relu);
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

ShiftStudy rope_shift_study(const DecoderLM& m, const std::vector<int>& prompt, std::size_t distance,
                            const std::vector<std::size_t>& starts) {
  const DecoderLMTrace tr = decoder_lm_trace(m, prompt);
  const DecoderBlock& b = m.blocks[0];
  Mat h, q, k;
  Vec rstd;
  rmsnorm_forward(h, rstd, first_rows(tr.block0_input, 2), b.attn_norm, float(m.cfg.norm_eps));
  linear_forward(q, h, b.w_q);
  linear_forward(k, h, b.w_k);
  ShiftStudy s;
  s.d_k = m.cfg.d_head();
  s.distance = distance;
  s.rope_theta = kRopeBase;  // shift_scores' tables (rope_tables' default base)
  const std::size_t j = std::min<std::size_t>(1, h.shape(0) - 1);  // the second token's key (the first's if alone)
  const Vec qv = xt::view(q, 0, xt::range(0, s.d_k)), kv = xt::view(k, j, xt::range(0, s.d_k));
  s.rows = shift_scores(qv, kv, distance, starts);
  double rmin = 1e300, rmax = -1e300, smin = 1e300, smax = -1e300;
  for (const ShiftScore& r : s.rows) {
    rmin = std::min(rmin, r.rope);
    rmax = std::max(rmax, r.rope);
    smin = std::min(smin, r.sinusoidal);
    smax = std::max(smax, r.sinusoidal);
  }
  s.rope_spread = rmax - rmin;
  s.sinusoidal_spread = smax - smin;
  s.rope_invariant = judge_shift_invariant(s.rows);
  return s;
}

std::vector<KvCacheRow> kv_cache_table(const DecoderLMConfig& cfg, std::size_t parameters) {
  std::vector<KvCacheRow> rows;
  auto add = [&](const char* model, std::size_t layers, std::size_t heads, std::size_t g, std::size_t dk,
                 std::size_t bytes, bool shipped, std::size_t context, double weights) {
    rows.push_back({model, layers, heads, g, dk, bytes, kv_cache_bytes_per_token(layers, g, dk, bytes), shipped,
                    context, weights * double(bytes)});
  };
  const std::size_t L = cfg.n_layers, H = cfg.n_heads, dk = cfg.d_head(), ctx = cfg.context;
  const double here = double(parameters);
  add("this", L, H, H, dk, 4, cfg.n_kv_heads == H, ctx, here);
  if (cfg.n_kv_heads != H && cfg.n_kv_heads != 1) add("this", L, H, cfg.n_kv_heads, dk, 4, true, ctx, here);
  add("this", L, H, 1, dk, 4, cfg.n_kv_heads == 1, ctx, here);
  // Llama 2 70B: 4096-token context (Touvron et al. 2023, Table 1); 70·10⁹: its name's nominal count
  constexpr std::size_t big_layers = 80, big_heads = 64, big_dk = 128, big_kv = 8, bf16 = 2, big_ctx = 4096;
  constexpr double big_params = 70e9;
  add("70B", big_layers, big_heads, big_heads, big_dk, bf16, false, big_ctx, big_params);
  add("70B", big_layers, big_heads, big_kv, big_dk, bf16, true, big_ctx, big_params);
  add("70B", big_layers, big_heads, 1, big_dk, bf16, false, big_ctx, big_params);
  return rows;
}

BlockParameters block_parameters(const DecoderLM& m) {
  const DecoderLMConfig& c = m.cfg;
  const std::size_t d = c.d_model, dk = c.d_head();
  BlockParameters p;
  p.embedding = c.vocab * d;
  p.attention = d * c.n_heads * dk + 2 * d * c.n_kv_heads * dk + c.n_heads * dk * d;  // W_Q, W_K, W_V, W_O
  p.ffn = 3 * d * c.d_ff;                                                             // W_gate, W_up, W_down
  p.norms = 2 * d;                                                                    // two RMSNorm γ
  p.blocks = c.n_layers;
  p.all_blocks = p.blocks * (p.attention + p.ffn + p.norms);
  p.head = d + d * c.vocab;  // final RMSNorm γ + W_out
  p.total = parameter_count(m);
  return p;
}

Verdict judge_train_like_held_out(double train_less_lag, double spread_loss, double spread_se) {
  Verdict v{train_less_lag - spread_loss, 2.0 * spread_se, 2.0 * spread_se, Outcome::inconclusive};
  if (!std::isfinite(v.measured) || !std::isfinite(v.bound)) return v;
  v.outcome = std::abs(v.measured) <= v.bound ? Outcome::holds : v.measured > 0.0 ? Outcome::fails : Outcome::partly;
  return v;
}

ValidationFigures validation_figures(const TinyLm& lm, std::size_t windows, std::size_t window_tokens) {
  ValidationFigures v;
  const std::vector<int>& text = lm.valid_tokens;
  v.window_tokens = window_tokens;
  const std::size_t fit = (text.size() - 1) / window_tokens;
  v.windows = std::min(windows, fit);
  // The window starting at token `at`, scored alone: decoder_lm_eval_loss of one window.
  auto window_loss = [&](std::size_t at) {
    const std::vector<int> w(text.begin() + std::ptrdiff_t(at), text.begin() + std::ptrdiff_t(at + window_tokens + 1));
    return decoder_lm_eval_loss(lm.model, w, 1, window_tokens);
  };
  double total = 0.0;  // summed in the order decoder_lm_eval_loss sums: the same bits as the training's figure
  for (std::size_t i = 0; i < v.windows; ++i) {
    v.window_losses.push_back(window_loss(i * window_tokens));
    total += v.window_losses.back();
  }
  v.loss = total / double(v.windows);
  // The targets those windows score: tokens 1 … windows·T, and the bytes they decode to.
  const std::vector<int> targets(text.begin() + 1, text.begin() + std::ptrdiff_t(v.windows * window_tokens + 1));
  v.tokens = targets.size();
  v.bytes = bpe_decode(lm.tokenizer, targets).size();
  v.perplexity = std::exp(v.loss);
  v.bits_per_byte = v.loss * double(v.tokens) / (double(v.bytes) * std::log(2.0));
  v.held_out = kjv_held_out_chapters();
  // As many windows again, spread evenly from the first token to the last window that fits.
  v.spread_windows = v.windows;
  std::vector<double> spread;
  const std::size_t last_start = text.size() - window_tokens - 1;
  for (std::size_t k = 0; k < v.spread_windows; ++k)
    spread.push_back(window_loss(v.spread_windows > 1 ? k * last_start / (v.spread_windows - 1) : 0));
  double mean = 0.0, ss = 0.0;
  for (double x : spread) mean += x / double(spread.size());
  for (double x : spread) ss += (x - mean) * (x - mean);
  v.spread_loss = mean;
  v.spread_se = spread.size() > 1 ? std::sqrt(ss / double(spread.size() - 1) / double(spread.size()))
                                  : std::numeric_limits<double>::quiet_NaN();
  const std::vector<LmCurvePoint>& c = lm.curve;
  v.train_last = c.empty() ? std::numeric_limits<double>::quiet_NaN() : c.back().train_loss;
  v.train_lag = c.size() > 1 ? 0.5 * std::max(0.0, c[c.size() - 2].train_loss - c.back().train_loss) : 0.0;
  v.train_like_held_out = judge_train_like_held_out(v.train_last - v.train_lag, v.spread_loss, v.spread_se);
  return v;
}

NextTokenStudy next_token_study(const DecoderLM& m, const std::vector<int>& prompt, const SamplerConfig& sc) {
  NextTokenStudy s;
  s.logits = decoder_lm_last_logits(m, prompt);
  s.raw = sampling_distribution(s.logits, {1.0f, 0, 1.0f});
  s.tempered = sampling_distribution(s.logits, {sc.temperature, 0, 1.0f});
  s.final_p = sampling_distribution(s.logits, sc);
  for (const auto& [id, p] : top_entries(s.raw, 5)) s.top.push_back(id);
  for (std::size_t i = 0; i < s.final_p.size(); ++i)
    if (s.final_p(i) > 0.0f) {
      ++s.kept;
      s.kept_mass += s.tempered(i);
    } else {
      s.raw_cut_mass += s.raw(i);
    }
  return s;
}

double repeated_span_share(const std::vector<int>& tokens, std::size_t n) {
  if (n == 0 || tokens.size() < n + 1) return 0.0;
  std::map<std::vector<int>, int> seen;
  std::size_t spans = 0, repeats = 0;
  for (std::size_t i = 0; i + n <= tokens.size(); ++i, ++spans)
    repeats += seen[std::vector<int>(tokens.begin() + std::ptrdiff_t(i), tokens.begin() + std::ptrdiff_t(i + n))]++ > 0;
  return double(repeats) / double(spans);
}

DecodingComparison compare_decoding(const DecoderLM& m, const std::vector<int>& prompt, std::size_t n_new,
                                    const SamplerConfig& sc, std::uint64_t seed) {
  DecodingComparison c;
  c.sampled = generate_tokens(m, prompt, n_new, sc, seed);
  c.greedy = generate_tokens(m, prompt, n_new, {0.0f, 0, 1.0f}, seed);
  c.raw = generate_tokens(m, prompt, n_new, {1.0f, 0, 1.0f}, seed);
  c.sampled_repeats = repeated_span_share(c.sampled);
  c.greedy_repeats = repeated_span_share(c.greedy);
  c.greedy_loops = judge_repetition(c.greedy_repeats, c.sampled_repeats);
  return c;
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
                                       std::uint64_t seed, int repeats, int cached_repeats) {
  std::vector<KvSpeedRow> rows;
  for (std::size_t n : lengths) {
    const DecoderLM mm = with_positions(m, prompt.size() + n);
    std::vector<int> a, b;
    KvSpeedRow r;
    r.tokens = n;
    // the cached runs are short, so more of them (and a warm-up) cost little and steady the best
    const TimeSpread c = time_runs([&] { a = generate_tokens(mm, prompt, n, sc, seed, CacheMode::Contiguous); },
                                   cached_repeats > 0 ? cached_repeats : repeats, /*warmup=*/cached_repeats > 0);
    const TimeSpread u = time_runs([&] { b = generate_tokens(mm, prompt, n, sc, seed, CacheMode::None); }, repeats,
                                   false);
    r.cached_seconds = c.best, r.cached_median = c.median;
    r.uncached_seconds = u.best, r.uncached_median = u.median;
    r.identical = a == b;
    rows.push_back(r);
  }
  return rows;
}

Verdict judge_prefill_faster(double prefill_seconds, double decode_seconds) {
  const double r = prefill_seconds > 0.0 ? decode_seconds / prefill_seconds : std::numeric_limits<double>::quiet_NaN();
  Verdict v = judge_greater(r, 1.0, 0.0);
  v.measured = r;
  return v;
}

void judge_kv_slopes(KvCacheStudy& s) {
  s.cached_linear = judge_greater(kKvSlopeMidpoint, s.cached_slope, 2.0 * s.cached_slope_se);
  s.uncached_quadratic = judge_greater(s.uncached_slope, kKvSlopeMidpoint, 2.0 * s.uncached_slope_se);
  if (2.0 * s.cached_slope_se > kKvSlopeTooNoisy) s.cached_linear.outcome = Outcome::too_noisy;
  if (2.0 * s.uncached_slope_se > kKvSlopeTooNoisy) s.uncached_quadratic.outcome = Outcome::too_noisy;
  s.cached_vs_flops = judge_greater(s.cached_slope, s.cached_flop_slope, 2.0 * s.cached_slope_se);
  s.uncached_vs_flops = judge_greater(s.uncached_slope, s.uncached_flop_slope, 2.0 * s.uncached_slope_se);
  if (s.times_grow.outcome == Outcome::fails)  // a disturbed table: its slopes measure the load
    s.cached_linear.outcome = s.uncached_quadratic.outcome = s.cached_vs_flops.outcome =
        s.uncached_vs_flops.outcome = Outcome::too_noisy;
}

Verdict judge_times_grow(const std::vector<KvSpeedRow>& rows) {
  Verdict v{0.0, 0.0, 0.0, Outcome::inconclusive};
  if (rows.size() < 2) return v;
  // the time ratio to the row before, against the work ratio: off by more than kKvStepOffWork either way
  const auto off_work = [](double t1, double t0, double w1, double w0) {
    if (!(w0 > 0.0 && w1 > 0.0 && t0 > 0.0)) return false;  // no FLOP count: the ordering rule alone
    const double r = (t1 / t0) / (w1 / w0);
    return r > kKvStepOffWork || r < 1.0 / kKvStepOffWork;
  };
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const KvSpeedRow &a = rows[i - 1], &b = rows[i];
    v.measured += b.cached_seconds < a.cached_seconds || b.uncached_seconds < a.uncached_seconds ||
                  off_work(b.cached_seconds, a.cached_seconds, b.cached_flops, a.cached_flops) ||
                  off_work(b.uncached_seconds, a.uncached_seconds, b.uncached_flops, a.uncached_flops);
  }
  v.outcome = v.measured == 0.0 ? Outcome::holds : Outcome::fails;
  return v;
}

DecodeStepCost decode_step_cost(const DecoderLMConfig& cfg) {
  const double d = double(cfg.d_model), hd = double(cfg.n_heads * cfg.d_head()),
               gd = double(cfg.n_kv_heads * cfg.d_head()), L = double(cfg.n_layers);
  DecodeStepCost c;
  c.fixed = L * (2.0 * d * hd + 4.0 * d * gd + 2.0 * hd * d + 6.0 * d * double(cfg.d_ff)) + 2.0 * d * double(cfg.vocab);
  c.per_position = L * 4.0 * hd;
  c.output = 2.0 * d * double(cfg.vocab);
  c.crossover = c.fixed / c.per_position;
  c.context = cfg.context;
  c.vocab = cfg.vocab;
  c.growth = c.per_position * double(cfg.context) / c.fixed;
  c.fixed_dominates = judge_at_most(c.growth, 1.0);
  return c;
}

double generation_flops(const DecodeStepCost& c, std::size_t prompt, std::size_t n_new, bool cached) {
  // one feed of L rows after p0 cached ones; row i attends to p0 + i + 1 keys, itself included
  const auto feed = [&](double p0, double L) {
    return L * (c.fixed - c.output) + c.output + c.per_position * (L * p0 + L * (L + 1.0) / 2.0);
  };
  if (n_new == 0) return 0.0;
  double total = 0.0;
  if (cached) {
    total = feed(0.0, double(prompt));
    for (std::size_t i = 1; i < n_new; ++i) total += feed(double(prompt + i - 1), 1.0);
  } else {
    for (std::size_t i = 0; i < n_new; ++i) total += feed(0.0, double(prompt + i));
  }
  return total;
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
  p.repeats = repeats;
  p.prefill_faster = judge_prefill_faster(p.prefill_seconds, p.decode_seconds);
  return p;
}

KvCacheStudy kv_cache_study(const TinyLm& lm, const std::vector<int>& prompt, const SamplerConfig& sc,
                            std::uint64_t seed, bool bench) {
  KvCacheStudy s;
  // the default sweep: seven short lengths, cheap even without the cache, so that the fit can tell a
  // slope of 1 from one of 2
  const std::vector<std::size_t> lengths = bench ? std::vector<std::size_t>{16, 32, 64, 128, 256, 512}
                                                 : std::vector<std::size_t>{8, 12, 16, 24, 32, 48, 64};
  s.repeats = bench ? 2 : 3;  // best of: the least disturbed run on a shared machine
  s.cached_repeats = bench ? 3 : 15;
  s.rows = kv_speed_sweep(lm.model, prompt, lengths, sc, seed, s.repeats, s.cached_repeats);
  s.cost = decode_step_cost(lm.model.cfg);
  std::vector<double> n, tc, tu, fc, fu;
  for (KvSpeedRow& r : s.rows) {
    r.cached_flops = generation_flops(s.cost, prompt.size(), r.tokens, true);
    r.uncached_flops = generation_flops(s.cost, prompt.size(), r.tokens, false);
    n.push_back(double(r.tokens));
    tc.push_back(r.cached_seconds);
    tu.push_back(r.uncached_seconds);
    fc.push_back(r.cached_flops);
    fu.push_back(r.uncached_flops);
  }
  s.cached_slope = loglog_slope(n, tc);
  s.uncached_slope = loglog_slope(n, tu);
  s.cached_flop_slope = loglog_slope(n, fc);
  s.uncached_flop_slope = loglog_slope(n, fu);
  s.cached_slope_se = loglog_fit(n, tc).standard_error;
  s.uncached_slope_se = loglog_fit(n, tu).standard_error;
  s.times_grow = judge_times_grow(s.rows);
  judge_kv_slopes(s);
  s.speedup = s.rows.back().uncached_seconds / s.rows.back().cached_seconds;
  s.speedup_median = s.rows.back().uncached_median / s.rows.back().cached_median;
  s.past_context = prompt.size() + lengths.back() > lm.model.cfg.context;
  s.same_tokens = judge_same_tokens(s.rows);
  const std::size_t np = std::min<std::size_t>(128, lm.valid_tokens.size());
  s.prefill = prefill_vs_decode(lm.model, {lm.valid_tokens.begin(), lm.valid_tokens.begin() + std::ptrdiff_t(np)});
  return s;
}

PagedStudy paged_study(const DecoderLM& m, const std::vector<std::vector<int>>& prompts,
                       const std::vector<std::size_t>& n_new, const SamplerConfig& sc, std::uint64_t seed,
                       std::size_t block_size) {
  PagedStudy s;
  s.block_size = block_size;
  s.sequences = prompts.size();
  s.max_len = m.cfg.context;
  s.n_new = n_new;
  const std::size_t width = m.cfg.n_kv_heads * m.cfg.d_head(), layers = m.blocks.size();
  const std::size_t pool_blocks = prompts.size() * ((m.cfg.context + block_size - 1) / block_size);
  PagedKVCache cache = paged_kv_make(layers, width, pool_blocks, block_size);
  s.generated = generate_batch_paged(m, cache, prompts, n_new, sc, seed);
  s.identical = true;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    const std::size_t len = cache.lengths[i], blocks = (len + block_size - 1) / block_size;
    s.prompt_lengths.push_back(prompts[i].size());
    s.lengths.push_back(len);
    s.blocks.push_back(blocks);
    s.unused.push_back(blocks * block_size - len);
    s.unused_total += s.unused.back();
    s.tokens_stored += len;
    if (generate_tokens(m, prompts[i], n_new[i], sc, seed + i) != s.generated[i]) s.identical = false;
  }
  s.blocks_used = cache.blocks_in_use();
  s.paged_bytes = paged_kv_bytes_in_use(cache);
  s.contiguous_bytes = contiguous_kv_bytes(layers, width, prompts.size(), m.cfg.context);
  s.exact_bytes = 2 * layers * s.tokens_stored * width * 4;
  s.mean_length = s.sequences ? double(s.tokens_stored) / double(s.sequences) : 0.0;
  s.ratio = s.paged_bytes ? double(s.contiguous_bytes) / double(s.paged_bytes) : 0.0;
  const std::size_t full_blocks = (m.cfg.context + block_size - 1) / block_size;  // per sequence at the context
  const double full_paged = double(prompts.size() * full_blocks * block_size * 2 * layers * width * 4);
  s.full_ratio = full_paged > 0 ? double(s.contiguous_bytes) / full_paged : 0.0;
  return s;
}

PagedStudy paged_study(const TinyLm& lm, const SamplerConfig& sc, std::uint64_t seed) {
  const std::vector<std::size_t> prompt_len{3, 9, 17, 30, 45, 60}, n_new{10, 40, 25, 70, 5, 50};
  const std::size_t apart = 500;  // prompts from different places in the held-out text
  std::vector<std::vector<int>> prompts;
  for (std::size_t i = 0; i < prompt_len.size(); ++i) {
    const auto from = lm.valid_tokens.begin() + std::ptrdiff_t(i * apart);
    prompts.emplace_back(from, from + std::ptrdiff_t(prompt_len[i]));
  }
  return paged_study(lm.model, prompts, n_new, sc, seed, 16);
}

}  // namespace attn
