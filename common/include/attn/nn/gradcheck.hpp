// Finite-difference gradient checks in double: the independent referee of every hand-written
// backward pass. For each entry x_i, the central difference (L(x + ε e_i) − L(x − ε e_i)) / 2ε
// approximates ∂L/∂x_i with error O(ε²); we compare the whole vector with the analytic gradient:
//   rel_error = ‖g_analytic − g_numeric‖₂ / max(‖g_analytic‖₂ + ‖g_numeric‖₂, 1e-8)
// (the floor judges a gradient that is zero in theory, like a key bias, by its absolute error)
// Typical use: L = Σ G ⊙ layer(x) for a fixed random G, so dL/d(output) = G.
#pragma once

#include <cstddef>
#include <functional>

namespace attn {

struct GradCheckResult {
  double rel_error = 0.0;      // the figure tests assert on (< 1e-6)
  double max_abs_error = 0.0;  // worst single entry |analytic − numeric|
  std::size_t worst_index = 0;
  std::size_t count = 0;       // entries checked
};

// Perturbs x[0..n) in place (restoring each entry) and calls loss() twice per entry.
// analytic[0..n) is the backward pass's gradient for the same x.
GradCheckResult check_gradient(const std::function<double()>& loss, double* x, const double* analytic,
                               std::size_t n, double eps = 1e-5);

// Any double xtensor container (VecD, MatD, Tensor3D …) with an analytic gradient of the same size.
template <class C>
GradCheckResult check_gradient(const std::function<double()>& loss, C& x, const C& analytic,
                               double eps = 1e-5) {
  return check_gradient(loss, x.data(), analytic.data(), x.size(), eps);
}

}  // namespace attn
