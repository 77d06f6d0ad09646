// Chapter 02 — worked solutions in plain loops. (The library's batched version is
// common/src/attention/luong_attention.cpp: luong_scores_forward and luong_forward.)
#include <cmath>
#include <limits>

#include "exercises.hpp"

namespace ex02 {

attn::Vec luong_general_scores(const attn::Vec& h_t, const attn::Mat& H, const attn::Mat& w_a) {
  const std::size_t s = H.shape(0), he = H.shape(1);
  attn::Vec q = xt::zeros<float>({he});  // h_t·W_a
  for (std::size_t k = 0; k < he; ++k)
    for (std::size_t i = 0; i < h_t.size(); ++i) q(k) += h_t(i) * w_a(i, k);
  attn::Vec out = xt::zeros<float>({s});
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t k = 0; k < he; ++k) out(j) += q(k) * H(j, k);
  return out;
}

double local_p_position(const attn::Vec& h_t, const attn::Mat& w_p, const attn::Vec& v_p, std::size_t src_len) {
  double u = 0.0;
  for (std::size_t k = 0; k < v_p.size(); ++k) {
    double pre = 0.0;
    for (std::size_t i = 0; i < h_t.size(); ++i) pre += double(h_t(i)) * double(w_p(i, k));
    u += double(v_p(k)) * std::tanh(pre);
  }
  return double(src_len) / (1.0 + std::exp(-u));
}

attn::Vec local_p_weights(const attn::Vec& scores, double p_t, std::size_t half_width) {
  const std::size_t s = scores.size();
  const double d = double(half_width), sigma = d / 2.0;
  auto inside = [&](std::size_t j) { return std::abs(double(j) - p_t) <= d; };
  double m = -std::numeric_limits<double>::infinity(), sum = 0.0;
  for (std::size_t j = 0; j < s; ++j) if (inside(j)) m = std::max(m, double(scores(j)));
  attn::Vec alpha = xt::zeros<float>({s});
  if (std::isinf(m)) return alpha;  // empty window
  for (std::size_t j = 0; j < s; ++j) if (inside(j)) sum += std::exp(double(scores(j)) - m);
  for (std::size_t j = 0; j < s; ++j) {
    if (!inside(j)) continue;
    const double dist = double(j) - p_t;
    alpha(j) = float(std::exp(double(scores(j)) - m) / sum * std::exp(-dist * dist / (2.0 * sigma * sigma)));
  }
  return alpha;
}

}  // namespace ex02
