// Benchmark of the CUDA attention ladder, in one run: first the roof (cuBLAS SGEMM and BF16 GEMM
// with FP32 accumulation, 8192³), then every kernel's TFLOP/s and its % of the matching roof for
// each n and d. Timed with CUDA events after warm-up; the median of the repeats is reported.
//   attn_cuda_bench [--n 1024,2048,...] [--d 64,128] [--causal] [--repeats 5] [--tokens 262144]
//                   [--naive-gib 4] [--no-backward] [--no-hopper] [--json FILE]
// Without a device it prints "skipped: no CUDA device (<why>)" and exits 0.
// The measuring itself lives in the library (src/bench.cu, attn/cuda/bench.hpp; chapter 11 uses it
// too); this file is the command line, the printing and the JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "attn/cuda/bench.hpp"
#include "attn/cuda/check.hpp"

namespace {

using attn::cuda::GpuBenchConfig;
using attn::cuda::GpuBenchSize;
using attn::cuda::GpuRoof;

// ---- options ---------------------------------------------------------------------------------

// The sweep's settings and their defaults are GpuBenchConfig's (attn/cuda/bench.hpp).
struct Options : GpuBenchConfig {
  std::string json;  // also write the results here
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
      "  --no-backward   skip the backwards (rungs 4 and 6)\n"
      "  --no-hopper     skip rung 5 even where it could run\n"
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
    } else if (a == "--no-hopper") {
      o.hopper = false;
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

void write_json(const std::string& path, const std::string& device, const GpuRoof& roof, const std::vector<GpuBenchSize>& rows) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f, "{\"device\": \"%s\", \"roof_tflops\": {\"sgemm\": %.3f, \"bf16_gemm\": %.3f}, \"rows\": [\n",
               device.c_str(), roof.sgemm, roof.bf16);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GpuBenchSize& r = rows[i];
    std::fprintf(f,
                 "  {\"d\": %d, \"n\": %d, \"causal\": %s, \"bh\": %d, \"bh_naive\": %d, \"naive\": %s, "
                 "\"flash_fp32\": %s, \"flash_bf16\": %s, \"flash_hopper\": %s, \"backward_fp32\": %s, "
                 "\"backward_bf16\": %s, \"check_fp32\": %s, \"check_bf16\": %s, \"check_hopper\": %s}%s\n",
                 r.d, r.n, r.causal ? "true" : "false", r.bh, r.bh_naive, json_number(r.naive).c_str(),
                 json_number(r.flash_fp32).c_str(), json_number(r.flash_bf16).c_str(), json_number(r.flash_hopper).c_str(),
                 json_number(r.backward_fp32).c_str(), json_number(r.backward_bf16).c_str(),
                 json_number(r.check_fp32).c_str(), json_number(r.check_bf16).c_str(),
                 json_number(r.check_hopper).c_str(), i + 1 < rows.size() ? "," : "");
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
    const GpuRoof roof = attn::cuda::measure_roofs(o);
    std::printf("roof: cuBLAS SGEMM %d³ %.1f TFLOP/s · cuBLAS BF16 GEMM (FP32 accumulate) %.1f TFLOP/s\n", o.gemm,
                roof.sgemm, roof.bf16);
    std::fflush(stdout);

    const std::vector<GpuBenchSize> rows = attn::cuda::run_gpu_sweep(o, [](const GpuBenchSize& r) {
      std::printf("  d=%-3d n=%-6d %-6s BH=%-5d naive %.1f  fp32 %.1f  bf16 %.1f  hopper %.1f  bwd fp32 %.1f  "
                  "bwd bf16 %.1f TFLOP/s  check fp32 %.1e bf16 %.1e hopper %.1e  %s\n",
                  r.d, r.n, r.causal ? "causal" : "full", r.bh, r.naive, r.flash_fp32, r.flash_bf16, r.flash_hopper,
                  r.backward_fp32, r.backward_bf16, r.check_fp32, r.check_bf16, r.check_hopper, r.note.c_str());
      std::fflush(stdout);
    });
    if (!o.json.empty()) write_json(o.json, status.name, roof, rows);

    // The short table, last. % is of the same run's cuBLAS roof: SGEMM for the FP32 rungs,
    // BF16 GEMM for rungs 3, 5 and 6. "check" = max|Δ|/max|ref| against the naive output.
    std::printf("\nTFLOP/s and %% of roof (SGEMM %.1f, BF16 GEMM %.1f TFLOP/s); goals at n ≥ 4096, d = 128:"
                " 2 ≥ 75%%, 3 ≥ 45%%, 5 ≥ 60%%, 4 ≥ 60%%\n",
                roof.sgemm, roof.bf16);
    std::printf("  d      n  mask      BH | 1 naive fp32   | 2 flash fp32   | 3 flash bf16   | 5 hopper bf16  "
                "| 4 backward fp32 | 6 backward bf16 | check fp32 / bf16 / hopper\n");
    for (const GpuBenchSize& r : rows)
      std::printf("%3d %6d  %-6s %5d | %s | %s | %s | %s | %s  | %s  | %.0e / %.0e / %.0e\n", r.d, r.n,
                  r.causal ? "causal" : "full", r.bh, cell(r.naive, roof.sgemm).c_str(),
                  cell(r.flash_fp32, roof.sgemm).c_str(), cell(r.flash_bf16, roof.bf16).c_str(),
                  cell(r.flash_hopper, roof.bf16).c_str(), cell(r.backward_fp32, roof.sgemm).c_str(),
                  cell(r.backward_bf16, roof.bf16).c_str(), r.check_fp32, r.check_bf16, r.check_hopper);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  return 0;
}
