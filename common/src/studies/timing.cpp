// Best-of-N timing, the sgemm roof, log-log slopes (see attn/studies/timing.hpp).
#include "attn/studies/timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

double best_seconds(const std::function<void()>& fn, int repeats, bool warmup, double budget_s) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  if (warmup) fn();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = clock::now();
    fn();
    const auto t1 = clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    if (std::chrono::duration<double>(t1 - start).count() > budget_s) break;
  }
  return best;
}

double sgemm_gflops(std::size_t n, int repeats) {
  Rng rng(1);
  Mat a = rng.normal_mat(n, n), b = rng.normal_mat(n, n);
  Mat c = xt::zeros<float>({n, n});
  const double s = best_seconds([&] { gemm(c, a, b); }, repeats);
  return 2.0 * double(n) * double(n) * double(n) / s * 1e-9;
}

double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) continue;
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly;
    ++m;
  }
  if (m < 2) return std::numeric_limits<double>::quiet_NaN();
  const double den = m * sxx - sx * sx;
  return den == 0 ? std::numeric_limits<double>::quiet_NaN() : (m * sxy - sx * sy) / den;
}

void let_blas_threads_sleep(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace attn
