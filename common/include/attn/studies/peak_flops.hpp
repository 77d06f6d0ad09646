// The CPU's own roof: the peak rate of fused multiply-adds, measured by a loop whose accumulators
// never leave the registers (no loads, no stores), on the widest vector unit the CPU has. Nothing
// that computes in float — OpenBLAS's sgemm, chapter 11's tiled kernel — can run faster than this.
//   const std::string unit = widest_vector_unit();        // "avx512", "avx2", "sse" or "scalar"
//   const PeakFma p = peak_fma_gflops(unit, threads);    // p.gflops: 2 FLOPs per lane per FMA
#pragma once

#include <string>

namespace attn {

// What this CPU offers (x86-64: cpuid via the compiler's builtins; elsewhere all false).
struct CpuVectorUnits {
  bool avx512 = false;  // AVX-512 F, BW, DQ, VL
  bool avx2 = false;    // AVX2 and FMA3
  bool sse = false;     // SSE2 (every x86-64)
};
CpuVectorUnits cpu_vector_units();

// "avx512" | "avx2" | "sse" | "scalar": the widest unit cpu_vector_units() reports.
std::string widest_vector_unit();
// Lanes of float per instruction: 16, 8, 4, 1.
int vector_lanes(const std::string& unit);

struct PeakFma {
  std::string unit;      // the unit measured
  int threads = 1;       // threads that ran the loop at the same time
  int accumulators = 0;  // independent vector accumulators per thread
  long long iterations = 0;  // FMA steps of each accumulator
  double seconds = 0.0;  // the best round's time: gflops = flops() / seconds / 1e9
  double gflops = 0.0;   // all threads together, best of the timed rounds
  // threads · accumulators · lanes · 2 flops · iterations: the work of one round
  double flops() const;
  double checksum = 0.0; // sum of every lane's final accumulator of thread 0 (tests recompute it)
};

// Runs `iterations` steps of acc = acc·a + b on 16 (AVX-512) or 12 independent accumulators per thread, on
// `threads` threads at once, best of `rounds`. "sse" has no FMA: a multiply and an add (2 FLOPs).
// Throws std::invalid_argument for a unit this CPU lacks or an unknown name.
PeakFma peak_fma_gflops(const std::string& unit, int threads, long long iterations = 4'000'000, int rounds = 7);

// The clock the OS reports for this CPU, in GHz: the first "cpu MHz" line of /proc/cpuinfo (0 when
// there is none). It is the OS's figure, not a measurement of the clock under load.
double cpu_clock_ghz();
double cpu_clock_ghz_from_cpuinfo(const std::string& cpuinfo_text);  // the same from the file's text
// The CPU's name as the OS reports it: the first "model name" line of /proc/cpuinfo ("" when none).
std::string cpu_model_name();
std::string cpu_model_name_from_cpuinfo(const std::string& cpuinfo_text);  // the same from the file's text
// The one-minute load average (getloadavg): how many programs wanted a CPU; NaN when unknown.
double load_average();

// The loop's arithmetic in plain scalar code (std::fma per lane; "sse": multiply then add): the
// checksum peak_fma_gflops must reproduce exactly for the same unit and iteration count.
double peak_fma_reference_checksum(const std::string& unit, long long iterations);

}  // namespace attn
