// Chapter 09 exercises — worked answers (compiled by default so the suite is green).
#include <cmath>
#include <vector>

#include "exercises.hpp"

namespace ex09 {

attn::Mat rmsnorm(const attn::Mat& x, const attn::Vec& gamma, float eps) {
  const std::size_t n = x.shape(0), d = x.shape(1);
  attn::Mat y = xt::zeros<float>({n, d});
  for (std::size_t i = 0; i < n; ++i) {
    double ss = 0.0;
    for (std::size_t j = 0; j < d; ++j) ss += double(x(i, j)) * x(i, j);
    const double r = 1.0 / std::sqrt(ss / double(d) + double(eps));
    for (std::size_t j = 0; j < d; ++j) y(i, j) = float(x(i, j) * r * gamma(j));
  }
  return y;
}

namespace {
// Rotates every head of a (heads·dh,) vector by RoPE at position pos (adjacent pairs).
attn::Vec rotate(const attn::Vec& x, std::size_t heads, std::size_t pos) {
  const std::size_t dh = x.size() / heads;
  attn::Vec y = x;
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < dh / 2; ++i) {
      const double a = double(pos) * std::pow(10000.0, -2.0 * double(i) / double(dh));
      const double x0 = x(h * dh + 2 * i), x1 = x(h * dh + 2 * i + 1);
      y(h * dh + 2 * i) = float(x0 * std::cos(a) - x1 * std::sin(a));
      y(h * dh + 2 * i + 1) = float(x0 * std::sin(a) + x1 * std::cos(a));
    }
  return y;
}
}  // namespace

attn::Vec decode_step(attn::Mat& k_cache, attn::Mat& v_cache, std::size_t pos, const attn::Vec& q,
                      const attn::Vec& k, const attn::Vec& v, std::size_t n_heads, std::size_t n_kv_heads) {
  const std::size_t dh = q.size() / n_heads, group = n_heads / n_kv_heads;
  const attn::Vec qr = rotate(q, n_heads, pos), kr = rotate(k, n_kv_heads, pos);
  for (std::size_t j = 0; j < k.size(); ++j) {
    k_cache(pos, j) = kr(j);
    v_cache(pos, j) = v(j);
  }
  attn::Vec out = xt::zeros<float>({q.size()});
  std::vector<double> s(pos + 1);
  for (std::size_t h = 0; h < n_heads; ++h) {
    const std::size_t g = h / group;
    double mx = -1e300, sum = 0.0;
    for (std::size_t j = 0; j <= pos; ++j) {
      double dot = 0.0;
      for (std::size_t e = 0; e < dh; ++e) dot += double(qr(h * dh + e)) * k_cache(j, g * dh + e);
      s[j] = dot / std::sqrt(double(dh));
      mx = std::max(mx, s[j]);
    }
    for (auto& x : s) sum += x = std::exp(x - mx);
    for (std::size_t j = 0; j <= pos; ++j)
      for (std::size_t e = 0; e < dh; ++e) out(h * dh + e) += float(s[j] / sum * v_cache(j, g * dh + e));
  }
  return out;
}

}  // namespace ex09
