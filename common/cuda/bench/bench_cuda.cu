// Benchmark of the CUDA attention ladder, in one run: first the roof (cuBLAS SGEMM and BF16 GEMM
// with FP32 accumulation, 8192³), then every kernel's TFLOP/s and its % of the matching roof for
// each n and d. Timed with CUDA events after warm-up; the median of the repeats is reported.
//   attn_cuda_bench [--n 1024,2048,...] [--d 64,128] [--causal] [--repeats 5] [--tokens 262144]
//                   [--naive-gib 4] [--no-backward] [--json FILE]
// Without a device it prints "skipped: no CUDA device (<why>)" and exits 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "attn/cuda/attention.hpp"
#include "attn/cuda/buffer.hpp"
#include "attn/cuda/check.hpp"

namespace {

using attn::cuda::CublasHandle;
using attn::cuda::DeviceBuffer;
using bf16 = __nv_bfloat16;

// ---- options ---------------------------------------------------------------------------------

struct Options {
  std::vector<int> n = {1024, 2048, 4096, 8192, 16384, 32768};
  std::vector<int> d = {64, 128};
  bool causal = false;        // also time the causal mask (FLOPs counted as half)
  int repeats = 5;            // timed runs per kernel; the median is reported
  int warmup = 1;             // untimed runs first (first-launch costs, clocks ramping up)
  long long tokens = 262144;  // BH · n per problem: 256k query rows keep 4096 blocks in flight at any n
  double naive_gib = 4.0;     // the naive path's n × n scores per head must fit in this budget
  bool backward = true;
  int gemm = 8192;            // roof GEMM size
  std::string json;
};

void usage() {
  std::printf(
      "attn_cuda_bench — cuBLAS roof, then each attention kernel's TFLOP/s and %% of the roof\n"
      "  --n LIST        sequence lengths (default 1024,2048,4096,8192,16384,32768)\n"
      "  --d LIST        head sizes, 64 and/or 128 (default 64,128)\n"
      "  --causal        also time the causal mask (FLOPs counted as half of full)\n"
      "  --repeats R     timed runs per kernel, median reported (default 5)\n"
      "  --warmup W      untimed runs before timing (default 1)\n"
      "  --tokens T      BH·n per problem, BH = max(1, T/n) (default 262144)\n"
      "  --naive-gib G   memory budget for the naive path's scores (default 4)\n"
      "  --gemm N        roof GEMM size N³ (default 8192)\n"
      "  --no-backward   skip rung 4\n"
      "  --json FILE     also write the results as JSON\n");
}

std::vector<int> parse_list(const char* flag, const char* text) {
  std::vector<int> out;
  std::string s(text);
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t comma = s.find(',', pos);
    const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > (1 << 20)) {
      std::fprintf(stderr, "%s: '%s' is not a list of positive integers\n", flag, text);
      std::exit(2);
    }
    out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--n") {
      o.n = parse_list("--n", value("--n"));
    } else if (a == "--d") {
      o.d = parse_list("--d", value("--d"));
      for (int d : o.d)
        if (d != 64 && d != 128) {
          std::fprintf(stderr, "--d: the tiled kernels support 64 and 128, got %d\n", d);
          std::exit(2);
        }
    } else if (a == "--causal") {
      o.causal = true;
    } else if (a == "--repeats") {
      o.repeats = std::max(1, std::atoi(value("--repeats")));
    } else if (a == "--warmup") {
      o.warmup = std::max(0, std::atoi(value("--warmup")));
    } else if (a == "--tokens") {
      o.tokens = std::max(1LL, std::atoll(value("--tokens")));
    } else if (a == "--naive-gib") {
      o.naive_gib = std::atof(value("--naive-gib"));
    } else if (a == "--gemm") {
      o.gemm = std::max(256, std::atoi(value("--gemm")));
    } else if (a == "--no-backward") {
      o.backward = false;
    } else if (a == "--json") {
      o.json = value("--json");
    } else {
      std::fprintf(stderr, "unknown option %s (see --help)\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

// ---- device helpers --------------------------------------------------------------------------

// Uniform in [−√3, √3) (variance 1) from a hash of the index: fills gigabytes without a host copy.
__global__ void fill_uniform_kernel(float* x, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * 0x1.0p-24f;  // [0, 1)
    x[i] = (2.0f * u - 1.0f) * 1.7320508f;
  }
}
__global__ void to_bf16_kernel(bf16* y, const float* x, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    y[i] = __float2bfloat16(x[i]);
}
void fill_uniform(DeviceBuffer<float>& b, std::uint64_t seed) {
  fill_uniform_kernel<<<1024, 256>>>(b.get(), b.size(), seed);
  ATTN_CUDA_CHECK_LAUNCH("fill_uniform_kernel");
}
void to_bf16(DeviceBuffer<bf16>& y, const DeviceBuffer<float>& x) {
  to_bf16_kernel<<<1024, 256>>>(y.get(), x.get(), x.size());
  ATTN_CUDA_CHECK_LAUNCH("to_bf16_kernel");
}

// Median milliseconds of `repeats` runs, each bracketed by CUDA events, after `warmup` runs.
double time_ms(const std::function<void()>& run, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) run();
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  ATTN_CUDA_CHECK(cudaEventCreate(&start));
  ATTN_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    ATTN_CUDA_CHECK(cudaEventRecord(start));
    run();
    ATTN_CUDA_CHECK(cudaEventRecord(stop));
    ATTN_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0.0f;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  ATTN_CUDA_CHECK(cudaEventDestroy(start));
  ATTN_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double tflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e12; }

// max |a − b| / max |b| over the first `count` elements.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b, std::size_t count) {
  double diff = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a[i] - b[i])));
    ref = std::max(ref, static_cast<double>(std::abs(b[i])));
    if (!(a[i] == a[i])) return INFINITY;  // NaN
  }
  return ref > 0.0 ? diff / ref : diff;
}

// ---- roof ------------------------------------------------------------------------------------

struct Roof {
  double sgemm = 0.0, bf16 = 0.0;  // TFLOP/s
};

Roof measure_roof(const Options& o, cublasHandle_t cublas) {
  const int n = o.gemm;
  const std::size_t count = static_cast<std::size_t>(n) * n;
  DeviceBuffer<float> a(count), b(count), c(count);
  DeviceBuffer<bf16> ah(count), bh(count), ch(count);
  fill_uniform(a, 1);
  fill_uniform(b, 2);
  to_bf16(ah, a);
  to_bf16(bh, b);
  const float one = 1.0f, zero = 0.0f;
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  Roof r;
  // CUBLAS_COMPUTE_32F: true FP32 (no TF32), the same arithmetic as rungs 1, 2 and 4.
  r.sgemm = tflops(flops, time_ms([&] {
                     ATTN_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.get(), CUDA_R_32F,
                                                    n, b.get(), CUDA_R_32F, n, &zero, c.get(), CUDA_R_32F, n,
                                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                   }, o.warmup + 1, o.repeats));
  // BF16 in, BF16 out, FP32 accumulation: the arithmetic of rung 3.
  r.bf16 = tflops(flops, time_ms([&] {
                    ATTN_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, ah.get(), CUDA_R_16BF,
                                                   n, bh.get(), CUDA_R_16BF, n, &zero, ch.get(), CUDA_R_16BF, n,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                  }, o.warmup + 1, o.repeats));
  return r;
}

// ---- one problem size ------------------------------------------------------------------------

struct Row {
  int d = 0, n = 0, bh = 0, bh_naive = 0;
  bool causal = false;
  double naive = -1, fp32 = -1, bf16 = -1, bwd = -1;  // TFLOP/s, −1 = not run
  double check_fp32 = -1, check_bf16 = -1;            // rel. difference to the naive output
  std::string note;
};

Row run_size(const Options& o, cublasHandle_t cublas, int d, int n, bool causal) {
  Row row;
  row.d = d;
  row.n = n;
  row.causal = causal;
  row.bh = static_cast<int>(std::max(1LL, std::min(65535LL, o.tokens / n)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::size_t count = static_cast<std::size_t>(row.bh) * n * d;
  const std::size_t rows = static_cast<std::size_t>(row.bh) * n;
  // Forward: Q·Kᵀ and P·V, 2·n²·d each per head; the causal mask skips half of both.
  const double fwd_flops = 4.0 * n * static_cast<double>(n) * d * (causal ? 0.5 : 1.0);

  DeviceBuffer<float> q(count), k(count), v(count), out(count), lse(rows);
  fill_uniform(q, 11);
  fill_uniform(k, 12);
  fill_uniform(v, 13);

  // 1. naive: its n × n scores per head limit the heads it can take.
  const double per_head_bytes = 4.0 * n * static_cast<double>(n);
  row.bh_naive = static_cast<int>(std::min<double>(row.bh, o.naive_gib * 1073741824.0 / per_head_bytes));
  std::vector<float> naive_out;
  if (row.bh_naive >= 1) {
    DeviceBuffer<float> scores(attn::cuda::attention_naive_workspace_floats(row.bh_naive, n, n));
    DeviceBuffer<float> out_naive(static_cast<std::size_t>(row.bh_naive) * n * d);
    const double ms = time_ms([&] {
      attn::cuda::attention_naive(out_naive.get(), scores.get(), q.get(), k.get(), v.get(), row.bh_naive, n, n, d,
                                  causal, scale, cublas);
    }, o.warmup, o.repeats);
    // The naive path computes the masked half too: count the same useful FLOPs as the others.
    row.naive = tflops(fwd_flops * row.bh_naive, ms);
    naive_out = out_naive.download();
    if (row.bh_naive < row.bh) row.note = "naive on " + std::to_string(row.bh_naive) + " heads (memory)";
  } else {
    row.note = "naive skipped: one head's n×n scores exceed --naive-gib";
  }
  // Compare the fused kernels with the naive output on at most 8 heads (a cheap sanity check;
  // the tests are the real correctness check).
  const std::size_t check_count = static_cast<std::size_t>(std::min(row.bh_naive, 8)) * n * d;

  // 2. flash fp32
  row.fp32 = tflops(fwd_flops * row.bh, time_ms([&] {
                      attn::cuda::attention_flash_fp32(out.get(), lse.get(), q.get(), k.get(), v.get(), row.bh, n, n, d,
                                                       causal, scale);
                    }, o.warmup, o.repeats));
  if (check_count > 0) row.check_fp32 = rel_diff(out.download(), naive_out, check_count);

  // 3. flash bf16 (inputs are the fp32 ones rounded)
  {
    DeviceBuffer<bf16> qb(count), kb(count), vb(count), ob(count);
    to_bf16(qb, q);
    to_bf16(kb, k);
    to_bf16(vb, v);
    row.bf16 = tflops(fwd_flops * row.bh, time_ms([&] {
                        attn::cuda::attention_flash_bf16(ob.get(), qb.get(), kb.get(), vb.get(), row.bh, n, n, d,
                                                         causal, scale);
                      }, o.warmup, o.repeats));
    if (check_count > 0) {
      std::vector<bf16> got = ob.download();
      std::vector<float> got_f(check_count);
      for (std::size_t i = 0; i < check_count; ++i) got_f[i] = __bfloat162float(got[i]);
      row.check_bf16 = rel_diff(got_f, naive_out, check_count);
    }
  }

  // 4. backward: counted as 2.5 × the forward (FlashAttention-2's convention: five n²·d
  // products against two). Our two-kernel split recomputes S and dP in both kernels, seven in all.
  if (o.backward) {
    attn::cuda::attention_flash_fp32(out.get(), lse.get(), q.get(), k.get(), v.get(), row.bh, n, n, d, causal, scale);
    DeviceBuffer<float> dout(count), dq(count), dk(count), dv(count), delta(rows);
    fill_uniform(dout, 14);
    ATTN_CUDA_CHECK(cudaMemset(dq.get(), 0, count * sizeof(float)));
    ATTN_CUDA_CHECK(cudaMemset(dk.get(), 0, count * sizeof(float)));
    ATTN_CUDA_CHECK(cudaMemset(dv.get(), 0, count * sizeof(float)));
    row.bwd = tflops(2.5 * fwd_flops * row.bh, time_ms([&] {
                       attn::cuda::attention_flash_fp32_backward(dq.get(), dk.get(), dv.get(), delta.get(), dout.get(),
                                                                 q.get(), k.get(), v.get(), out.get(), lse.get(), row.bh,
                                                                 n, n, d, causal, scale);
                     }, o.warmup, o.repeats));
  }
  ATTN_CUDA_CHECK(cudaDeviceSynchronize());
  return row;
}

std::string cell(double tf, double roof) {
  if (tf < 0) return "      —       ";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%6.1f %5.1f%%", tf, 100.0 * tf / roof);
  return buf;
}

// A JSON number, or null for "not run" (negative) and non-finite values (JSON has no inf/NaN).
std::string json_number(double x) {
  if (!(x >= 0.0) || !std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

void write_json(const std::string& path, const std::string& device, const Roof& roof, const std::vector<Row>& rows) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\"device\": \"%s\", \"roof_tflops\": {\"sgemm\": %.3f, \"bf16_gemm\": %.3f}, \"rows\": [\n",
               device.c_str(), roof.sgemm, roof.bf16);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "  {\"d\": %d, \"n\": %d, \"causal\": %s, \"bh\": %d, \"bh_naive\": %d, \"naive\": %s, "
                 "\"flash_fp32\": %s, \"flash_bf16\": %s, \"backward_fp32\": %s, \"check_fp32\": %s, "
                 "\"check_bf16\": %s}%s\n",
                 r.d, r.n, r.causal ? "true" : "false", r.bh, r.bh_naive, json_number(r.naive).c_str(),
                 json_number(r.fp32).c_str(), json_number(r.bf16).c_str(), json_number(r.bwd).c_str(),
                 json_number(r.check_fp32).c_str(), json_number(r.check_bf16).c_str(), i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const attn::cuda::DeviceStatus status = attn::cuda::device_status();
  if (!status.available) {
    std::printf("skipped: no CUDA device (%s)\n", status.error.c_str());
    return 0;
  }
  try {
    std::printf("device: %s (sm_%d, %d SMs)\n", status.name.c_str(), status.compute_capability, status.multiprocessors);
    CublasHandle cublas;
    const Roof roof = measure_roof(o, cublas.get());
    std::printf("roof: cuBLAS SGEMM %d³ %.1f TFLOP/s · cuBLAS BF16 GEMM (FP32 accumulate) %.1f TFLOP/s\n", o.gemm,
                roof.sgemm, roof.bf16);
    std::fflush(stdout);

    std::vector<Row> rows;
    for (int d : o.d)
      for (int n : o.n)
        for (int causal = 0; causal <= (o.causal ? 1 : 0); ++causal) {
          Row r = run_size(o, cublas.get(), d, n, causal != 0);
          std::printf("  d=%-3d n=%-6d %-6s BH=%-5d naive %.1f  fp32 %.1f  bf16 %.1f  bwd %.1f TFLOP/s  "
                      "check fp32 %.1e bf16 %.1e  %s\n",
                      d, n, r.causal ? "causal" : "full", r.bh, r.naive, r.fp32, r.bf16, r.bwd, r.check_fp32,
                      r.check_bf16, r.note.c_str());
          std::fflush(stdout);
          rows.push_back(r);
        }
    if (!o.json.empty()) write_json(o.json, status.name, roof, rows);

    // The short table, last. % is of the same run's cuBLAS roof: SGEMM for the FP32 rungs,
    // BF16 GEMM for rung 3. "check" = max|Δ|/max|ref| against the naive output.
    std::printf("\nTFLOP/s and %% of roof (SGEMM %.1f, BF16 GEMM %.1f TFLOP/s); goals: fp32 ≥ 60%% at n ≥ 4096, d = 64;"
                " bf16 ≥ 40%% at n ≥ 4096, d = 128\n",
                roof.sgemm, roof.bf16);
    std::printf("  d      n  mask      BH | 1 naive fp32   | 2 flash fp32   | 3 flash bf16   | 4 backward fp32 | check fp32 / bf16\n");
    for (const Row& r : rows)
      std::printf("%3d %6d  %-6s %5d | %s | %s | %s | %s  | %.0e / %.0e\n", r.d, r.n, r.causal ? "causal" : "full",
                  r.bh, cell(r.naive, roof.sgemm).c_str(), cell(r.fp32, roof.sgemm).c_str(),
                  cell(r.bf16, roof.bf16).c_str(), cell(r.bwd, roof.sgemm).c_str(), r.check_fp32, r.check_bf16);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
