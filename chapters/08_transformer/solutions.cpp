// Chapter 08 exercises — one worked answer each (compiled by default, so the suite is green).
#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises.hpp"

namespace ex08 {

attn::Mat causal_self_attention(const attn::Mat& q, const attn::Mat& k, const attn::Mat& v) {
  const std::size_t t = q.shape(0), d = q.shape(1);
  attn::Mat out = xt::zeros<float>({t, v.shape(1)});
  const double scale = 1.0 / std::sqrt(double(d));
  for (std::size_t i = 0; i < t; ++i) {
    std::vector<double> s(i + 1);  // only the visible keys j ≤ i: the masked ones have weight 0
    double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
    for (std::size_t j = 0; j <= i; ++j) {
      for (std::size_t c = 0; c < d; ++c) s[j] += double(q(i, c)) * k(j, c);
      s[j] *= scale;
      mx = std::max(mx, s[j]);
    }
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (std::size_t j = 0; j <= i; ++j)
      for (std::size_t c = 0; c < v.shape(1); ++c) out(i, c) += float(s[j] / sum * v(j, c));
  }
  return out;
}

std::vector<attn::BeamCandidate> beam_step(const std::vector<double>& cum, const attn::Mat& logp, std::size_t width) {
  std::vector<attn::BeamCandidate> all;
  for (std::size_t p = 0; p < cum.size(); ++p)
    if (std::isfinite(cum[p]))
      for (std::size_t t = 0; t < logp.shape(1); ++t) all.push_back({p, int(t), cum[p] + double(logp(p, t))});
  std::sort(all.begin(), all.end(), [](const attn::BeamCandidate& a, const attn::BeamCandidate& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.parent != b.parent ? a.parent < b.parent : a.token < b.token;
  });
  if (all.size() > width) all.resize(width);
  return all;
}

}  // namespace ex08
