// Chapter 12's state-space measurements (see attn/studies/state_space.hpp).
#include "attn/studies/state_space.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "attn/attention/attention.hpp"
#include "attn/attention/kv_cache.hpp"
#include "attn/attention/linear_attention.hpp"
#include "attn/attention/ssd.hpp"
#include "attn/nn/sequence_mixers.hpp"
#include "attn/studies/attention_speed.hpp"
#include "attn/studies/timing.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

namespace {
double max_err(const Mat& a, const MatD& ref) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = std::abs(double(a.data()[i]) - ref.data()[i]);
    d = std::isnan(e) ? INFINITY : std::max(d, e);
  }
  return d;
}
}  // namespace

SsdExample ssd_tiny_example() {
  SsdExample e;
  e.x = {{1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2}};
  e.b = {{1}, {1}, {2}, {1}, {1}};
  e.c = {{1}, {1}, {1}, {2}, {1}};
  e.log_a = {std::log(0.5f), std::log(0.5f), std::log(0.25f), std::log(0.5f), std::log(0.5f)};
  e.chunk = 2;
  e.mask = ssd_decay_mask(e.log_a);
  e.y_scan = ssd_scan(e.x, e.b, e.c, e.log_a);
  e.y_quadratic = ssd_quadratic(e.x, e.b, e.c, e.log_a);
  e.y_chunked = ssd_chunked(e.x, e.b, e.c, e.log_a, e.chunk);
  e.y_reference = ssd_reference(e.x, e.b, e.c, e.log_a);
  return e;
}

SsdAgreement judge_ssd_agreement(double err_scan, double err_quadratic, double err_chunked) {
  SsdAgreement a;
  a.err_scan = err_scan;
  a.err_quadratic = err_quadratic;
  a.err_chunked = err_chunked;
  a.agree = judge_at_most(std::max({err_scan, err_quadratic, err_chunked}), 1e-5);
  return a;
}

std::vector<SsdSize> ssd_agreement_sizes() {
  return {SsdSize{1, 4, 3, 4}, SsdSize{7, 4, 3, 3}, SsdSize{50, 16, 8, 16}, SsdSize{129, 16, 16, 32}};
}

SsdAgreement ssd_agreement(std::uint64_t seed) {
  double es = 0, eq = 0, ec = 0;
  std::vector<std::string> names;
  Rng rng(seed);
  for (SsdSize s : ssd_agreement_sizes()) {
    const Mat x = rng.normal_mat(s.t, s.p), b = rng.normal_mat(s.t, s.n, 0.25f), c = rng.normal_mat(s.t, s.n, 0.25f);
    Vec la = Vec::from_shape({s.t});
    for (auto& v : la) v = -rng.uniform(0.01f, 0.5f);
    const MatD ref = ssd_reference(x, b, c, la);
    es = std::max(es, max_err(ssd_scan(x, b, c, la), ref));
    eq = std::max(eq, max_err(ssd_quadratic(x, b, c, la), ref));
    ec = std::max(ec, max_err(ssd_chunked(x, b, c, la, s.chunk), ref));
    names.push_back("T=" + std::to_string(s.t) + "/Q=" + std::to_string(s.chunk));
  }
  SsdAgreement a = judge_ssd_agreement(es, eq, ec);
  a.sizes = names;
  return a;
}

SsdTiming judge_ssd_timing(std::vector<SsdTimingRow> rows, std::size_t n, std::size_t p, std::size_t chunk) {
  SsdTiming r;
  r.n = n;
  r.p = p;
  r.chunk = chunk;
  r.rows = std::move(rows);
  for (const auto& row : r.rows)
    if (r.crossover_t == 0 && row.quadratic_s > row.scan_s) r.crossover_t = row.t;
  r.chunked_vs_scan = r.rows.empty() || r.rows.back().chunked_s <= 0 ? NAN : r.rows.back().scan_s / r.rows.back().chunked_s;
  r.chunked_faster = judge_at_least(r.chunked_vs_scan, 1.2, 0.8);
  std::size_t unclean = 0;
  for (std::size_t i = 1; i < r.rows.size(); ++i) {
    const SsdTimingRow &a = r.rows[i - 1], &b = r.rows[i];
    const double grow_t = double(b.t) / double(a.t);
    const struct { const char* form; double from, to, exponent; } forms[] = {
        {"scan", a.scan_s, b.scan_s, 1.0}, {"quadratic", a.quadratic_s, b.quadratic_s, 2.0},
        {"chunked", a.chunked_s, b.chunked_s, 1.0}};
    for (const auto& f : forms) {
      if (!(f.from > 0 && f.to > 0 && grow_t > 1)) continue;
      const double local = std::log(f.to / f.from) / std::log(grow_t);
      if (std::abs(local - f.exponent) <= 0.5) continue;
      r.outliers.push_back({f.form, a.t, b.t, f.to / f.from, std::pow(grow_t, f.exponent)});
      unclean += f.exponent == 1.0;  // the scan's and the chunked form's
    }
  }
  r.speedup_clean = judge_at_most(double(unclean), 0.0);
  // Each form's slope from its accepted lengths only: not an end of one of its off-cost intervals.
  auto fit = [&](const char* form, double SsdTimingRow::*seconds, double exponent, double& slope,
                 std::size_t& points, Verdict& verdict) {
    std::vector<double> ts, ys;
    for (const auto& row : r.rows) {
      bool rejected = false;
      for (const auto& o : r.outliers)
        rejected = rejected || (std::string(o.form) == form && (o.from_t == row.t || o.to_t == row.t));
      if (rejected) continue;
      ts.push_back(double(row.t));
      ys.push_back(row.*seconds);
    }
    points = ts.size();
    slope = points >= kSsdFitPoints ? loglog_slope(ts, ys) : NAN;
    verdict = judge_at_most(std::abs(slope - exponent), 0.25, 0.5);
    if (points < kSsdFitPoints) verdict.outcome = Outcome::too_noisy;
  };
  fit("scan", &SsdTimingRow::scan_s, 1.0, r.scan_slope, r.scan_points, r.scan_linear);
  fit("quadratic", &SsdTimingRow::quadratic_s, 2.0, r.quadratic_slope, r.quadratic_points, r.quadratic_square);
  fit("chunked", &SsdTimingRow::chunked_s, 1.0, r.chunked_slope, r.chunked_points, r.chunked_linear);
  return r;
}

SsdTiming ssd_timing(const std::vector<std::size_t>& lengths, std::size_t n, std::size_t p, std::size_t chunk) {
  std::vector<SsdTimingRow> rows;
  Rng rng(120);
  struct Inputs { Mat x, b, c; Vec la; };
  std::vector<Inputs> inputs;
  for (std::size_t t : lengths) {
    Inputs in{rng.normal_mat(t, p), rng.normal_mat(t, n, 0.25f), rng.normal_mat(t, n, 0.25f), Vec::from_shape({t})};
    for (auto& v : in.la) v = -rng.uniform(0.01f, 0.5f);
    inputs.push_back(std::move(in));
    SsdTimingRow row;
    row.t = t;
    row.scan_s = row.quadratic_s = row.chunked_s = INFINITY;
    rows.push_back(row);
  }
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Inputs& in = inputs[i];
      SsdTimingRow& row = rows[i];
      Mat sink;
      row.scan_s = std::min(row.scan_s, best_seconds([&] { sink = ssd_scan(in.x, in.b, in.c, in.la); }, 5, true, 0.2));
      row.quadratic_s =
          std::min(row.quadratic_s, best_seconds([&] { sink = ssd_quadratic(in.x, in.b, in.c, in.la); }, 5, true, 0.2));
      row.chunked_s = std::min(row.chunked_s,
                               best_seconds([&] { sink = ssd_chunked(in.x, in.b, in.c, in.la, chunk); }, 5, true, 0.2));
    }
  return judge_ssd_timing(std::move(rows), n, p, chunk);
}

FamilyDemo family_demo() {
  FamilyDemo f;
  // tokens: A→v1, B→v2, A→v3, B→v4, then a query for A that writes nothing (k = v = 0)
  f.k = {{1, 0}, {0, 1}, {1, 0}, {0, 1}, {0, 0}};
  f.v = {{1, 0}, {0, 1}, {2, 2}, {0, -1}, {0, 0}};
  f.q = {{1, 0}, {0, 1}, {1, 0}, {0, 1}, {1, 0}};
  f.decay = 0.5;
  f.beta = 1.0;
  const std::size_t t = 5, n = 2, p = 2;
  f.softmax_scale = 1.0 / std::sqrt(double(n));
  auto read_error = [&](const Mat& y) {
    return std::max(std::abs(double(y(4, 0)) - f.v(2, 0)), std::abs(double(y(4, 1)) - f.v(2, 1)));
  };
  auto add = [&](const char* id, std::size_t floats, Mat y) {
    FamilyMember m{id, floats, y, 0.0};
    m.read_error = read_error(y);
    f.members.push_back(std::move(m));
  };
  const AttentionResult soft = scaled_dot_product_attention(f.q, f.k, f.v, causal_mask(t));
  f.softmax_weights = xt::view(soft.weights, t - 1, xt::all());
  add("softmax", 2 * t * n, soft.output);
  add("linear", n * p + n, linear_attention_causal(f.q, f.k, f.v));
  Vec la = Vec::from_shape({t});
  la.fill(float(std::log(f.decay)));
  add("decay", n * p, ssd_scan(f.v, f.k, f.q, la));  // B = k, C = q, X = v
  Vec beta = Vec::from_shape({t});
  beta.fill(float(f.beta));
  add("delta", n * p, delta_rule_scan(f.q, f.k, f.v, beta));
  // crowded: the four writes, C → v5 with C = (0.6, 0.8), then the query for A
  f.crowded_k = {{0.6f, 0.8f}};
  f.crowded_v = {{-1, 1}};
  const Mat kc = {{1, 0}, {0, 1}, {1, 0}, {0, 1}, {0.6f, 0.8f}, {0, 0}};
  const Mat vc = {{1, 0}, {0, 1}, {2, 2}, {0, -1}, {-1, 1}, {0, 0}};
  const Mat qc = {{1, 0}, {0, 1}, {1, 0}, {0, 1}, {0.6f, 0.8f}, {1, 0}};
  Vec beta6 = Vec::from_shape({std::size_t(6)});
  beta6.fill(float(f.beta));
  const Mat yc = delta_rule_scan(qc, kc, vc, beta6);
  f.crowded_error = std::max(std::abs(double(yc(5, 0)) - f.v(2, 0)), std::abs(double(yc(5, 1)) - f.v(2, 1)));
  f.delta_crowded = judge_at_least(f.crowded_error, 0.1);
  f.delta_overwrites = judge_at_most(f.members[3].read_error, 1e-5);
  f.linear_mixes = judge_at_least(f.members[1].read_error, 0.5);
  return f;
}

std::size_t l2_cache_bytes() {
#if defined(_SC_LEVEL2_CACHE_SIZE)
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 > 0) return std::size_t(l2);
#endif
  return 0;
}

DecodeCost judge_decode_cost(std::vector<DecodeCostRow> rows, std::size_t d_model, std::size_t heads,
                             std::size_t state_n, std::size_t cache_bytes) {
  DecodeCost c;
  c.cache_bytes = cache_bytes;
  c.d_model = d_model;
  c.heads = heads;
  c.state_n = state_n;
  c.rows = std::move(rows);
  std::vector<double> xs, at, ss;
  for (const auto& r : c.rows) {
    xs.push_back(double(r.context));
    at.push_back(r.attention_s);
    ss.push_back(r.ssm_s);
  }
  c.attention_slope = loglog_slope(xs, at);
  c.ssm_slope = loglog_slope(xs, ss);
  c.ratio_at_longest = c.rows.empty() ? NAN : c.rows.back().attention_s / c.rows.back().ssm_s;
  c.bytes_ratio_at_longest =
      c.rows.empty() ? NAN : double(c.rows.back().kv_bytes) / double(c.rows.back().state_bytes);
  if (!c.rows.empty()) {
    const DecodeCostRow& last = c.rows.back();
    const double am = last.attention_median_s > 0 ? last.attention_median_s : last.attention_s;
    const double sm = last.ssm_median_s > 0 ? last.ssm_median_s : last.ssm_s;
    c.median_ratio_at_longest = am / sm;
  }
  for (const auto& r : c.rows)
    if (cache_bytes > 0 && c.cache_passed_at == 0 && r.kv_bytes > cache_bytes) c.cache_passed_at = r.context;
  double steepest = -INFINITY;
  for (std::size_t i = 1; i < c.rows.size(); ++i) {
    const DecodeCostRow &a = c.rows[i - 1], &b = c.rows[i];
    const double grow_ctx = double(b.context) / double(a.context), grow = b.attention_s / a.attention_s;
    const double local = grow_ctx > 1 && grow > 0 ? std::log(grow) / std::log(grow_ctx) : NAN;
    if (!(local > steepest)) continue;
    steepest = local;
    c.steepest_from = a.context, c.steepest_to = b.context;
    c.steepest_growth = grow, c.steepest_context_growth = grow_ctx;
    c.steepest_kv_from = a.kv_bytes, c.steepest_kv_to = b.kv_bytes;
  }
  c.attention_grows = judge_at_least(c.attention_slope, 0.5);
  c.attention_linear = judge_at_most(std::abs(c.attention_slope - 1.0), 0.25);
  c.ssm_flat = judge_at_most(c.ssm_slope, 0.2);
  const bool crosses = c.steepest_kv_from <= cache_bytes && cache_bytes < c.steepest_kv_to;
  c.jump_at_cache = cache_bytes == 0 || c.steepest_to == 0 || c.attention_linear.holds()
                        ? Verdict{NAN, 0.0, 0.0, Outcome::inconclusive}
                        : Verdict{crosses ? 1.0 : 0.0, 1.0, 1.0, crosses ? Outcome::holds : Outcome::fails};
  c.steepest_spread = NAN;
  for (const auto& r : c.rows)
    if ((r.context == c.steepest_from || r.context == c.steepest_to) && c.steepest_to > 0 && r.attention_s > 0) {
      const double sp = (r.attention_median_s > 0 ? r.attention_median_s : r.attention_s) / r.attention_s;
      c.steepest_spread = std::isnan(c.steepest_spread) ? sp : std::max(c.steepest_spread, sp);
    }
  c.steepest_steady = judge_at_most(c.steepest_spread, kDecodeSteadyRatio);
  c.steepest_repeats = Verdict{NAN, kDecodeSteadyRatio, kDecodeSteadyRatio, Outcome::inconclusive};
  judge_decode_ratio(c);
  return c;
}

void judge_decode_ratio(DecodeCost& c) {
  // median / best of a row's attention and SSM runs, the larger (a row without medians: 1); a row at
  // an end of the steepest interval, when that interval failed a check, does not count
  const bool failed_jump = c.steepest_steady.outcome == Outcome::fails || c.steepest_repeats.outcome == Outcome::fails;
  auto spread = [&](const DecodeCostRow& r) {
    if (failed_jump && (r.context == c.steepest_from || r.context == c.steepest_to)) return double(INFINITY);
    const double a = r.attention_s > 0 && r.attention_median_s > 0 ? r.attention_median_s / r.attention_s : 1.0;
    const double s = r.ssm_s > 0 && r.ssm_median_s > 0 ? r.ssm_median_s / r.ssm_s : 1.0;
    return std::max(a, s);
  };
  c.longest_spread = c.rows.empty() ? NAN : spread(c.rows.back());
  c.longest_steady = std::isinf(c.longest_spread)  // an end of the interval that failed a check
                         ? Verdict{c.longest_spread, kDecodeSteadyRatio, kDecodeSteadyRatio, Outcome::fails}
                         : judge_at_most(c.longest_spread, kDecodeSteadyRatio);
  // Attention's slope from the accepted contexts only, and its two verdicts: the ends of the steepest
  // interval are left out when its second, alternating timing disagreed with the first.
  const bool retimed_apart = c.steepest_repeats.outcome == Outcome::fails;
  std::vector<double> xs, at;
  c.attention_fit_contexts.clear();
  for (const auto& r : c.rows)
    if (!(retimed_apart && (r.context == c.steepest_from || r.context == c.steepest_to))) {
      xs.push_back(double(r.context));
      at.push_back(r.attention_s);
      c.attention_fit_contexts.push_back(r.context);
    }
  c.attention_fit_points = xs.size();
  c.attention_fit_slope = xs.size() >= kSsdFitPoints ? loglog_slope(xs, at) : NAN;
  c.attention_grows = judge_at_least(c.attention_fit_slope, 0.5);
  c.attention_linear = judge_at_most(std::abs(c.attention_fit_slope - 1.0), 0.25);
  if (xs.size() < kSsdFitPoints) c.attention_grows.outcome = c.attention_linear.outcome = Outcome::too_noisy;
  c.ratio_context = 0, c.ratio_best = c.ratio_median = NAN;
  for (const auto& r : c.rows)
    if (spread(r) <= kDecodeSteadyRatio && r.ssm_s > 0 && r.context >= c.ratio_context) {
      c.ratio_context = r.context;
      c.ratio_best = r.attention_s / r.ssm_s;
      c.ratio_median = (r.attention_median_s > 0 ? r.attention_median_s : r.attention_s) /
                       (r.ssm_median_s > 0 ? r.ssm_median_s : r.ssm_s);
    }
}

DecodeJumpReading read_steepest_jump(const DecodeCost& c) {
  const bool steady = c.steepest_steady.holds();
  switch (c.steepest_repeats.outcome) {
    case Outcome::holds: return steady ? DecodeJumpReading::measured : DecodeJumpReading::reproduced;
    case Outcome::fails: return steady ? DecodeJumpReading::order_dependent : DecodeJumpReading::unsteady_apart;
    default: return steady ? DecodeJumpReading::unchecked : DecodeJumpReading::unsteady_alone;
  }
}

void judge_steepest_repeat(DecodeCost& c, double repeat_growth) {
  c.steepest_repeat_growth = repeat_growth;
  const double a = c.steepest_growth, b = repeat_growth;
  c.steepest_repeats = judge_at_most(a > 0 && b > 0 ? std::max(a, b) / std::min(a, b) : NAN, kDecodeSteadyRatio);
  judge_decode_ratio(c);
}

DecodeCost decode_cost(const std::vector<std::size_t>& contexts, std::size_t d_model, std::size_t heads,
                       std::size_t state_n) {
  Rng rng(121);
  const DecoderAttention att = decoder_attention_init(d_model, heads, heads, d_model / heads, rng);
  const SelectiveSsm ssm = selective_ssm_init(d_model, heads, state_n, rng);
  const Mat x = rng.normal_mat(1, d_model);
  const Vec xv = xt::view(x, 0, xt::all());
  std::vector<DecodeCostRow> rows;
  int runs = 0;
  for (std::size_t ctx : contexts) {
    KVCache cache = kv_cache_make(att, ctx + 1);
    cache.k = rng.normal_mat(ctx + 1, d_model);  // the earlier tokens' keys and values
    cache.v = rng.normal_mat(ctx + 1, d_model);
    DecodeCostRow r;
    r.context = ctx;
    Mat out;
    const TimeSpread at = time_runs([&] { cache.len = ctx; out = decoder_attention_step(att, cache, x); }, 7, true, 0.6);
    Tensor3 state = xt::zeros<float>({heads, state_n, d_model / heads});
    Vec o;
    const TimeSpread st = time_runs([&] { o = selective_ssm_step(ssm, state, xv); }, 7, true, 0.6);
    r.attention_s = at.best, r.attention_median_s = at.median;
    r.ssm_s = st.best, r.ssm_median_s = st.median;
    runs = runs == 0 ? std::min(at.runs, st.runs) : std::min({runs, at.runs, st.runs});
    r.kv_bytes = 2 * ctx * d_model * sizeof(float);
    r.state_bytes = selective_ssm_state_floats(d_model, heads, state_n) * sizeof(float);
    rows.push_back(r);
  }
  DecodeCost c = judge_decode_cost(std::move(rows), d_model, heads, state_n, l2_cache_bytes());
  c.runs = runs;
  c.copy_gbs = copy_bandwidth_gbs();  // this machine's copy speed now, beside the step's rate
  if (c.steepest_to > 0) {  // the steepest step again, its two contexts timed alternately
    KVCache from = kv_cache_make(att, c.steepest_from + 1), to = kv_cache_make(att, c.steepest_to + 1);
    for (KVCache* kv : {&from, &to}) kv->k = rng.normal_mat(kv->k.shape(0), d_model), kv->v = rng.normal_mat(kv->v.shape(0), d_model);
    Mat out;
    const auto [a, b] = time_interleaved([&] { from.len = c.steepest_from; out = decoder_attention_step(att, from, x); },
                                         [&] { to.len = c.steepest_to; out = decoder_attention_step(att, to, x); }, 7);
    judge_steepest_repeat(c, a.best > 0 ? b.best / a.best : NAN);
  }
  return c;
}

}  // namespace attn
