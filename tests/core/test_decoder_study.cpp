// Chapter 09's studies (attn/studies/decoder_study.hpp) and the timing they rest on
// (attn/studies/timing.hpp). Map:
//   timing       time_runs: best ≤ median, runs counted; time_interleaved times both alike
//   verdicts     every judge_* driven both ways on made-up measurements (a verdict that rests on
//                a time is tested on spreads, never on this machine's clock)
//   studies      a small random decoder: the norms' rows, the RoPE shift, the cache table and
//                parameter count recomputed by hand, repeated spans, greedy vs sampled decoding,
//                the KV-cache sweep's tokens and the paged cache's bookkeeping
#include <doctest/doctest.h>

#include <cmath>

#include "attn/attention/gqa.hpp"
#include "attn/present/decoder_report.hpp"
#include "attn/studies/decoder_study.hpp"
#include "small_decoder.hpp"

using namespace attn;

namespace {
TimeSpread spread(double best, double median) { return {best, median, 7}; }
}  // namespace

TEST_CASE("time_runs and time_interleaved: best ≤ median, every run counted, both functions run") {
  int calls = 0;
  const TimeSpread t = time_runs([&] { ++calls; }, 5, true);
  CHECK(calls == 6);  // one warm-up, five timed
  CHECK(t.runs == 5);
  CHECK(t.best <= t.median);
  CHECK(best_seconds([] {}, 3) <= 1.0);
  int a = 0, b = 0;
  const auto [ta, tb] = time_interleaved([&] { ++a; }, [&] { ++b; }, 4);
  CHECK(a == 5);
  CHECK(b == 5);
  CHECK(ta.runs == 4);
  CHECK(tb.best <= tb.median);
}

TEST_CASE("judge_within: both estimates inside holds, both outside fails, one each is within noise") {
  CHECK(judge_within(0.2, 0.3, 0.07, 0.64).outcome == Outcome::holds);
  CHECK(judge_within(0.8, 0.01, 0.07, 0.64).outcome == Outcome::fails);
  CHECK(judge_within(0.2, 0.7, 0.07, 0.64).outcome == Outcome::inconclusive);
  CHECK(judge_within(NAN, 0.2, 0.07, 0.64).outcome == Outcome::inconclusive);
  // Is RMSNorm faster? A saving of 25% or 2% both ways holds; −5% both ways fails; 25% vs −5% is noise.
  CHECK(judge_rmsnorm_saving(spread(0.75, 0.75), spread(1.0, 1.0)).outcome == Outcome::holds);
  CHECK(judge_rmsnorm_saving(spread(0.98, 0.98), spread(1.0, 1.0)).outcome == Outcome::holds);
  CHECK(judge_rmsnorm_saving(spread(1.05, 1.05), spread(1.0, 1.0)).outcome == Outcome::fails);
  const RangeVerdict v = judge_rmsnorm_saving(spread(0.75, 1.05), spread(1.0, 1.0));
  CHECK(v.outcome == Outcome::inconclusive);
  CHECK(v.from_best == doctest::Approx(0.25));
  CHECK(v.from_median == doctest::Approx(-0.05));
}

TEST_CASE("judge_disturbed: a median far above its best run, either timing") {
  CHECK(judge_disturbed(spread(1.0, 35.0), spread(1.0, 1.1)).holds());
  CHECK(judge_disturbed(spread(1.0, 1.1), spread(2.0, 4.0)).holds());
  CHECK(judge_disturbed(spread(1.0, 1.2), spread(1.0, 1.05)).outcome == Outcome::fails);
}

TEST_CASE("judge_slower: beyond the runs' spread either way, or within it") {
  CHECK(judge_slower(spread(17.0, 17.2), spread(10.0, 10.3)).outcome == Outcome::holds);
  CHECK(judge_slower(spread(10.0, 10.3), spread(17.0, 17.2)).outcome == Outcome::fails);
  CHECK(judge_slower(spread(10.0, 12.0), spread(9.0, 11.5)).outcome == Outcome::inconclusive);  // 0.5 < 2.5
}

TEST_CASE("judge_kv_slopes: each slope's ± range against the midpoint 1.5, both ways and across it") {
  KvCacheStudy s;
  s.cached_slope = 1.1, s.cached_slope_se = 0.1;       // 1.1 ± 0.2: wholly below 1.5, nearer linear
  s.uncached_slope = 2.01, s.uncached_slope_se = 0.1;  // 2.01 ± 0.2: wholly above 1.5, nearer quadratic
  judge_kv_slopes(s);
  CHECK(s.cached_linear.holds());
  CHECK(s.uncached_quadratic.holds());
  s.cached_slope = 2.0;  // a cached run that grew quadratically
  s.uncached_slope = 1.0, s.uncached_slope_se = 0.05;
  judge_kv_slopes(s);
  CHECK(s.cached_linear.outcome == Outcome::fails);
  CHECK(s.uncached_quadratic.outcome == Outcome::fails);
  s.cached_slope = 1.59, s.cached_slope_se = 0.209;  // 1.59 ± 0.418: across 1.5, either exponent
  s.uncached_slope = 1.6, s.uncached_slope_se = 0.2;
  judge_kv_slopes(s);
  CHECK(s.cached_linear.outcome == Outcome::inconclusive);
  CHECK(s.uncached_quadratic.outcome == Outcome::inconclusive);
  s.uncached_slope = -0.97, s.uncached_slope_se = 0.785;  // −0.97 ± 1.57: wholly below 1.5, but far too wide
  judge_kv_slopes(s);
  CHECK(s.uncached_quadratic.outcome == Outcome::too_noisy);
  s.uncached_slope = 2.09, s.uncached_slope_se = 0.9;
  judge_kv_slopes(s);
  CHECK(s.uncached_quadratic.outcome == Outcome::too_noisy);
}

TEST_CASE("judge_kv_slopes: a disturbed table (times_grow fails) judges neither slope; an undisturbed one does") {
  KvCacheStudy s;
  s.cached_slope = 1.1, s.cached_slope_se = 0.1;
  s.uncached_slope = 2.01, s.uncached_slope_se = 0.1;
  s.times_grow.outcome = Outcome::holds;
  judge_kv_slopes(s);
  CHECK(s.cached_linear.holds());
  CHECK(s.uncached_quadratic.holds());
  s.times_grow.outcome = Outcome::fails;  // a longer generation timed faster than a shorter one
  judge_kv_slopes(s);
  CHECK(s.cached_linear.outcome == Outcome::too_noisy);
  CHECK(s.uncached_quadratic.outcome == Outcome::too_noisy);
}

TEST_CASE("judge_times_grow: a longer generation timed faster than a shorter one is a disturbed row") {
  std::vector<KvSpeedRow> rows(3);
  for (std::size_t i = 0; i < 3; ++i) {
    rows[i].tokens = 8 * (i + 1);
    rows[i].cached_seconds = 0.01 * double(i + 1);
    rows[i].uncached_seconds = 0.1 * double(i + 1) * double(i + 1);
  }
  CHECK(judge_times_grow(rows).holds());
  rows[1].uncached_seconds = 5.4;  // 16 tokens without the cache slower than 24
  CHECK(judge_times_grow(rows).outcome == Outcome::fails);
  CHECK(judge_times_grow(rows).measured == 1.0);
  rows[2].cached_seconds = 0.001;
  CHECK(judge_times_grow(rows).measured == 1.0);  // one row, either column
  CHECK(judge_times_grow({rows[0]}).outcome == Outcome::inconclusive);
}

TEST_CASE("judge_times_grow: a step whose time ratio is more than 1.5× off its FLOP ratio is disturbed") {
  std::vector<KvSpeedRow> rows(3);
  for (std::size_t i = 0; i < 3; ++i) {
    rows[i].tokens = 8 * (i + 1);
    rows[i].cached_flops = double(i + 1), rows[i].uncached_flops = double((i + 1) * (i + 1));
    rows[i].cached_seconds = 0.01 * double(i + 1);
    rows[i].uncached_seconds = 0.1 * double(i + 1) * double(i + 1);
  }
  CHECK(judge_times_grow(rows).holds());
  rows[2].cached_seconds = 0.02 * 1.4 * 1.5;  // 1.4 × the 1.5× work ratio: within the band
  CHECK(judge_times_grow(rows).holds());
  rows[2].cached_seconds = 0.02 * 1.6 * 1.5;  // the time tripled-ish for 1.5× the work
  CHECK(judge_times_grow(rows).outcome == Outcome::fails);
  CHECK(judge_times_grow(rows).measured == 1.0);
  rows[2].cached_seconds = 0.03;
  rows[2].uncached_seconds = 0.4 * 1.3;  // grew 1.3× for 2.25× the work
  CHECK(judge_times_grow(rows).outcome == Outcome::fails);
  rows[2].uncached_seconds = 0.4 * 2.25 / 1.4;
  CHECK(judge_times_grow(rows).holds());
}

TEST_CASE("generation_flops: the feeds' FLOPs by hand; judge_kv_slopes against the FLOP count's slopes") {
  DecodeStepCost c;
  c.fixed = 100.0, c.output = 20.0, c.per_position = 2.0;
  // cached, prompt 3, 2 new: feed(0, 3) = 3·80 + 20 + 2·6 = 272; feed(3, 1) = 80 + 20 + 2·4 = 108
  CHECK(generation_flops(c, 3, 2, true) == doctest::Approx(380.0));
  // uncached: feed(0, 3) + feed(0, 4) = 272 + (4·80 + 20 + 2·10 = 360)
  CHECK(generation_flops(c, 3, 2, false) == doctest::Approx(632.0));
  CHECK(generation_flops(c, 3, 0, true) == 0.0);
  KvCacheStudy s;
  s.times_grow.outcome = Outcome::holds;
  s.cached_flop_slope = 0.95, s.uncached_flop_slope = 1.8;
  s.cached_slope = 1.4, s.cached_slope_se = 0.1;      // 1.4 ± 0.2: steeper than 0.95
  s.uncached_slope = 1.5, s.uncached_slope_se = 0.1;  // 1.5 ± 0.2: shallower than 1.8
  judge_kv_slopes(s);
  CHECK(s.cached_vs_flops.outcome == Outcome::holds);
  CHECK(s.uncached_vs_flops.outcome == Outcome::fails);
  s.cached_slope = 1.0, s.uncached_slope = 1.75;  // within 2 standard errors of both
  judge_kv_slopes(s);
  CHECK(s.cached_vs_flops.outcome == Outcome::inconclusive);
  CHECK(s.uncached_vs_flops.outcome == Outcome::inconclusive);
  s.times_grow.outcome = Outcome::fails;
  judge_kv_slopes(s);
  CHECK(s.cached_vs_flops.outcome == Outcome::too_noisy);
  CHECK(s.uncached_vs_flops.outcome == Outcome::too_noisy);
}

TEST_CASE("judge_train_like_held_out: within two standard errors holds, above fails, below partly") {
  CHECK(judge_train_like_held_out(2.267, 2.270, 0.02).holds());
  CHECK(judge_train_like_held_out(2.267, 2.10, 0.02).outcome == Outcome::fails);    // training scores worse
  CHECK(judge_train_like_held_out(2.267, 2.40, 0.02).outcome == Outcome::partly);   // training scores better
  CHECK(judge_train_like_held_out(2.267, 2.270, std::nan("")).outcome == Outcome::inconclusive);
  CHECK(judge_train_like_held_out(2.267, 2.10, 0.02).measured == doctest::Approx(0.167));
  CHECK(judge_train_like_held_out(2.267, 2.10, 0.02).bound == doctest::Approx(0.04));
}

TEST_CASE("validation_figures: the first windows' loss as decoder_lm_eval_loss gives it, and the spread sample") {
  TinyLm lm;
  lm.model = small_decoder_lm(3);
  for (int i = 0; i < 256; ++i) lm.tokenizer.pieces.push_back(std::string(1, char(i)));
  for (int i = 0; i < 400; ++i) lm.valid_tokens.push_back((i * 7 + i / 5) % 23);
  lm.curve = {{100, 2.5, 2.4}, {200, 2.3, 2.2}};
  const ValidationFigures v = validation_figures(lm, 4, 16);
  CHECK(v.loss == decoder_lm_eval_loss(lm.model, lm.valid_tokens, 4, 16));  // the same bits
  REQUIRE(v.window_losses.size() == 4);
  CHECK(v.window_losses[1] == doctest::Approx(decoder_lm_eval_loss(
                                  lm.model, std::vector<int>(lm.valid_tokens.begin() + 16, lm.valid_tokens.begin() + 33),
                                  1, 16)));
  CHECK(v.spread_windows == 4);
  CHECK(v.spread_se > 0.0);
  CHECK(v.train_last == 2.3);
  CHECK(v.train_lag == doctest::Approx(0.1));  // half the last row's fall of 0.2
  CHECK(v.train_like_held_out.outcome == judge_train_like_held_out(2.2, v.spread_loss, v.spread_se).outcome);
  CHECK(v.held_out.front() == "Genesis 20");
}

TEST_CASE("judge_prefill_faster: decode / prefill above 1 holds, below fails, no prefill time inconclusive") {
  CHECK(judge_prefill_faster(1.0, 2.3).holds());
  CHECK(judge_prefill_faster(2.0, 1.0).outcome == Outcome::fails);
  CHECK(judge_prefill_faster(0.0, 1.0).outcome == Outcome::inconclusive);
}

TEST_CASE("decode_step_cost: the shapes' FLOPs, and whether the t term stays below the rest within the context") {
  DecoderLMConfig c;  // d 128, 5 layers, 8 heads of 16, 2 K/V heads, d_ff 344, V 512, context 256
  const DecodeStepCost k = decode_step_cost(c);
  CHECK(k.fixed == doctest::Approx(5.0 * (2 * 128 * 128 + 4 * 128 * 32 + 2 * 128 * 128 + 6 * 128 * 344) + 2 * 128 * 512));
  CHECK(k.per_position == doctest::Approx(5.0 * 4 * 128));
  CHECK(k.crossover == doctest::Approx(1861632.0 / 2560.0));
  CHECK(k.growth == doctest::Approx(256.0 * 2560.0 / 1861632.0));
  CHECK(k.fixed_dominates.holds());
  c.context = 4096;  // a long context: the t term overtakes the rest inside it
  CHECK(decode_step_cost(c).fixed_dominates.outcome == Outcome::fails);
}

TEST_CASE("judge_shift_invariant, judge_repetition, judge_same_tokens: both ways") {
  const std::vector<ShiftScore> still = {{0, -1.89045, 9.4}, {10, -1.89045 + 2e-7, 3.7}};
  const std::vector<ShiftScore> moving = {{0, -1.89, 9.4}, {10, -1.80, 3.7}};
  CHECK(judge_shift_invariant(still).holds());
  CHECK(judge_shift_invariant(moving).outcome == Outcome::fails);
  CHECK(judge_shift_invariant({}).outcome == Outcome::inconclusive);
  CHECK(judge_repetition(0.23, 0.0).holds());
  CHECK(judge_repetition(0.0, 0.3).outcome == Outcome::fails);
  CHECK(judge_repetition(0.05, 0.0).outcome == Outcome::inconclusive);
  CHECK(judge_same_tokens({{16, 1, 2, 1, 2, true}, {32, 1, 2, 1, 2, true}}).holds());
  CHECK(judge_same_tokens({{16, 1, 2, 1, 2, true}, {32, 1, 2, 1, 2, false}}).outcome == Outcome::fails);
  CHECK(judge_same_tokens({}).outcome == Outcome::inconclusive);
}

TEST_CASE("repeated_span_share: no repeat 0, a loop near 1, too short 0") {
  CHECK(repeated_span_share({1, 2, 3, 4, 5, 6, 7, 8}) == 0.0);
  // 1 2 3 4 repeated three times: of 9 spans of 4, the last 5 occurred before.
  CHECK(repeated_span_share({1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}) == doctest::Approx(5.0 / 9.0));
  CHECK(repeated_span_share({7, 7, 7, 7, 7, 7}) == doctest::Approx(2.0 / 3.0));
  CHECK(repeated_span_share({1, 2, 3, 4}) == 0.0);
}

TEST_CASE("decoder studies on a small model: figures recomputed by hand") {
  const DecoderLM m = small_decoder_lm(3);
  const std::vector<int> prompt = {1, 5, 9, 2};

  const NormStudy n = norm_study(m, prompt, 64, 3);
  REQUIRE(n.x.shape(0) == 3);
  for (std::size_t r = 0; r < 3; ++r) {  // RMSNorm: each row's mean square is 1 (up to ε); LayerNorm: mean 0
    double ss = 0.0, mean = 0.0;
    for (std::size_t c = 0; c < n.x.shape(1); ++c) ss += double(n.rms_y(r, c)) * n.rms_y(r, c), mean += n.ln_y(r, c);
    CHECK(ss / double(n.x.shape(1)) == doctest::Approx(1.0).epsilon(1e-3));
    CHECK(std::abs(mean / double(n.x.shape(1))) < 1e-5);
  }
  CHECK(n.mean_ln == doctest::Approx(0.0).epsilon(1e-5));
  CHECK(n.rms.runs == 3);
  CHECK(n.saving.from_best == doctest::Approx(1.0 - n.rms.best / n.layer.best));

  const FfnCost f = ffn_cost(16, 24, 32, 1, 2);
  CHECK(f.relu_params == 2 * 16 * 64);
  CHECK(f.swiglu_params == 3 * 16 * 24);

  const ShiftStudy s = rope_shift_study(m, prompt);
  CHECK(s.rows.size() == 5);
  CHECK(s.rope_invariant.holds());    // RoPE: only the distance matters
  CHECK(s.sinusoidal_spread > 1e-3);  // added encodings: the placement matters

  const std::vector<KvCacheRow> rows = kv_cache_table(m.cfg);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].bytes_per_token == 2 * 2 * 4 * 4 * 4);  // MHA: 2·layers·H·d_k·4
  CHECK(rows[1].shipped);
  CHECK(rows[1].kv_heads == 2);
  CHECK(rows[4].bytes_per_token == kv_cache_bytes_per_token(80, 8, 128, 2));
  CHECK(rows[0].context == m.cfg.context);
  CHECK(rows[4].context == 4096);
  CHECK(rows[0].weight_bytes == 0.0);  // no parameter count given
  CHECK(kv_cache_table(m.cfg, 1000)[1].weight_bytes == 4000.0);  // float32
  CHECK(rows[4].weight_bytes == 140e9);  // the nominal 70·10⁹ in bf16
  const BlockParameters p = block_parameters(m);
  CHECK(p.embedding + p.all_blocks + p.head == p.total);

  const DecodingComparison d = compare_decoding(m, prompt, 30, {0.8f, 0, 0.95f}, 4);
  CHECK(d.sampled == generate_tokens(m, prompt, 30, {0.8f, 0, 0.95f}, 4));
  CHECK(d.greedy == generate_tokens(m, prompt, 30, {0.0f, 0, 1.0f}, 99));  // greedy ignores the seed
  CHECK(d.raw == generate_tokens(m, prompt, 30, {1.0f, 0, 1.0f}, 4));  // τ = 1, nothing cut, the same seed
  CHECK(d.greedy_repeats == doctest::Approx(repeated_span_share(d.greedy)));

  const NextTokenStudy nt = next_token_study(m, prompt, {0.5f, 3, 1.0f});
  CHECK(nt.kept == 3);  // top-k = 3
  CHECK(nt.top.size() == 5);
  double mass = 0.0;
  for (int id : nt.top) mass += nt.final_p(std::size_t(id));
  CHECK(mass == doctest::Approx(1.0).epsilon(1e-5));  // the 3 kept are among the 5 most probable

  const std::vector<KvSpeedRow> sweep = kv_speed_sweep(m, prompt, {4, 8}, {0.8f, 0, 0.95f}, 2, 1);
  CHECK(judge_same_tokens(sweep).holds());
  const PagedStudy ps = paged_study(m, {{1, 2, 3}, {4, 5, 6, 7, 8}}, {6, 20}, {0.8f, 0, 0.95f}, 1, 4);
  CHECK(ps.identical);
  CHECK(ps.lengths == std::vector<std::size_t>{8, 24});  // prompt + new − 1
  CHECK(ps.blocks == std::vector<std::size_t>{2, 6});
  CHECK(ps.unused_total == 0);
  CHECK(ps.mean_length == doctest::Approx(16.0));
  CHECK(ps.ratio == doctest::Approx(double(ps.contiguous_bytes) / double(ps.paged_bytes)));
  CHECK(ps.ratio > ps.full_ratio);  // short sequences save more than full ones
  CHECK(ps.full_ratio == doctest::Approx(double(m.cfg.context) /
                                         double((m.cfg.context + 3) / 4 * 4)));  // blocks of 4 at the context
}

TEST_CASE("printable_text: whole UTF-8 characters and ASCII kept, half characters and control bytes as '?'") {
  CHECK(printable_text("In the beginning\n") == "In the beginning\n");
  CHECK(printable_text("\xe7\x8c\xab om") == "\xe7\x8c\xab om");  // 猫 kept whole
  CHECK(printable_text("\xe7\x8c om") == "?? om");                // a character cut short: each byte '?'
  CHECK(printable_text("a\x01" "b\x80") == "a?b?");              // a control byte and a stray continuation
}
