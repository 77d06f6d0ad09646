// Chapter 12 exercises — worked answers (compiled by default so the suite is green).
#include "exercises.hpp"

#include <cmath>

namespace ex12 {

attn::Vec scan_step(attn::Mat& state, float a, const attn::Vec& b, const attn::Vec& c, const attn::Vec& x) {
  const std::size_t n = state.shape(0), p = state.shape(1);
  attn::Vec y = xt::zeros<float>({p});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < p; ++j) {
      state(i, j) = a * state(i, j) + b(i) * x(j);
      y(j) += state(i, j) * c(i);
    }
  return y;
}

attn::Mat decay_mask(const attn::Vec& log_a) {
  const std::size_t n = log_a.size();
  attn::Mat l = xt::zeros<float>({n, n});
  for (std::size_t t = 0; t < n; ++t) {
    double sum = 0.0;  // log_a_{s+1} + … + log_a_t
    for (std::size_t s = t + 1; s-- > 0;) {
      l(t, s) = float(std::exp(sum));
      sum += log_a(s);
    }
  }
  return l;
}

}  // namespace ex12
