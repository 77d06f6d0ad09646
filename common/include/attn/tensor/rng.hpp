// A deterministic random number generator: the same seed gives the same bits on any machine,
// compiler and standard library. std::normal_distribution is deliberately not used (libstdc++
// and libc++ produce different sequences); normals come from the Marsaglia polar method with a
// log written out in plain arithmetic (rng.cpp is compiled without FMA contraction).
#pragma once

#include <cstdint>

#include "attn/tensor/tensor.hpp"

namespace attn {

// PCG32 (O'Neill 2014, "PCG: A Family of Simple Fast Space-Efficient Statistically Good
// Algorithms for Random Number Generation"): 64-bit LCG state, 32-bit permuted output.
class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 54);

  std::uint32_t next_u32();
  // Uniform in [0, 1) with 24 random bits: every value is an exact float.
  float uniform();
  // Uniform in [lo, hi).
  float uniform(float lo, float hi);
  // Standard normal N(0, 1), deterministic bit for bit.
  float normal();
  // Uniform integer in [0, n) without modulo bias.
  std::uint32_t below(std::uint32_t n);

  // Containers filled from the generator.
  Mat normal_mat(std::size_t rows, std::size_t cols, float stddev = 1.0f);
  Vec normal_vec(std::size_t n, float stddev = 1.0f);
  Tensor3 normal_tensor3(std::size_t a, std::size_t b, std::size_t c, float stddev = 1.0f);
  Mat uniform_mat(std::size_t rows, std::size_t cols, float lo, float hi);

 private:
  std::uint64_t state_ = 0;
  std::uint64_t inc_ = 0;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Natural log computed with + - * / only (so results do not depend on the C library's log).
// x must be positive and finite. Exposed for tests.
double portable_log(double x);

}  // namespace attn
