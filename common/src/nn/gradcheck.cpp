// Central finite differences in double (see attn/nn/gradcheck.hpp).
#include "attn/nn/gradcheck.hpp"

#include <algorithm>
#include <cmath>

namespace attn {

GradCheckResult check_gradient(const std::function<double()>& loss, double* x, const double* analytic,
                               std::size_t n, double eps) {
  GradCheckResult r;
  r.count = n;
  double diff2 = 0.0, a2 = 0.0, n2 = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double saved = x[i];
    x[i] = saved + eps;
    const double up = loss();
    x[i] = saved - eps;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * eps);
    const double d = analytic[i] - numeric;
    diff2 += d * d;
    a2 += analytic[i] * analytic[i];
    n2 += numeric * numeric;
    if (std::abs(d) > r.max_abs_error) {
      r.max_abs_error = std::abs(d);
      r.worst_index = i;
    }
  }
  const double denom = std::sqrt(a2) + std::sqrt(n2);
  // A gradient that is exactly zero in theory (e.g. a key bias, which softmax ignores) is judged
  // by its absolute error: the denominator never drops below kFloor.
  constexpr double kFloor = 1e-8;
  r.rel_error = std::sqrt(diff2) / std::max(denom, kFloor);
  return r;
}

}  // namespace attn
