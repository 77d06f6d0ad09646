// Chapter 05's checks and measurements (see attn/studies/position_study.hpp).
#include "attn/studies/position_study.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/position/alibi.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/studies/lookup.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

void find_dip_and_rise(const Vec& s, SimilarityCheck& c) {
  c.dip_k = c.rise_k = 0;
  c.dip = c.rise = NAN;
  for (std::size_t k = 1; k + 1 < s.size(); ++k)
    if (s(k) < s(k - 1) && s(k) <= s(k + 1)) {
      c.dip_k = k, c.dip = double(s(k));
      break;
    }
  if (c.dip_k == 0) return;
  for (std::size_t k = c.dip_k + 1; k < s.size(); ++k)
    if (c.rise_k == 0 || double(s(k)) > c.rise) c.rise_k = k, c.rise = double(s(k));
}

RopeReach rope_reach(std::size_t d_k, std::size_t train_len, std::size_t test_len, double base) {
  RopeReach r;
  r.d_k = d_k, r.train_len = train_len, r.test_len = test_len;
  const double two_pi = 2.0 * std::acos(-1.0);
  for (std::size_t i = 0; i < d_k / 2; ++i) {
    const double theta = std::pow(base, -2.0 * double(i) / double(d_k));
    r.theta.push_back(theta);
    r.train_angle.push_back(double(train_len == 0 ? 0 : train_len - 1) * theta);
    r.test_angle.push_back(double(test_len == 0 ? 0 : test_len - 1) * theta);
    if (r.train_angle.back() < two_pi && r.test_angle.back() > r.train_angle.back()) ++r.unseen_pairs;
  }
  return r;
}

SimilarityCheck sinusoidal_similarity_check(std::size_t d, std::size_t max_k, std::size_t pos_a, std::size_t pos_b) {
  SimilarityCheck c;
  c.pos_a = pos_a, c.pos_b = pos_b;
  const Mat table = sinusoidal_table(std::max(pos_a, pos_b) + max_k + 1, d);
  const Vec formula = sinusoidal_similarity(d, max_k);
  c.rows = xt::zeros<float>({std::size_t(2), max_k + 1});
  const std::size_t pos[2] = {pos_a, pos_b};
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t k = 0; k <= max_k; ++k) {
      double dot = 0.0;
      for (std::size_t j = 0; j < d; ++j) dot += double(table(pos[r], j)) * double(table(pos[r] + k, j));
      c.rows(r, k) = float(dot);
      c.max_diff = std::max(c.max_diff, std::abs(dot - double(formula(k))));
    }
  c.of_k_only = judge_at_most(c.max_diff, 1e-4);
  find_dip_and_rise(formula, c);
  return c;
}

const ReversalRow& ReversalStudy::at(PositionEncoding e, bool causal) const {
  for (const ReversalRow& r : rows)
    if (r.encoding == e && r.causal == causal) return r;
  throw std::out_of_range(fmt::format("reversal_study: no row for {}{}", position_encoding_name(e),
                                      causal ? " + causal mask" : ""));
}

ReversalRow judge_reversal(PositionEncoding e, bool causal, double gap) {
  return {e, causal, gap, judge_at_least(gap, 1e-3)};
}

ReversalStudy reversal_study(const Mat& x, const Mat& x_reversed, const SelfAttentionWeights& w, const Mat& learned,
                             float alibi_slope) {
  const std::size_t n = x.shape(0);
  std::vector<std::size_t> reverse(n);
  std::iota(reverse.rbegin(), reverse.rend(), 0);  // row i of the reversed sentence is row n − 1 − i
  auto gap = [&](PositionEncoding e, const Mat& mask) {
    const Mat a = positioned_self_attention(x, w, e, learned, alibi_slope, mask);
    const Mat b = positioned_self_attention(x_reversed, w, e, learned, alibi_slope, mask);
    return max_abs_diff(b, permute_rows(a, reverse));
  };
  ReversalStudy s;
  for (PositionEncoding e : all_position_encodings()) s.rows.push_back(judge_reversal(e, false, gap(e, {})));
  const Mat causal = causal_mask(n);
  for (PositionEncoding e : {PositionEncoding::None, PositionEncoding::Alibi})
    s.rows.push_back(judge_reversal(e, true, gap(e, causal)));
  return s;
}

ShiftCheck judge_shift(long k, std::size_t last_pos, double max_error) {
  return {k, last_pos, max_error, judge_at_most(max_error, 1e-5)};
}

ShiftCheck sinusoidal_shift_error(std::size_t d, long k, std::size_t n_positions) {
  if (k < 0 || std::size_t(k) >= n_positions)
    throw std::invalid_argument("sinusoidal_shift_error: need 0 <= k < n_positions");
  const Mat mk = sinusoidal_shift(d, k), pe = sinusoidal_table(n_positions, d);
  double worst = 0.0;
  const std::size_t last = n_positions - 1 - std::size_t(k);
  for (std::size_t p = 0; p <= last; ++p)
    for (std::size_t r = 0; r < d; ++r) {
      double s = 0.0;
      for (std::size_t c = 0; c < d; ++c) s += double(mk(r, c)) * pe(p, c);
      worst = std::max(worst, std::abs(s - pe(p + std::size_t(k), r)));
    }
  return judge_shift(k, last, worst);
}

RelativeCheck judge_relative(std::vector<std::size_t> shifts, double max_diff) {
  return {std::move(shifts), max_diff, judge_at_most(max_diff, 1e-4)};
}

RelativeCheck rope_relative_error(const Mat& q, const Mat& k, const std::vector<std::size_t>& shifts) {
  const std::size_t n = q.shape(0), d = q.shape(1);
  const std::size_t far = shifts.empty() ? 0 : *std::max_element(shifts.begin(), shifts.end());
  const RopeTables tab = rope_tables(n + far, d);
  const Mat qa = rope_rotate(q, tab, 0), ka = rope_rotate(k, tab, 0);
  double worst = 0.0;
  for (std::size_t s : shifts) {
    const Mat qs = rope_rotate(q, tab, s), ks = rope_rotate(k, tab, s);
    for (std::size_t m = 0; m < n; ++m)
      for (std::size_t j = 0; j < n; ++j) {
        double a = 0.0, b = 0.0;
        for (std::size_t c = 0; c < d; ++c) a += double(qa(m, c)) * ka(j, c), b += double(qs(m, c)) * ks(j, c);
        worst = std::max(worst, std::abs(a - b));
      }
  }
  return judge_relative(shifts, worst);
}

BoundRebound rope_bound_rebound(std::size_t d, std::size_t from, std::size_t max_distance) {
  if (from > max_distance) throw std::invalid_argument("rope_bound_rebound: from > max_distance");
  const Vec b = rope_distance_bound(d, max_distance);
  BoundRebound r;
  r.d = d;
  r.at = from;
  for (std::size_t i = from; i <= max_distance; ++i)
    if (b(i) > b(r.at)) r.at = i;
  r.fraction = double(b(r.at)) / double(b(0));
  return r;
}

Verdict judge_rebound(const BoundRebound& small_d, const BoundRebound& big_d) {
  return judge_at_least(small_d.fraction - big_d.fraction, 0.10);
}

AlibiSlopeShape judge_alibi_slopes(const std::vector<double>& slopes) {
  AlibiSlopeShape s;
  s.heads = slopes.size();
  s.base_heads = s.heads == 0 ? 0 : 1;
  while (s.base_heads > 0 && 2 * s.base_heads <= s.heads) s.base_heads *= 2;
  s.slopes = slopes;
  double worst = 0.0;
  if (s.heads >= 2) {
    s.ratio = slopes[1] / slopes[0];
    for (std::size_t i = 2; i < s.heads; ++i)
      worst = std::max(worst, std::abs(slopes[i] / slopes[i - 1] / s.ratio - 1.0));
  }
  s.geometric = judge_at_most(worst, 1e-5);
  for (std::size_t i = 0; i < s.heads; ++i)
    if (slopes[i] > slopes[s.steepest]) s.steepest = i;
  return s;
}

AlibiSlopeShape alibi_slope_shape(std::size_t heads) {
  const Vec v = alibi_slopes(heads);
  return judge_alibi_slopes(std::vector<double>(v.begin(), v.end()));
}

ZeroSlopeCheck judge_zero_slope(double max_diff) { return {max_diff, judge_at_most(max_diff, 0.0)}; }

ZeroSlopeCheck alibi_zero_slope_check(const Mat& x, const SelfAttentionWeights& w) {
  const Mat none = positioned_self_attention(x, w, PositionEncoding::None);
  const Mat zero = positioned_self_attention(x, w, PositionEncoding::Alibi, {}, 0.0f);
  return judge_zero_slope(max_abs_diff(zero, none));
}

const ExtrapolationResult& ExtrapolationStudy::at(PositionEncoding e, std::size_t multiple) const {
  const auto it = results.find(e);
  const std::size_t i = multiple == 1 ? 0 : multiple == 2 ? 1 : multiple == 4 ? 2 : 3;
  if (it == results.end() || i >= it->second.size())
    throw std::out_of_range(fmt::format("extrapolation: no result for {} at {}·L", position_encoding_name(e), multiple));
  return it->second[i];
}

double ExtrapolationStudy::drop(PositionEncoding e) const { return at(e, 1).accuracy - at(e, 4).accuracy; }

double accuracy_standard_error(const ExtrapolationResult& r) {
  if (!r.available || r.scored == 0) return NAN;
  return std::sqrt(r.accuracy * (1.0 - r.accuracy) / double(r.scored));
}

ExtrapolationStudy judge_extrapolation(std::map<PositionEncoding, std::vector<ExtrapolationResult>> results) {
  ExtrapolationStudy s;
  s.results = std::move(results);
  auto has = [&](PositionEncoding e) {
    const auto it = s.results.find(e);
    return it != s.results.end() && it->second.size() == 3 && it->second[0].available && it->second[2].available;
  };
  s.rope_natural = judge_at_most(has(PositionEncoding::Rope) ? s.drop(PositionEncoding::Rope) : NAN, 0.02);
  if (has(PositionEncoding::Alibi) && has(PositionEncoding::Sinusoidal)) {
    double var = 0.0;
    for (PositionEncoding e : {PositionEncoding::Alibi, PositionEncoding::Sinusoidal})
      for (std::size_t m : {1u, 4u}) var += std::pow(accuracy_standard_error(s.at(e, m)), 2);
    s.alibi_over_sinusoidal =
        judge_greater(s.drop(PositionEncoding::Sinusoidal), s.drop(PositionEncoding::Alibi), 2.0 * std::sqrt(var));
  } else {
    s.alibi_over_sinusoidal = judge_greater(NAN, NAN, 0.0);
  }
  return s;
}

AlibiReach alibi_equal_score_reach(double slope, std::size_t length) {
  AlibiReach r;
  r.slope = slope;
  if (length == 0) return r;
  std::vector<double> scores(length), p(length);  // equal raw scores (0) plus the bias −slope·distance
  for (std::size_t j = 0; j < length; ++j) scores[j] = -slope * double(length - 1 - j);
  softmax_row(p.data(), scores.data(), nullptr, length);
  r.nearest = p[length - 1];
  r.farthest = p[0];
  r.ratio = r.nearest / r.farthest;
  r.uniform = 1.0 / double(length);
  r.nearly_blind = judge_at_most(r.ratio, 1.25);
  return r;
}

double uniform_guess_loss(std::size_t values) { return values ? std::log(double(values)) : NAN; }

std::vector<ConfidentlyWrong> confidently_wrong(const ExtrapolationStudy& s) {
  std::vector<ConfidentlyWrong> out;
  if (s.values == 0) return out;
  const double chance = 1.0 / double(s.values), chance_loss = uniform_guess_loss(s.values);
  for (const auto& [e, row] : s.results)
    for (std::size_t c = 0; c < row.size() && c < 3; ++c) {
      const ExtrapolationResult& r = row[c];
      if (r.available && r.loss > chance_loss && r.accuracy > chance)
        out.push_back({e, std::size_t(1) << c, r.loss, r.accuracy, chance_loss});
    }
  return out;
}

Verdict judge_none_vs_vote(const ExtrapolationResult& none, const ExtrapolationResult& vote) {
  if (!none.available || none.scored == 0 || vote.scored == 0) return judge_greater(NAN, NAN, 0.0);
  const double se = std::sqrt(std::pow(accuracy_standard_error(none), 2) + std::pow(accuracy_standard_error(vote), 2));
  return judge_greater(none.accuracy, vote.accuracy, 2.0 * se);
}

ExtrapolationStudy extrapolation_study(const ExtrapolationConfig& cfg,
                                       const std::function<std::unique_ptr<PositionModel>(PositionEncoding)>& model_for) {
  std::map<PositionEncoding, std::vector<ExtrapolationResult>> results;
  for (PositionEncoding e : all_position_encodings()) {
    const std::unique_ptr<PositionModel> model = model_for(e);
    std::vector<ExtrapolationResult> row = extrapolation_table_row(*model, cfg);
    for (const ExtrapolationResult& r : row)  // no verdict from a NaN or ±inf figure
      if (r.available && !(std::isfinite(r.loss) && std::isfinite(r.accuracy)))
        throw std::runtime_error(fmt::format("{}: loss {} at length {} is not finite; no verdict can be drawn from it",
                                             position_encoding_name(e), r.loss, r.length));
    results[e] = std::move(row);
  }
  ExtrapolationStudy s = judge_extrapolation(std::move(results));
  s.d_k = cfg.heads == 0 ? 0 : cfg.d_model / cfg.heads;
  s.values = cfg.values;
  s.order_blind = order_blind_vote_row(cfg);
  s.none_sees_order = judge_none_vs_vote(s.at(PositionEncoding::None, 1), s.order_blind.front());
  return s;
}

}  // namespace attn
