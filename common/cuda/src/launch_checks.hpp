// Shared by the launchers: precondition checks that throw std::invalid_argument with the
// function's name and the offending values, so a wrong call fails loudly on the host instead of
// reading out of bounds on the device.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn::cuda::detail {

inline void require(bool ok, const char* function, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string(function) + ": " + what);
}

inline std::string sizes_string(int bh, int n_q, int n_k, int d) {
  return "bh=" + std::to_string(bh) + ", n_q=" + std::to_string(n_q) + ", n_k=" + std::to_string(n_k) +
         ", d=" + std::to_string(d);
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Sizes every kernel needs: all positive; heads go in gridDim.y, whose limit is 65535.
inline void require_sizes(const char* function, int bh, int n_q, int n_k, int d) {
  require(bh >= 1 && n_q >= 1 && n_k >= 1 && d >= 1, function,
          "all sizes must be >= 1 (" + sizes_string(bh, n_q, n_k, d) + ")");
  require(bh <= 65535, function, "bh must be <= 65535 (it is gridDim.y), got " + std::to_string(bh));
}

// The tiled kernels are compiled for two head sizes only (templates on d keep every loop
// bound a compile-time constant, so the register arrays stay in registers).
inline void require_tiled_d(const char* function, int d) {
  require(d == 64 || d == 128, function, "d must be 64 or 128 for the tiled kernels, got " + std::to_string(d));
}

inline void require_device_pointer(const char* function, const char* name, const void* p) {
  require(p != nullptr, function, std::string(name) + " is null");
  require(aligned16(p), function, std::string(name) + " must be 16-byte aligned (vector loads)");
}

// The BF16 kernels keep the running max of the raw scores and fold the scale into one FFMA per
// score (exp2(c·s − c·m)); that reads the max of c·s off the max of s, which needs c > 0.
inline void require_positive_scale(const char* function, float scale) {
  require(scale > 0.0f && scale < INFINITY, function,
          "scale must be positive and finite, got " + std::to_string(scale));
}

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

// exp(x) = 2^(x·log2 e): the kernels fold log2 e into the scale once and then use exp2f, which
// maps to one hardware instruction (MUFU.EX2).
constexpr float kLog2e = 1.4426950408889634f;

}  // namespace attn::cuda::detail
