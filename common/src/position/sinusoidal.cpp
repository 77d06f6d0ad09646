// Sinusoidal positional encoding (see attn/position/sinusoidal.hpp).
#include "attn/position/sinusoidal.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attn {

namespace {
void expect_even(const char* fn, std::size_t d) {
  if (d == 0 || d % 2 != 0) throw std::invalid_argument(std::string(fn) + ": d must be even and > 0, got " + std::to_string(d));
}
double omega(std::size_t i, std::size_t d, double base) { return std::pow(base, -2.0 * double(i) / double(d)); }
}  // namespace

Vec sinusoidal_frequencies(std::size_t d, double base) {
  expect_even("sinusoidal_frequencies", d);
  Vec w = xt::zeros<float>({d / 2});
  for (std::size_t i = 0; i < d / 2; ++i) w(i) = float(omega(i, d, base));
  return w;
}

Mat sinusoidal_table(std::size_t n_positions, std::size_t d, double base) {
  expect_even("sinusoidal_table", d);
  Mat pe = xt::zeros<float>({n_positions, d});
  for (std::size_t pos = 0; pos < n_positions; ++pos)
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double a = double(pos) * omega(i, d, base);
      pe(pos, 2 * i) = float(std::sin(a));
      pe(pos, 2 * i + 1) = float(std::cos(a));
    }
  return pe;
}

Mat sinusoidal_shift(std::size_t d, long k, double base) {
  expect_even("sinusoidal_shift", d);
  Mat m = xt::zeros<float>({d, d});
  for (std::size_t i = 0; i < d / 2; ++i) {
    // sin(a + b) = sin a·cos b + cos a·sin b,  cos(a + b) = −sin a·sin b + cos a·cos b,  b = k·ω_i
    const double b = double(k) * omega(i, d, base);
    const float c = float(std::cos(b)), s = float(std::sin(b));
    m(2 * i, 2 * i) = c;
    m(2 * i, 2 * i + 1) = s;
    m(2 * i + 1, 2 * i) = -s;
    m(2 * i + 1, 2 * i + 1) = c;
  }
  return m;
}

Vec sinusoidal_similarity(std::size_t d, std::size_t max_distance, double base) {
  expect_even("sinusoidal_similarity", d);
  Vec s = xt::zeros<float>({max_distance + 1});
  for (std::size_t k = 0; k <= max_distance; ++k) {
    double acc = 0.0;  // Σ_i sin(a)sin(a+b) + cos(a)cos(a+b) = Σ_i cos(b)
    for (std::size_t i = 0; i < d / 2; ++i) acc += std::cos(double(k) * omega(i, d, base));
    s(k) = float(acc);
  }
  return s;
}

}  // namespace attn
