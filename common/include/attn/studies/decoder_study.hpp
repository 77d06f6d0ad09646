// The measurements chapter 09 reports about the modern decoder block, its language model and its
// caches (numerics only; attn/present/decoder_report.hpp prints them). One function per step:
//   norm_study          RMSNorm vs LayerNorm: what each does to a real row, and their cost
//   ffn_cost            SwiGLU at 2/3 width vs a ReLU FFN: parameters, multiply-adds and time
//   rope_shift_study    a q·k score under a shift of both positions, RoPE vs sinusoidal
//   kv_cache_table      cache bytes per token for MHA, GQA and MQA, this model and a 70B one
//   block_parameters    the parameter count of each part of the block
//   validation_figures  loss, perplexity and bits per byte on the held-out text
//   next_token_study    the next-token distribution before and after temperature, top-k, top-p
//   compare_decoding    greedy decoding beside sampling, and how much each repeats itself
//   kv_cache_study      generation with and without the KV cache, and prefill vs decode
//   paged_study         a batch of mixed-length sequences through a paged cache vs contiguous ones
// Times are best and median of several runs (attn/studies/timing.hpp) on whatever else the
// machine runs; a verdict that rests on a time says "within noise" when best and median disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/models/decoder_lm_generate.hpp"
#include "attn/studies/timing.hpp"
#include "attn/studies/tiny_lm.hpp"
#include "attn/studies/verdict.hpp"

namespace attn {

// ---- a figure inside a paper's range ----------------------------------------------------------
// The same figure computed from the best runs and from the median runs, against the range [lo, hi]
// a paper reports: both inside → holds; both outside → fails; one of each → inconclusive (the
// machine's noise decides); a non-finite figure → inconclusive.
struct RangeVerdict {
  double from_best = 0.0, from_median = 0.0, lo = 0.0, hi = 0.0;
  Outcome outcome = Outcome::inconclusive;
};
RangeVerdict judge_within(double from_best, double from_median, double lo, double hi);

// ---- step 2: RMSNorm vs LayerNorm -------------------------------------------------------------
// Zhang & Sennrich 2019 (abstract): RMSNorm cut whole models' running time by 7%–64%. That range
// is for whole models; one norm timed alone is not comparable to it, so it is only quoted.
constexpr double kRmsNormSavingLo = 0.07, kRmsNormSavingHi = 0.64;
// Is RMSNorm faster at all? The saving 1 − t_rms / t_ln from the best and from the median runs,
// judged in [0, 1]: both positive holds, both negative fails, one of each is within noise.
RangeVerdict judge_rmsnorm_saving(const TimeSpread& rms, const TimeSpread& layer);
struct NormStudy {
  Mat x;                 // (≤ 3, d_model): the residual stream after block 0 for the prompt
  Mat rms_y, ln_y;       // RMSNorm(x) with γ = 1; LayerNorm(x) with γ = 1, β = 0
  double mean_x = 0.0, mean_rms = 0.0, mean_ln = 0.0;  // row 0's mean before and after each
  double eps = 0.0;      // the ε both norms use (the model's norm_eps)
  // row 0 + kNormShift (a large mean): each output's mean, how far LayerNorm's output moved (it
  // should not: it removes the mean), and the largest |RMSNorm − LayerNorm| before and after the shift
  double shifted_mean_rms = 0.0, shifted_mean_ln = 0.0, shifted_ln_change = 0.0;
  double gap_rms_ln = 0.0, shifted_gap_rms_ln = 0.0;
  std::vector<double> block_savings;  // 1 − t_rms / t_ln (best runs) of kNormBlocks more blocks
  std::size_t rows = 0, channels = 0;  // the timed input (random normal)
  TimeSpread rms, layer;               // forward times, run alternately
  RangeVerdict saving;                 // 1 − t_rms / t_ln against the paper's range
  Verdict disturbed;                   // judge_disturbed(rms, layer)
};
// A median more than kDisturbed × its best run says the machine's load disturbed the runs: the
// larger median / best of a and b ≥ kDisturbed holds (disturbed), below fails.
constexpr double kDisturbed = 1.5;
constexpr double kNormShift = 3.0;  // the failure case's shift: a mean far from row 0's own (near 0)
// After the main timing, kNormBlocks blocks of kNormBlockRuns alternated runs each: their savings
// show how far one run's figure moves.
constexpr int kNormBlocks = 3, kNormBlockRuns = 5;
Verdict judge_disturbed(const TimeSpread& a, const TimeSpread& b);
NormStudy norm_study(const DecoderLM& m, const std::vector<int>& prompt, std::size_t rows = 4096,
                     int repeats = 15);

// ---- step 3: SwiGLU vs ReLU -------------------------------------------------------------------
struct FfnCost {
  std::size_t d_model = 0, relu_hidden = 0, swiglu_hidden = 0, rows = 0;
  std::size_t relu_params = 0, swiglu_params = 0;   // 2·d·4d and 3·d·d_ff
  TimeSpread relu, swiglu;                          // forward on the same rows, run alternately
  Verdict swiglu_slower;                            // judge_slower(swiglu, relu)
};
// Is a slower than b? median − median beyond the larger gap between a median and its best run
// (holds: slower; fails: faster; inconclusive: within that spread).
Verdict judge_slower(const TimeSpread& a, const TimeSpread& b);
FfnCost ffn_cost(std::size_t d_model, std::size_t swiglu_hidden, std::size_t rows, std::uint64_t seed,
                 int repeats = 7);

// ---- step 4: RoPE vs sinusoidal under a shift --------------------------------------------------
// Score of q at position m and k at position m + distance, for several m: with RoPE it stays put;
// with the sinusoidal table added to q and k themselves (a simplification: a sinusoidal model adds
// it to x, before W_Q and W_K) it moves.
struct ShiftScore {
  std::size_t m = 0;
  double rope = 0.0, sinusoidal = 0.0;
};
std::vector<ShiftScore> shift_scores(const Vec& q, const Vec& k, std::size_t distance,
                                     const std::vector<std::size_t>& starts);
struct ShiftStudy {
  std::size_t d_k = 0, distance = 0;
  double rope_theta = 0.0;  // the base of RoPE's frequencies θ_i = rope_theta^(−2i/d_k)
  std::vector<ShiftScore> rows;
  double rope_spread = 0.0, sinusoidal_spread = 0.0;  // max − min over the placements
  Verdict rope_invariant;  // judge_shift_invariant(rows)
};
// RoPE's score does not move with the shift: its spread over the rows ≤ 1e-5 of its size (float
// rounding), measured = the spread.
Verdict judge_shift_invariant(const std::vector<ShiftScore>& rows);
// q, k: layer 0's head 0 projections of the first two prompt tokens (before RoPE).
ShiftStudy rope_shift_study(const DecoderLM& m, const std::vector<int>& prompt, std::size_t distance = 3,
                            const std::vector<std::size_t>& starts = {0, 10, 50, 100, 200});

// ---- step 5: GQA vs MHA, the cache -------------------------------------------------------------
struct KvCacheRow {
  std::string model;        // "this" or "70B"
  std::size_t layers = 0, query_heads = 0, kv_heads = 0, d_k = 0, bytes_per_number = 0;
  std::size_t bytes_per_token = 0;  // 2·layers·kv_heads·d_k·bytes
  bool shipped = false;     // the configuration this model uses
  std::size_t context = 0;  // the longest sequence the model is built for: one sequence's cache at most
  double weight_bytes = 0.0;  // the model's weights at bytes_per_number each (0: not given)
};
// This model with H, its own G and 1 K/V heads in float32, at its context, its weights `parameters`
// floats; a 70B model shaped like Llama 2 70B (80 layers, 64 heads of 128, 8 K/V heads: its released
// configuration; Touvron et al. 2023 give it GQA and a context of 4096, Table 1) with 64, 8 and 1 K/V
// heads in bf16, its weights the nominal 70·10⁹ parameters of its name.
std::vector<KvCacheRow> kv_cache_table(const DecoderLMConfig& cfg, std::size_t parameters = 0);

// ---- step 6: the block's parameters ------------------------------------------------------------
struct BlockParameters {
  std::size_t embedding = 0, attention = 0, ffn = 0, norms = 0;  // attention, ffn, norms: per block
  std::size_t blocks = 0, all_blocks = 0, head = 0, total = 0;   // head: final RMSNorm + output
};
BlockParameters block_parameters(const DecoderLM& m);

// ---- step 7: the held-out text -----------------------------------------------------------------
// The loss chapter 09 reports: the first 32 windows of 256 held-out tokens.
constexpr std::size_t kValidWindows = 32, kValidWindowTokens = 256;
struct ValidationFigures {
  std::size_t windows = 0, window_tokens = 0, tokens = 0, bytes = 0;  // the scored targets
  double loss = 0.0;           // nats per token: the mean of window_losses
  double perplexity = 0.0;     // e^loss
  double bits_per_byte = 0.0;  // loss · tokens / (bytes · ln 2)
  std::vector<double> window_losses;  // each of the first `windows` windows' mean loss
  std::vector<std::string> held_out;  // the held-out chapters' names (kjv_held_out_chapters)
  // Why the curve's training loss sits above its validation loss, from this run: the same model
  // on as many windows spread evenly over the whole held-out text (spread_loss ± spread_se, one
  // standard error over its windows), against the training loss of the curve's last row less the
  // averaging lag (half the fall of the training loss over that row: the row's mean is of weights
  // that were, on average, half a row older).
  std::size_t spread_windows = 0;
  double spread_loss = 0.0, spread_se = 0.0;
  double train_last = 0.0, train_lag = 0.0;  // the curve's last training loss; the lag estimate
  Verdict train_like_held_out;  // judge_train_like_held_out(train_last − train_lag, spread_loss, spread_se)
};
// The training loss, less its lag, is what the model scores on held-out text at large: within two
// standard errors of spread_loss holds (measured = the difference, bound = 2·se); above fails;
// below is partly (the model does better on text it trained on); NaN inconclusive.
Verdict judge_train_like_held_out(double train_less_lag, double spread_loss, double spread_se);
ValidationFigures validation_figures(const TinyLm& lm, std::size_t windows = kValidWindows,
                                     std::size_t window_tokens = kValidWindowTokens);

// ---- step 8: sampling --------------------------------------------------------------------------
struct NextTokenStudy {
  Vec logits;           // (V,) after the prompt
  Vec raw, tempered;    // softmax(z), softmax(z/τ)
  Vec final_p;          // what a token is drawn from: tempered, cut by top-k / top-p, renormalised
  std::vector<int> top; // the 5 most probable ids at τ = 1
  std::size_t kept = 0; // tokens with final_p > 0
  double kept_mass = 0.0;  // their share of the tempered mass
  double raw_cut_mass = 0.0;  // the mass at τ = 1 of the tokens the cut leaves out (the tail it removes)
};
NextTokenStudy next_token_study(const DecoderLM& m, const std::vector<int>& prompt, const SamplerConfig& sc);

// Share of the n-token spans of `tokens` that already occurred earlier in it (0: no span repeats;
// near 1: a loop). 0 when tokens has fewer than n + 1 spans.
double repeated_span_share(const std::vector<int>& tokens, std::size_t n = 4);
struct DecodingComparison {
  std::vector<int> greedy, sampled;  // the new tokens only
  std::vector<int> raw;  // τ = 1, no top-k or top-p, the same seed: drawn from the whole distribution
  double greedy_repeats = 0.0, sampled_repeats = 0.0;  // repeated_span_share of each
  Verdict greedy_loops;  // judge_repetition(greedy_repeats, sampled_repeats)
};
// Greedy text repeats itself more than sampled text, by more than 0.1 of its spans (Holtzman et
// al. 2020 find greedy decoding degenerating into repetition); within 0.1: inconclusive.
Verdict judge_repetition(double greedy_share, double sampled_share);
DecodingComparison compare_decoding(const DecoderLM& m, const std::vector<int>& prompt, std::size_t n_new,
                                    const SamplerConfig& sc, std::uint64_t seed);

// ---- step 9: the KV cache ----------------------------------------------------------------------
struct KvSpeedRow {
  std::size_t tokens = 0;
  double cached_seconds = 0.0, uncached_seconds = 0.0;  // best runs
  double cached_median = 0.0, uncached_median = 0.0;    // median runs
  bool identical = false;  // the two produced the same tokens
  double cached_flops = 0.0, uncached_flops = 0.0;  // the FLOP count's work (generation_flops); 0: unknown
};
// Generates n tokens after the prompt for each n, with and without the cache (`repeats` runs
// without it, `cached_repeats` with it, after one untimed run; 0: `repeats`). The model's
// RoPE tables are extended when prompt + n exceeds its context (timing only).
std::vector<KvSpeedRow> kv_speed_sweep(const DecoderLM& m, const std::vector<int>& prompt,
                                       const std::vector<std::size_t>& lengths, const SamplerConfig& sc,
                                       std::uint64_t seed, int repeats = 2, int cached_repeats = 0);

struct PrefillDecode {
  std::size_t tokens = 0;
  double prefill_seconds = 0.0;  // all tokens in one feed
  double decode_seconds = 0.0;   // the same tokens one feed each
  double max_logit_diff = 0.0;   // between the two final logits
  int repeats = 0;               // best of
  Verdict prefill_faster;        // judge_prefill_faster(prefill_seconds, decode_seconds)
};
// Prefill is faster per token than decoding one token at a time: decode / prefill > 1 holds, < 1
// fails (the machine's load, not the method), NaN inconclusive. measured = decode / prefill.
Verdict judge_prefill_faster(double prefill_seconds, double decode_seconds);
PrefillDecode prefill_vs_decode(const DecoderLM& m, const std::vector<int>& tokens, int repeats = 3);

// The FLOPs of one cached decoding step at position t (t keys already cached), per the model's
// shapes: fixed = layers·(2·d·H·d_k + 4·d·G·d_k + 2·H·d_k·d + 6·d·d_ff) + 2·d·V (projections,
// SwiGLU, output layer), which do not depend on t, plus per_position·t with per_position =
// layers·4·H·d_k (the scores q·k over t keys and the weighted sum of t values).
struct DecodeStepCost {
  double fixed = 0.0, per_position = 0.0;
  double output = 0.0;         // 2·d·V of `fixed`: the output layer, computed for the last row of a feed only
  double crossover = 0.0;      // fixed / per_position: the t at which the t term equals the rest
  double growth = 0.0;         // per_position·context / fixed: the t term's share at the full context
  std::size_t context = 0, vocab = 0;  // the model's context and vocabulary (V in the output layer's 2·d·V)
  Verdict fixed_dominates;     // judge_at_most(growth, 1): within the context the t term stays smaller
};
DecodeStepCost decode_step_cost(const DecoderLMConfig& cfg);
// The FLOPs of generating n_new tokens after a prompt of `prompt` tokens, by that count: a feed of L
// rows after p0 cached ones costs L·(fixed − output) + output + per_position·Σ (p0 + i + 1). With the
// cache: the prompt in one feed, then n_new − 1 one-row feeds; without it: n_new feeds of the whole
// sequence so far (generate_tokens with CacheMode::None).
double generation_flops(const DecodeStepCost& c, std::size_t prompt, std::size_t n_new, bool cached);

// Linear or quadratic? The slope against the midpoint 1.5 of the two exponents: the cached slope
// plus its noise (2 standard errors) below 1.5 holds (nearer 1 than 2 across its whole ± range),
// minus its noise above 1.5 fails, a ± range across 1.5 is inconclusive; the uncached slope the
// other way round (judge_greater against the midpoint).
constexpr double kKvSlopeMidpoint = 1.5;
// A slope whose ± (2 standard errors) is wider than kKvSlopeTooNoisy, the distance from either
// exponent to the midpoint, cannot tell linear from quadratic: not judged (Outcome::too_noisy).
constexpr double kKvSlopeTooNoisy = 0.5;
// A step down the sweep whose time ratio is more than kKvStepOffWork × off the FLOP count's work
// ratio, either way, is the machine's load (a time that triples for 1.33× the tokens, or grows 1.3×
// for 3.5× the work): judge_times_grow counts it as disturbed.
constexpr double kKvStepOffWork = 1.5;
struct KvCacheStudy {
  int repeats = 0, cached_repeats = 0;  // best of: without the cache, with it
  std::vector<KvSpeedRow> rows;
  double cached_slope = 0.0, uncached_slope = 0.0;  // log-log slope of time against tokens
  double cached_slope_se = 0.0, uncached_slope_se = 0.0;  // their standard errors (loglog_fit)
  Verdict cached_linear, uncached_quadratic;  // judge_kv_slopes
  double cached_flop_slope = 0.0, uncached_flop_slope = 0.0;  // the same slopes of the rows' FLOP counts
  Verdict cached_vs_flops, uncached_vs_flops;  // judge_kv_slopes: measured slope against the FLOP count's
  double speedup = 0.0;                             // uncached / cached at the longest length, best runs
  double speedup_median = 0.0;                      // the same from the median runs
  DecodeStepCost cost;                              // decode_step_cost of the model
  bool past_context = false;                        // the sweep ran past the trained positions
  Verdict same_tokens;   // judge_same_tokens(rows)
  Verdict times_grow;    // judge_times_grow(rows): no longer generation timed faster than a shorter one
  PrefillDecode prefill; // the first 128 held-out tokens
};
// The two slopes against kKvSlopeMidpoint, noise = 2 standard errors; fills s.cached_linear and
// s.uncached_quadratic (too_noisy when 2 standard errors exceed kKvSlopeTooNoisy, and both too_noisy
// when s.times_grow fails: a disturbed table's slopes measure the load). Also fills
// s.cached_vs_flops and s.uncached_vs_flops = judge_greater(slope, FLOP slope, 2 standard errors):
// holds = steeper than the FLOP count (time the count leaves out), inconclusive = consistent with
// it, fails = shallower; too_noisy when the table is disturbed.
void judge_kv_slopes(KvCacheStudy& s);
// More tokens cannot take less work: every row's best time, with the cache and without, at least
// the row before's, and (where the rows carry FLOP counts) each time ratio to the row before
// within kKvStepOffWork × of the work ratio, holds; measured = how many rows broke either rule
// (either column) — such a row is the machine's load, and the table's speed-ups and slopes with it.
// Fewer than two rows: inconclusive.
Verdict judge_times_grow(const std::vector<KvSpeedRow>& rows);
// Holds when every row gave the same tokens with and without the cache; no rows: inconclusive.
Verdict judge_same_tokens(const std::vector<KvSpeedRow>& rows);
// lengths 8, 12, 16, 24, 32, 48, 64 (3 runs without the cache, 15 with it), or 16 to 512 with bench
// (2 and 3).
KvCacheStudy kv_cache_study(const TinyLm& lm, const std::vector<int>& prompt, const SamplerConfig& sc,
                            std::uint64_t seed, bool bench);

struct PagedStudy {
  std::size_t block_size = 0, sequences = 0, max_len = 0, tokens_stored = 0;
  std::size_t blocks_used = 0, paged_bytes = 0, contiguous_bytes = 0, exact_bytes = 0;
  bool identical = false;  // every sequence's tokens equal generate_tokens with the contiguous cache
  std::vector<std::size_t> prompt_lengths, n_new;
  std::vector<std::size_t> lengths;  // K/V rows stored per sequence (prompt + new − 1)
  std::vector<std::size_t> blocks;   // blocks per sequence, ⌈length / block_size⌉
  std::vector<std::size_t> unused;   // slots left empty in each sequence's last block
  std::size_t unused_total = 0;
  double mean_length = 0.0;  // tokens_stored / sequences: what the ratio below rests on
  // contiguous / paged bytes for these sequences, and for as many that each filled the context
  double ratio = 0.0, full_ratio = 0.0;
  std::vector<std::vector<int>> generated;
};
PagedStudy paged_study(const DecoderLM& m, const std::vector<std::vector<int>>& prompts,
                       const std::vector<std::size_t>& n_new, const SamplerConfig& sc, std::uint64_t seed,
                       std::size_t block_size = 16);
// Six prompts of mixed lengths from the held-out text (3 … 60 tokens, 500 tokens apart) with
// mixed numbers of new tokens, through blocks of 16.
PagedStudy paged_study(const TinyLm& lm, const SamplerConfig& sc, std::uint64_t seed);

}  // namespace attn
