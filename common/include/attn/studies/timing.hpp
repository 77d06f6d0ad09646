// Timing for chapters 06 and 11: best-of-N wall-clock time (the least disturbed run on a shared
// machine), the OpenBLAS sgemm roof, and the log-log slope of time against n.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace attn {

// Seconds of the fastest of `repeats` runs of fn, after one untimed warm-up run when warmup is
// true. Stops early once `budget_s` seconds have been spent (at least one timed run).
double best_seconds(const std::function<void()>& fn, int repeats = 3, bool warmup = true, double budget_s = 5.0);

// Best and median of several timed runs: the best is the least disturbed run; the gap to the
// median says how much the machine disturbed the others.
struct TimeSpread {
  double best = 0.0, median = 0.0;  // seconds
  int runs = 0;
};
// Times fn `repeats` times after one untimed warm-up run when warmup is true (at least one run;
// stops early once `budget_s` seconds have been spent).
TimeSpread time_runs(const std::function<void()>& fn, int repeats = 5, bool warmup = true, double budget_s = 5.0);
// Times a and b alternately (a, b, a, b, …), so that a change in the machine's load falls on both
// alike; one warm-up run of each first.
std::pair<TimeSpread, TimeSpread> time_interleaved(const std::function<void()>& a, const std::function<void()>& b,
                                                   int repeats = 7);

// OpenBLAS sgemm rate on (n × n)·(n × n), GFLOP/s (2n³ flops), best of `repeats`, with OpenBLAS's
// current thread count.
double sgemm_gflops(std::size_t n = 2048, int repeats = 3);

// Least-squares slope of log(y) against log(x): ~2 for work that grows as n², ~1 as n.
// Needs two or more points with x, y > 0; returns NaN otherwise.
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y);

// Lets OpenBLAS's worker threads stop spinning: after a multi-threaded OpenBLAS call they busy-wait
// for new work (OPENBLAS_THREAD_TIMEOUT, ~0.1 s by default) and slow down threads started right
// after it by 35-40% on a 2-core machine. Sleeps `seconds` (0.2 s is several timeouts).
void let_blas_threads_sleep(double seconds = 0.2);

}  // namespace attn
