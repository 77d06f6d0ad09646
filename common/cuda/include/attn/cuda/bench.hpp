// Measuring the CUDA attention ladder: the roof (cuBLAS GEMM in FP32 and in BF16 with FP32
// accumulation), then each kernel's TFLOP/s for one (n, d, mask) problem, timed with CUDA events
// after warm-up, the median of the repeats. Used by bench/bench_cuda.cu (the full table, JSON)
// and by chapter 11's GPU step. Plain C++ types only (no CUDA, xtensor or fmt headers), so a
// host program compiled by any C++17 compiler can call it; every CUDA/cuBLAS call inside is
// checked and a failure throws std::runtime_error. Call attn::cuda::device_status() first:
// these functions assume a device.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace attn::cuda {

struct GpuBenchConfig {
  std::vector<int> n = {1024, 2048, 4096, 8192, 16384, 32768};  // sequence lengths
  std::vector<int> d = {64, 128};  // head sizes (the tiled kernels support 64 and 128)
  bool full = true;                // time the unmasked problem
  bool causal = false;             // time the causal mask too (FLOPs counted as half of full)
  int repeats = 5;                 // timed runs per kernel; the median is reported
  int warmup = 1;                  // untimed runs first (first-launch costs, clocks ramping up)
  long long tokens = 262144;       // BH · n per problem: 256k query rows keep 4096 blocks in flight at any n
  double naive_gib = 4.0;          // the naive path's n × n scores per head must fit in this budget
  bool backward = true;            // time the backwards (rungs 4 and 6)
  bool hopper = true;              // time rung 5 where this device and build can run it
  int gemm = 8192;                 // roof GEMM size gemm³
};

// The same run's cuBLAS throughput, the roof each kernel is compared with.
struct GpuRoof {
  int gemm = 0;        // N of the N³ GEMM
  double sgemm = 0.0;  // TFLOP/s, CUBLAS_COMPUTE_32F (true FP32, no TF32): the roof of rungs 1, 2, 4
  double bf16 = 0.0;   // TFLOP/s, BF16 in/out, FP32 accumulation: the roof of rungs 3, 5 and 6
};

// One problem size, every rung. TFLOP/s count the useful forward FLOPs 4·n²·d per head (half
// with the causal mask); the backward counts 2.5 × the forward (FlashAttention-2's convention).
struct GpuBenchSize {
  int d = 0, n = 0;
  int bh = 0;        // batch × heads of the fused kernels: max(1, tokens / n)
  int bh_naive = 0;  // heads the naive path took (its n × n scores must fit in naive_gib)
  bool causal = false;
  // TFLOP/s, −1 = not run
  double naive = -1, flash_fp32 = -1, flash_bf16 = -1, flash_hopper = -1, backward_fp32 = -1, backward_bf16 = -1;
  double check_fp32 = -1, check_bf16 = -1, check_hopper = -1;  // max|Δ|/max|naive| on ≤ 8 heads, −1: none
  std::string note;                         // e.g. why the naive path ran on fewer heads
};

// One kernel at one size, for tables that list kernels as rows (chapter 11).
struct GpuBenchRow {
  std::string kernel;  // "naive" | "flash_fp32" | "flash_bf16" | "flash_hopper" | "backward_fp32" |
                       // "backward_bf16" (the JSON keys)
  int n = 0, d = 0, bh = 0;
  bool causal = false;
  double tflops = 0.0;
  std::string roof;    // "sgemm" | "bf16_gemm": which roof the percentage is of
  double pct_of_roof = 0.0;
};

// cuBLAS GEMM of size config.gemm³ in FP32 and BF16, config.warmup + 1 untimed runs each.
GpuRoof measure_roofs(const GpuBenchConfig& config);

// Every (d, n, mask) of the config, d outermost, full before causal. on_size (optional) is called
// after each size, e.g. to print progress.
std::vector<GpuBenchSize> run_gpu_sweep(const GpuBenchConfig& config,
                                        const std::function<void(const GpuBenchSize&)>& on_size = {});

// One row per kernel that ran, with its % of the matching roof.
std::vector<GpuBenchRow> gpu_bench_rows(const std::vector<GpuBenchSize>& sizes, const GpuRoof& roof);

}  // namespace attn::cuda
