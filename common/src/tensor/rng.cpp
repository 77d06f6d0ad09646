// PCG32 and a portable normal sampler (see attn/tensor/rng.hpp). Compiled with -ffp-contract=off so
// that a*b+c is never fused into one rounding on CPUs that have FMA: bits stay identical.
#include "attn/tensor/rng.hpp"

#include <cmath>

namespace attn {

Rng::Rng(std::uint64_t seed, std::uint64_t stream) {
  // The seeding procedure of the PCG reference implementation (pcg32_srandom_r).
  inc_ = (stream << 1u) | 1u;
  state_ = 0;
  next_u32();
  state_ += seed;
  next_u32();
}

std::uint32_t Rng::next_u32() {
  std::uint64_t old = state_;
  state_ = old * 6364136223846793005ULL + inc_;  // Knuth's MMIX LCG multiplier
  auto xorshifted = static_cast<std::uint32_t>(((old >> 18u) ^ old) >> 27u);
  auto rot = static_cast<std::uint32_t>(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

float Rng::uniform() {
  // Top 24 bits / 2^24: exactly representable, never reaches 1.
  return static_cast<float>(next_u32() >> 8) * (1.0f / 16777216.0f);
}

float Rng::uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

std::uint32_t Rng::below(std::uint32_t n) {
  // Rejection (as pcg32_boundedrand_r): drop the lowest 2^32 mod n values so every residue is equally likely.
  std::uint32_t threshold = (0u - n) % n;
  for (;;) {
    std::uint32_t r = next_u32();
    if (r >= threshold) return r % n;
  }
}

double portable_log(double x) {
  // x = m * 2^e with m in [0.5, 1): frexp is exact. Move m into [sqrt(1/2), sqrt(2)) so that
  // t = (m-1)/(m+1) is small (|t| < 0.172), then log(m) = 2 atanh(t) = 2 (t + t^3/3 + t^5/5 + …).
  int e = 0;
  double m = std::frexp(x, &e);
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e -= 1;
  }
  double t = (m - 1.0) / (m + 1.0);
  double t2 = t * t;
  // |t|^(2k+1)/(2k+1) < 1e-17 by k = 10: 11 terms reach double precision.
  double term = t, sum = 0.0;
  for (int k = 0; k <= 10; ++k) {
    sum += term / static_cast<double>(2 * k + 1);
    term *= t2;
  }
  const double ln2 = 0.69314718055994530942;
  return 2.0 * sum + static_cast<double>(e) * ln2;
}

float Rng::normal() {
  // Marsaglia polar method: (u, v) uniform in the unit disc gives two independent normals
  // u*sqrt(-2 ln s / s) and v*sqrt(-2 ln s / s), s = u^2 + v^2. sqrt is correctly rounded by
  // IEEE 754, so only log needed a portable version.
  if (has_spare_) {
    has_spare_ = false;
    return static_cast<float>(spare_);
  }
  for (;;) {
    // 32-bit uniforms in (-1, 1), computed in double.
    double u = static_cast<double>(next_u32()) * (2.0 / 4294967296.0) - 1.0;
    double v = static_cast<double>(next_u32()) * (2.0 / 4294967296.0) - 1.0;
    double s = u * u + v * v;
    if (s >= 1.0 || s == 0.0) continue;
    double f = std::sqrt(-2.0 * portable_log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return static_cast<float>(u * f);
  }
}

Mat Rng::normal_mat(std::size_t rows, std::size_t cols, float stddev) {
  Mat m({rows, cols});
  for (auto& x : m) x = stddev * normal();
  return m;
}

Vec Rng::normal_vec(std::size_t n, float stddev) {
  Vec v = xt::zeros<float>({n});
  for (auto& x : v) x = stddev * normal();
  return v;
}

Tensor3 Rng::normal_tensor3(std::size_t a, std::size_t b, std::size_t c, float stddev) {
  Tensor3 t({a, b, c});
  for (auto& x : t) x = stddev * normal();
  return t;
}

Mat Rng::uniform_mat(std::size_t rows, std::size_t cols, float lo, float hi) {
  Mat m({rows, cols});
  for (auto& x : m) x = uniform(lo, hi);
  return m;
}

}  // namespace attn
