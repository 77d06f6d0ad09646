// Chapter 05 — worked solutions in plain loops. (The library's versions: common/src/position/sinusoidal.cpp,
// rope.cpp, alibi.cpp.)
#include <cmath>
#include <cstdlib>

#include "exercises.hpp"

namespace ex05 {

attn::Mat sinusoidal_table(std::size_t n_positions, std::size_t d) {
  attn::Mat pe = xt::zeros<float>({n_positions, d});
  for (std::size_t pos = 0; pos < n_positions; ++pos)
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double angle = double(pos) / std::pow(10000.0, 2.0 * double(i) / double(d));
      pe(pos, 2 * i) = float(std::sin(angle));
      pe(pos, 2 * i + 1) = float(std::cos(angle));
    }
  return pe;
}

attn::Mat rope_rotate(const attn::Mat& x, std::size_t start) {
  const std::size_t T = x.shape(0), d = x.shape(1);
  attn::Mat y = xt::zeros<float>({T, d});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double angle = double(start + t) * std::pow(10000.0, -2.0 * double(i) / double(d));
      const double c = std::cos(angle), s = std::sin(angle), x0 = x(t, 2 * i), x1 = x(t, 2 * i + 1);
      y(t, 2 * i) = float(x0 * c - x1 * s);
      y(t, 2 * i + 1) = float(x0 * s + x1 * c);
    }
  return y;
}

attn::Tensor3 alibi_bias(std::size_t n_heads, std::size_t n) {
  attn::Tensor3 b = xt::zeros<float>({n_heads, n, n});
  for (std::size_t h = 0; h < n_heads; ++h) {
    const double m = std::pow(2.0, -8.0 * double(h + 1) / double(n_heads));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) b(h, i, j) = float(-m * double(i > j ? i - j : j - i));
  }
  return b;
}

}  // namespace ex05
