// The CPU's FMA peak (see attn/studies/peak_flops.hpp).
#include "attn/studies/peak_flops.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ATTN_X86 1
#endif

namespace attn {

namespace {
// Independent accumulators: enough to hide the FMA latency (4–5 cycles × 2 ports), few enough to stay
// in registers with the two constants (32 zmm registers; 16 ymm/xmm).
constexpr int kAccWide = 16;
constexpr int kAccNarrow = 12;
int acc_count(const std::string& unit) { return unit == "avx512" ? kAccWide : kAccNarrow; }
constexpr float kA = 0.99999988f;  // acc·a + b converges to b / (1 − a): no overflow, no denormals
constexpr float kB = 1e-7f;

float start_value(int k, int lane) { return 0.5f + 0.01f * float(k) + 0.001f * float(lane); }

#ifdef ATTN_X86
__attribute__((target("avx512f"))) double loop_avx512(long long iters) {
  __m512 acc[kAccWide];
  #pragma GCC unroll 16
  for (int k = 0; k < kAccWide; ++k) {
    alignas(64) float init[16];
    for (int l = 0; l < 16; ++l) init[l] = start_value(k, l);
    acc[k] = _mm512_load_ps(init);
  }
  const __m512 a = _mm512_set1_ps(kA), b = _mm512_set1_ps(kB);
  for (long long i = 0; i < iters; ++i)
    #pragma GCC unroll 16
    for (int k = 0; k < kAccWide; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  double sum = 0;
  #pragma GCC unroll 16
  for (int k = 0; k < kAccWide; ++k) {
    alignas(64) float out[16];
    _mm512_store_ps(out, acc[k]);
    for (float x : out) sum += x;
  }
  return sum;
}

__attribute__((target("avx2,fma"))) double loop_avx2(long long iters) {
  __m256 acc[kAccNarrow];
  #pragma GCC unroll 16
  for (int k = 0; k < kAccNarrow; ++k) {
    alignas(32) float init[8];
    for (int l = 0; l < 8; ++l) init[l] = start_value(k, l);
    acc[k] = _mm256_load_ps(init);
  }
  const __m256 a = _mm256_set1_ps(kA), b = _mm256_set1_ps(kB);
  for (long long i = 0; i < iters; ++i)
    #pragma GCC unroll 16
    for (int k = 0; k < kAccNarrow; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  double sum = 0;
  #pragma GCC unroll 16
  for (int k = 0; k < kAccNarrow; ++k) {
    alignas(32) float out[8];
    _mm256_store_ps(out, acc[k]);
    for (float x : out) sum += x;
  }
  return sum;
}

double loop_sse(long long iters) {
  __m128 acc[kAccNarrow];
  #pragma GCC unroll 16
  for (int k = 0; k < kAccNarrow; ++k) {
    alignas(16) float init[4];
    for (int l = 0; l < 4; ++l) init[l] = start_value(k, l);
    acc[k] = _mm_load_ps(init);
  }
  const __m128 a = _mm_set1_ps(kA), b = _mm_set1_ps(kB);
  for (long long i = 0; i < iters; ++i)
    #pragma GCC unroll 16
    for (int k = 0; k < kAccNarrow; ++k) acc[k] = _mm_add_ps(_mm_mul_ps(acc[k], a), b);
  double sum = 0;
  #pragma GCC unroll 16
  for (int k = 0; k < kAccNarrow; ++k) {
    alignas(16) float out[4];
    _mm_store_ps(out, acc[k]);
    for (float x : out) sum += x;
  }
  return sum;
}
#endif

double loop_scalar(long long iters) {
  float acc[kAccNarrow];
  #pragma GCC unroll 16
  for (int k = 0; k < kAccNarrow; ++k) acc[k] = start_value(k, 0);
  for (long long i = 0; i < iters; ++i)
    #pragma GCC unroll 16
    for (int k = 0; k < kAccNarrow; ++k) acc[k] = std::fma(acc[k], kA, kB);
  double sum = 0;
  for (float x : acc) sum += x;
  return sum;
}

double run_loop(const std::string& unit, long long iters) {
#ifdef ATTN_X86
  if (unit == "avx512") return loop_avx512(iters);
  if (unit == "avx2") return loop_avx2(iters);
  if (unit == "sse") return loop_sse(iters);
#endif
  return loop_scalar(iters);
}
}  // namespace

CpuVectorUnits cpu_vector_units() {
  CpuVectorUnits u;
#ifdef ATTN_X86
  __builtin_cpu_init();
  u.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  u.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  u.sse = __builtin_cpu_supports("sse2");
#endif
  return u;
}

std::string widest_vector_unit() {
  const CpuVectorUnits u = cpu_vector_units();
  return u.avx512 ? "avx512" : u.avx2 ? "avx2" : u.sse ? "sse" : "scalar";
}

int vector_lanes(const std::string& unit) {
  if (unit == "avx512") return 16;
  if (unit == "avx2") return 8;
  if (unit == "sse") return 4;
  if (unit == "scalar") return 1;
  throw std::invalid_argument("vector_lanes: unknown vector unit '" + unit + "' (avx512, avx2, sse or scalar)");
}

double peak_fma_reference_checksum(const std::string& unit, long long iterations) {
  const int lanes = vector_lanes(unit);
  double sum = 0;
  for (int k = 0; k < acc_count(unit); ++k)
    for (int l = 0; l < lanes; ++l) {
      float x = start_value(k, l);
      for (long long i = 0; i < iterations; ++i) x = unit == "sse" ? x * kA + kB : std::fma(x, kA, kB);
      sum += x;
    }
  return sum;
}

double PeakFma::flops() const { return 2.0 * double(accumulators) * vector_lanes(unit) * double(iterations) * threads; }

double cpu_clock_ghz_from_cpuinfo(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const double mhz = std::strtod(line.c_str() + colon + 1, nullptr);
    return std::isfinite(mhz) && mhz > 0 ? mhz / 1000.0 : 0.0;
  }
  return 0.0;
}

double cpu_clock_ghz() {
  std::ifstream f("/proc/cpuinfo");
  if (!f) return 0.0;
  std::ostringstream text;
  text << f.rdbuf();
  return cpu_clock_ghz_from_cpuinfo(text.str());
}

std::string cpu_model_name_from_cpuinfo(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t from = line.find_first_not_of(" \t", colon + 1), to = line.find_last_not_of(" \t\r");
    return from == std::string::npos ? std::string() : line.substr(from, to - from + 1);
  }
  return "";
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  if (!f) return "";
  std::ostringstream text;
  text << f.rdbuf();
  return cpu_model_name_from_cpuinfo(text.str());
}

double load_average() {
  double load[1];
  return ::getloadavg(load, 1) == 1 ? load[0] : NAN;
}

PeakFma peak_fma_gflops(const std::string& unit, int threads, long long iterations, int rounds) {
  static_cast<void>(vector_lanes(unit));  // an unknown unit throws here
  const CpuVectorUnits u = cpu_vector_units();
  if ((unit == "avx512" && !u.avx512) || (unit == "avx2" && !u.avx2) || (unit == "sse" && !u.sse))
    throw std::invalid_argument("peak_fma_gflops: this CPU has no " + unit + " unit");
  if (threads < 1) throw std::invalid_argument("peak_fma_gflops: threads must be at least 1");
  if (iterations < 1 || rounds < 1) throw std::invalid_argument("peak_fma_gflops: iterations and rounds must be at least 1");
  PeakFma out;
  out.unit = unit;
  out.threads = threads;
  out.accumulators = acc_count(unit);
  out.iterations = iterations;
  const double flops = out.flops();
  std::vector<double> sums(std::size_t(threads), 0.0);
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([&, t] { sums[std::size_t(t)] = run_loop(unit, iterations); });
    sums[0] = run_loop(unit, iterations);
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out.seconds == 0.0 || s < out.seconds) out.seconds = s;
    out.gflops = flops / out.seconds / 1e9;
  }
  out.checksum = sums[0];
  return out;
}

}  // namespace attn
