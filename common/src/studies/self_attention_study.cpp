// Chapter 03's checks and measurements (see attn/studies/self_attention_study.hpp).
#include "attn/studies/self_attention_study.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attn/nn/layernorm.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

EntryStats entry_stats(const Mat& x) {
  EntryStats s;
  if (x.size() == 0) return {NAN, NAN};
  for (float v : x) s.mean += double(v);
  s.mean /= double(x.size());
  for (float v : x) s.variance += (double(v) - s.mean) * (double(v) - s.mean);
  s.variance /= double(x.size());
  return s;
}

RowSumCheck check_row_sums(const Mat& weights) {
  RowSumCheck c;
  c.min_sum = std::numeric_limits<double>::infinity();
  c.max_sum = -c.min_sum;
  double worst = 0.0;
  for (std::size_t i = 0; i < weights.shape(0); ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < weights.shape(1); ++j) s += double(weights(i, j));
    c.min_sum = std::min(c.min_sum, s);
    c.max_sum = std::max(c.max_sum, s);
    worst = std::max(worst, std::abs(s - 1.0));
  }
  if (weights.shape(0) == 0) worst = NAN;
  c.sums_to_one = judge_at_most(worst, kFloatCheckTol);
  return c;
}

ReferenceAgreement check_reference(const Mat& output, const Mat& reference) {
  ReferenceAgreement c;
  c.max_diff = output.shape() == reference.shape() ? max_abs_diff(output, reference) : NAN;
  c.agrees = judge_at_most(c.max_diff, kFloatCheckTol);
  return c;
}

CausalCheck check_causal(const Mat& weights, const Mat& output, const Mat& full_output, const Mat& mask) {
  if (weights.shape() != mask.shape() || weights.shape(0) == 0)
    shape_mismatch("check_causal", "weights", shape_of(weights), "mask", shape_of(mask), "need the same (n, n), n ≥ 1");
  CausalCheck c;
  const std::size_t n = weights.shape(0);
  c.first_self_weight = double(weights(0, 0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < weights.shape(1); ++j)
      if (std::isinf(mask(i, j))) c.masked_weight_max = std::max(c.masked_weight_max, double(std::abs(weights(i, j))));
  c.last_row_diff = max_abs_diff(row_of(output, n - 1), row_of(full_output, n - 1));
  c.first_sees_only_itself = judge_at_most(std::abs(c.first_self_weight - 1.0), kFloatCheckTol);
  c.masked_are_zero = judge_at_most(c.masked_weight_max, 0.0);
  c.last_row_unchanged = judge_at_most(c.last_row_diff, kFloatCheckTol);
  return c;
}

PermutationCheck check_permutation(const Mat& output, const Mat& out_permuted, const std::vector<std::size_t>& perm) {
  PermutationCheck c;
  c.equivariance_err = max_abs_diff(out_permuted, permute_rows(output, perm));
  const Mat pooled = xt::mean(output, {0}, xt::keep_dims), pooled_p = xt::mean(out_permuted, {0}, xt::keep_dims);
  c.pooled_err = max_abs_diff(pooled, pooled_p);
  c.equivariant = judge_at_most(c.equivariance_err, kFloatCheckTol);
  c.pooled_invariant = judge_at_most(c.pooled_err, kFloatCheckTol);
  return c;
}

ScalingStudy judge_scaling(std::vector<ScalingRow> rows, std::size_t trials, std::size_t n_keys) {
  ScalingStudy s;
  s.rows = std::move(rows);
  double var_dev = s.rows.empty() ? NAN : 0.0, lo = INFINITY, hi = 0.0;
  for (std::size_t i = 0; i < s.rows.size(); ++i)
    if (s.rows[i].grad_raw > s.rows[s.raw_peak].grad_raw) s.raw_peak = i;
  for (const ScalingRow& r : s.rows) {
    var_dev = std::max(var_dev, std::abs(r.var_scaled - 1.0));
    lo = std::min(lo, r.grad_scaled);
    hi = std::max(hi, r.grad_scaled);
    // The variance is the mean of z_j² = (q·k_j/√d_k)² over the trials, and a query's n_keys keys
    // share its q, so they are not independent samples. Given q, z_j ~ N(0, s) with s = |q|²/d_k,
    // so one query's mean of z² has variance Var(s) + E[2s²]/n_keys = 2/d_k + 2(1 + 2/d_k)/n_keys
    // (s = χ²_{d_k}/d_k: mean 1, variance 2/d_k); the trials are independent of each other.
    if (trials > 0 && n_keys > 0 && r.d_k > 0) {
      const double d = double(r.d_k), per_query = 2.0 / d + 2.0 * (1.0 + 2.0 / d) / double(n_keys);
      s.var_noise = std::max(s.var_noise, 3.0 * std::sqrt(per_query / double(trials)));
    }
  }
  s.unit_variance = judge_at_most(var_dev, 0.15);
  if (s.var_noise > 0.15) s.unit_variance.outcome = Outcome::too_noisy;
  // Is the worst deviation one that three standard errors of noise would give? Only with a noise figure.
  s.within_noise = judge_at_most(trials > 0 && n_keys > 0 ? var_dev : NAN, s.var_noise);
  // P(|N(0, 1)| > 3) = 0.0027 per row; at least one of the rows (each row's own noise is at most var_noise)
  s.chance_beyond_noise = 1.0 - std::pow(1.0 - std::erfc(3.0 / std::sqrt(2.0)), double(s.rows.size()));
  const double raw_ratio = s.rows.empty() ? NAN : s.rows.back().grad_raw / s.rows.back().grad_scaled;
  s.raw_vanishes = judge_at_most(raw_ratio, 0.5);
  s.scaled_steady = judge_at_most(s.rows.empty() ? NAN : hi / lo, 1.25);
  return s;
}

ScalingStudy scaling_study(Rng& rng, const std::vector<std::size_t>& d_ks, std::size_t n_keys, std::size_t trials) {
  std::vector<ScalingRow> rows;
  for (std::size_t d_k : d_ks) rows.push_back(measure_scaling(rng, d_k, n_keys, trials));
  return judge_scaling(std::move(rows), trials, n_keys);
}

LookupStudy lookup_study(const Vec& query, const Mat& keys, const Mat& values, std::vector<float> taus,
                         std::size_t intended) {
  std::sort(taus.begin(), taus.end(), std::greater<float>());  // the table reads from soft to hard
  LookupStudy s;
  float smallest = INFINITY;
  double at_smallest = NAN;
  for (float tau : taus) {
    LookupRow r;
    r.tau = tau;
    r.lookup = soft_lookup(query, keys, values, tau);
    r.dist_to_hard = max_abs_diff(r.lookup.output, row_of(values, r.lookup.best));
    if (tau < smallest) smallest = tau, at_smallest = r.dist_to_hard;
    s.rows.push_back(std::move(r));
  }
  s.becomes_hard = judge_at_most(at_smallest, 1e-3);
  s.intended = intended;
  if (!s.rows.empty()) s.best = s.rows.front().lookup.best;  // argmax q·k_j does not depend on τ
  const bool judgeable = !s.rows.empty() && intended < keys.shape(0);
  s.picks_intended = judge_at_most(judgeable ? (s.best == intended ? 0.0 : 1.0) : NAN, 0.0);
  return s;
}

namespace {
Mat raise_first_row(Mat x) {
  for (std::size_t c = 0; c < x.shape(1); ++c) x(0, c) += 1.0f;
  return x;
}
}  // namespace

RecurrentPath recurrent_path(const Gru& cell, const Mat& x) {
  // x: (n, D); the same run twice, token 0 raised by 1 in the second.
  RecurrentPath r;
  const std::size_t n = x.shape(0), hidden = gru_hidden_size(cell);
  if (n == 0) return r;
  const Mat xp = raise_first_row(x);
  Mat h = xt::zeros<float>({std::size_t(1), hidden}), hp = h, next;
  GruStepCacheT<float> cache;
  for (std::size_t t = 0; t < n; ++t) {
    const Mat a = xt::view(x, xt::range(t, t + 1), xt::all()), b = xt::view(xp, xt::range(t, t + 1), xt::all());
    gru_cell_forward(next, cache, a, h, cell);
    h = next;
    gru_cell_forward(next, cache, b, hp, cell);
    hp = next;
    if (t > 0) ++r.steps;  // one more step that had to wait for the one before
  }
  r.influence = max_abs_diff(h, hp);
  return r;
}

namespace {
// x + Attn(x), each row scaled to unit RMS (RMSNorm with γ = 1) so that many stacked layers stay in range.
Mat attention_layer_step(const Mat& x, const Mat& attn_out, const Norm& unit) {
  Mat y;
  Vec rstd;
  rmsnorm_forward(y, rstd, Mat(x + attn_out), unit);
  return y;
}
}  // namespace

std::size_t attention_path_layers(const Mat& x, const SelfAttentionWeights& w, const Mat& mask, std::size_t max_layers) {
  const std::size_t n = x.shape(0);
  if (n == 0) return 0;
  std::vector<char> dep(n, 0), next(n, 0);
  dep[0] = 1;
  if (n == 1) return 0;
  Mat a = x;
  const Norm unit = rmsnorm_init(x.shape(1));
  for (std::size_t layer = 1; layer <= max_layers; ++layer) {
    const SelfAttentionTrace t = self_attention(a, w, mask);
    for (std::size_t i = 0; i < n; ++i) {
      next[i] = dep[i];  // the residual keeps what row i had
      for (std::size_t j = 0; j < n && !next[i]; ++j) next[i] = dep[j] && t.attn.weights(i, j) > 0.0f;
    }
    dep.swap(next);
    if (dep[n - 1]) return layer;
    a = attention_layer_step(a, t.attn.output, unit);
  }
  return 0;
}

double attention_influence(const Mat& x, const SelfAttentionWeights& w, const Mat& mask) {
  const std::size_t n = x.shape(0);
  if (n == 0) return 0.0;
  const Mat a = self_attention(x, w, mask).attn.output, b = self_attention(raise_first_row(x), w, mask).attn.output;
  return max_abs_diff(row_of(a, n - 1), row_of(b, n - 1));
}

Mat causal_window_mask(std::size_t n, std::size_t w) {
  Mat m = causal_mask(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j + w <= i; ++j) m(i, j) = -INFINITY;
  return m;
}

PathLengthStudy judge_path_length(std::vector<PathLengthRow> rows, std::size_t d_model, std::size_t window) {
  PathLengthStudy s;
  s.d_model = d_model;
  s.window = window;
  s.rows = std::move(rows);
  const bool none = s.rows.empty();
  double most_layers = none ? NAN : 0.0, fewest_per_step = none ? NAN : INFINITY, window_off = none ? NAN : 0.0;
  for (const PathLengthRow& r : s.rows) {
    // a row where token 0 never arrived (0 layers) counts as more layers than any run tried
    most_layers = std::max(most_layers, r.attention_layers == 0 ? double(r.n) + 1.0 : double(r.attention_layers));
    if (r.n > 1) fewest_per_step = std::min(fewest_per_step, double(r.recurrent_steps) / double(r.n - 1));
    if (window > 1 && r.n > 1)
      window_off = std::max(window_off, std::abs(double(r.window_layers) - std::ceil(double(r.n - 1) / double(window - 1))));
  }
  s.constant_attention = judge_at_most(most_layers, 1.0);
  s.recurrent_grows = judge_at_least(fewest_per_step, 1.0);
  s.window_formula = judge_at_most(window > 1 ? window_off : NAN, 0.0);
  s.attention_keeps_more = none ? judge_greater(NAN, NAN, 0.0)
                                : judge_greater(s.rows.back().attention_influence, s.rows.back().recurrent_influence, 1e-6);
  s.attention_fall = none ? NAN : s.rows.front().attention_influence / s.rows.back().attention_influence;
  s.token_growth = none ? NAN : double(s.rows.back().n) / double(s.rows.front().n);
  s.dilution_explains = judge_at_most(std::abs(std::log(s.attention_fall / s.token_growth)), std::log(2.0));
  s.first_rise = s.rows.size();
  for (std::size_t i = 1; i < s.rows.size() && s.first_rise == s.rows.size(); ++i)
    if (s.rows[i].attention_influence > s.rows[i - 1].attention_influence) s.first_rise = i;
  return s;
}

PathLengthStudy path_length_study(const std::vector<std::size_t>& sizes, std::size_t d_model, std::size_t window,
                                  std::uint64_t seed) {
  if (window < 2) throw std::invalid_argument("path_length_study: a window of fewer than 2 keys never reaches back");
  Rng rng(seed);
  const Gru cell = gru_init(d_model, d_model, rng);
  const SelfAttentionWeights w = init_self_attention(rng, d_model, d_model, d_model);
  std::vector<PathLengthRow> rows;
  for (std::size_t n : sizes) {
    const Mat x = rng.normal_mat(n, d_model);
    PathLengthRow r;
    r.n = n;
    const RecurrentPath rec = recurrent_path(cell, x);
    r.recurrent_steps = rec.steps;
    r.recurrent_influence = rec.influence;
    r.attention_layers = attention_path_layers(x, w, causal_mask(n), n);
    r.attention_influence = attention_influence(x, w, causal_mask(n));
    r.window_layers = attention_path_layers(x, w, causal_window_mask(n, window), n);
    rows.push_back(r);
  }
  return judge_path_length(std::move(rows), d_model, window);
}

}  // namespace attn
