// Chapter 11's measurements: one attention implementation at one size, timed (best of a few runs)
// and sized (working memory counted from the implementation's own formula, and the process's
// peak resident set measured around one run), as GFLOP/s and % of the same run's sgemm rate.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/attention/fast_attention.hpp"
#include "attn/tensor/memory.hpp"

namespace attn {

struct AttentionBenchRow {
  std::string impl;          // "naive" | "tiled"
  std::string path;          // tiled: "avx512" | "portable"; naive: "openblas"
  std::size_t n = 0, d = 0, heads = 0;
  bool causal = false;
  double seconds = 0.0;      // best of the timed runs
  double median_seconds = 0.0;  // the median of the timed runs (equal to seconds when runs == 1)
  int runs = 0;              // timed runs (see kRepeatAllS)
  double gflops = 0.0;       // attention_forward_flops / seconds
  double pct_of_sgemm = 0.0;
  double pct_of_peak = 0.0;  // of the CPU's FMA peak (attn/studies/peak_flops.hpp), when measured
  double peak_mib = 0.0;     // counted working memory beyond Q, K, V, O
  double rss_mib = -1.0;     // measured growth of the peak resident set over one run (-1: unavailable)
  bool skipped = false;
  std::string note;          // why it was skipped (English; reports compose their own from the fields below)
  bool over_limit = false;   // skipped: its n×n matrices need more than the limit (max_naive_mib) …
  double need_mib = 0.0, have_mib = 0.0;  // … need_mib against have_mib (the limit, or the memory available)
};

// How often bench_attention times a row: `repeats` runs when the first takes at most kRepeatAllS
// seconds, two when it takes at most kRepeatOnceS (so that every row but the slowest has a spread),
// else that one run.
inline constexpr double kRepeatAllS = 1.0, kRepeatOnceS = 5.0;

struct AttentionBenchOptions {
  int threads = 0;                 // 0: all cores (tiled threads; OpenBLAS keeps its own count)
  int repeats = 3;                 // timed runs (fewer when one run takes over ~1 s)
  double max_naive_mib = 1024.0;   // skip the naive path when its n×n matrices need more (8 heads: n ≤ 4096)
  FastIsa isa = FastIsa::Auto;
};

// Q, K, V ~ N(0, 1) of (heads, n, d), output preallocated; times one implementation.
AttentionBenchRow bench_attention(const std::string& impl, std::size_t n, std::size_t d, std::size_t heads,
                                  bool causal, double sgemm_gflops, const AttentionBenchOptions& opts);

// One CUDA kernel at one size, as chapter 11's GPU step measured it (a copy of
// attn::cuda::GpuBenchRow, which attn_core cannot see: the CUDA library is optional).
struct GpuAttentionRow {
  std::string kernel;        // "naive", "flash_fp32", "flash_bf16", "flash_hopper", "backward_fp32", "backward_bf16"
  std::size_t n = 0, d = 0, bh = 0;
  bool causal = false;
  double tflops = 0.0;
  std::string roof;          // "sgemm" | "bf16_gemm": the same run's cuBLAS GEMM it is compared with
  double pct_of_roof = 0.0;
};

// {"blas_kernel": …, "threads": …, "sgemm_gflops": …, "rows": [{"impl", "path", "threads", "n", "d",
// "heads", "causal", "gflops", "pct_of_sgemm", "peak_mib"}, …]} — skipped rows are left out; the top
// "threads" are OpenBLAS's (sgemm's and the naive rows' products), a row's "threads" what that row ran
// on: OpenBLAS's for naive, kernel_threads (the tiled kernel's own pool) for tiled; "path" the code
// it ran ("openblas", "avx512", "portable"). Only when gpu_rows is not empty: "gpu_rows":
// [{"kernel", "n", "d", "bh", "causal", "tflops", "roof", "pct_of_roof"}, …]. Only when
// fma_peak_gflops > 0: "fma_unit", "fma_peak_gflops" and each row's "pct_of_peak".
std::string attention_bench_json(const std::string& blas_kernel, int threads, double sgemm_gflops,
                                 const std::vector<AttentionBenchRow>& rows, int kernel_threads,
                                 const std::vector<GpuAttentionRow>& gpu_rows = {}, double fma_peak_gflops = 0.0,
                                 const std::string& fma_unit = "");

// Main-memory bandwidth, GB/s (bytes read + written by a 256 MiB copy, best of 3): the other
// roof — an n×n matrix written and read back is limited by it, not by the FMA units.
double copy_bandwidth_gbs(std::size_t bytes = std::size_t(256) << 20);

// (available_memory_bytes(), used to skip sizes that do not fit, is in attn/tensor/memory.hpp.)

}  // namespace attn
