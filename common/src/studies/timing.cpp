// Best-of-N timing, the sgemm roof, log-log slopes (see attn/studies/timing.hpp).
#include "attn/studies/timing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_of(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
TimeSpread spread_of(std::vector<double> t) {
  TimeSpread s;
  s.runs = int(t.size());
  if (t.empty()) return s;
  std::sort(t.begin(), t.end());
  s.best = t.front();
  s.median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  return s;
}
}  // namespace

TimeSpread time_runs(const std::function<void()>& fn, int repeats, bool warmup, double budget_s) {
  const auto start = Clock::now();
  if (warmup) fn();
  std::vector<double> t;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    t.push_back(seconds_of(fn));
    if (std::chrono::duration<double>(Clock::now() - start).count() > budget_s) break;
  }
  return spread_of(t);
}

double best_seconds(const std::function<void()>& fn, int repeats, bool warmup, double budget_s) {
  return time_runs(fn, repeats, warmup, budget_s).best;
}

std::pair<TimeSpread, TimeSpread> time_interleaved(const std::function<void()>& a, const std::function<void()>& b,
                                                   int repeats) {
  a();
  b();
  std::vector<double> ta, tb;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    ta.push_back(seconds_of(a));
    tb.push_back(seconds_of(b));
  }
  return {spread_of(ta), spread_of(tb)};
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
