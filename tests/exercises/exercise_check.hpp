// Helpers for exercise checks. A learner's stub throws attn::NotImplemented; LEARNER_CALL turns
// that into one clear failure ("not implemented yet — hint …") instead of a crash report, and
// diagnose() prints a message that names the usual mistake when a property does not hold.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "attn/present/exercise.hpp"
#include "attn/tensor/tensor.hpp"

// Evaluates expr into `var`; a NotImplemented stub fails the test case with its hint and stops it.
#define LEARNER_CALL(var, expr)                                   \
  decltype(expr) var{};                                           \
  try {                                                           \
    var = (expr);                                                 \
  } catch (const attn::NotImplemented& e) {                       \
    FAIL(std::string(e.what()));                                  \
  } catch (const std::exception& e) {                             \
    FAIL("your code threw an exception: " << std::string(e.what())); \
  }

namespace exercise_check {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

inline bool all_finite(const attn::Mat& m) {
  for (float x : m)
    if (!std::isfinite(x)) return false;
  return true;
}

inline double max_diff(const attn::Mat& a, const attn::Mat& b) {
  if (a.shape(0) != b.shape(0) || a.shape(1) != b.shape(1)) return INFINITY;
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = std::abs(double(a.data()[i]) - double(b.data()[i]));
    if (std::isnan(x)) return INFINITY;
    d = std::max(d, x);
  }
  return d;
}

}  // namespace exercise_check
