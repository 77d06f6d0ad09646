// Chapter 05's checks and measurements (see attn/studies/position_study.hpp).
#include "attn/studies/position_study.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/studies/lookup.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

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
  return judge_extrapolation(std::move(results));
}

}  // namespace attn
