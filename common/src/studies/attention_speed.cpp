// Chapter 11's timing and memory of attention implementations (see attn/studies/attention_speed.hpp).
#include "attn/studies/attention_speed.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/studies/timing.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

AttentionBenchRow bench_attention(const std::string& impl, std::size_t n, std::size_t d, std::size_t heads,
                                  bool causal, double sgemm, const AttentionBenchOptions& opts) {
  AttentionBenchRow row;
  row.impl = impl;
  row.n = n;
  row.d = d;
  row.heads = heads;
  row.causal = causal;
  FastAttentionConfig cfg;
  cfg.causal = causal;
  cfg.threads = opts.threads;
  cfg.isa = opts.isa;
  const bool naive = impl == "naive";
  row.path = naive ? "openblas" : fast_attention_path(cfg, d);
  const std::size_t io_bytes = 4 * heads * n * d * sizeof(float);
  const std::size_t work_bytes = naive ? naive_attention_workspace_bytes(heads, n, n) : fast_attention_workspace_bytes(n, n, d, cfg);
  row.peak_mib = double(work_bytes) / kMiB;
  if (naive && !(row.peak_mib <= opts.max_naive_mib)) {  // written so that a NaN limit skips too
    row.skipped = true, row.over_limit = true;
    row.need_mib = row.peak_mib, row.have_mib = opts.max_naive_mib;
    row.note = fmt::format("needs {:.0f} MiB for the n×n matrices of {} heads (limit {:.0f} MiB, --max-naive-mib)",
                           row.peak_mib, heads, opts.max_naive_mib);
    return row;
  }
  const long long avail = available_memory_bytes();
  if (avail > 0 && double(work_bytes + io_bytes) > 0.8 * double(avail)) {
    row.skipped = true;
    row.need_mib = double(work_bytes + io_bytes) / kMiB, row.have_mib = double(avail) / kMiB;
    row.note = fmt::format("needs {:.0f} MiB, {:.0f} MiB available", row.need_mib, row.have_mib);
    return row;
  }
  Rng rng(11);
  std::vector<float> q(heads * n * d), k(q.size()), v(q.size()), o(q.size(), 0.0f);
  for (auto* t : {&q, &k, &v})
    for (float& x : *t) x = rng.normal();
  std::vector<float> ws;
  auto run = [&] {
    if (naive) {
      naive_attention_forward(o.data(), ws.data(), q.data(), k.data(), v.data(), heads, n, n, d, causal, 0.0f, opts.threads);
    } else {
      fast_attention_forward(o.data(), q.data(), k.data(), v.data(), heads, n, n, d, cfg);
    }
  };
  const double flops = attention_forward_flops(heads, n, n, d, causal);
  // One run measured for memory (the naive workspace is allocated inside, so that its pages count).
  double first = 0.0;
  const long long grown = measure_peak_growth([&] {
    if (naive) ws.assign(heads * n * n, 0.0f);
    first = best_seconds(run, 1, false);
  });
  row.rss_mib = grown < 0 ? -1.0 : double(grown) / kMiB;
  if (!naive) let_blas_threads_sleep(0.05);
  const int more = first > kRepeatOnceS ? 0 : first > kRepeatAllS ? std::min(1, opts.repeats - 1)
                                                                   : std::max(0, opts.repeats - 1);
  std::vector<double> times = {first};  // every timed run, for the best and the median
  double spent = first;
  for (int i = 0; i < more && (i == 0 || spent <= 3.0); ++i) spent += times.emplace_back(best_seconds(run, 1, false));
  std::sort(times.begin(), times.end());
  row.runs = int(times.size());
  row.seconds = times.front();
  const std::size_t m = times.size() / 2;
  row.median_seconds = times.size() % 2 ? times[m] : 0.5 * (times[m - 1] + times[m]);
  const double best = row.seconds;
  row.gflops = flops / best * 1e-9;
  row.pct_of_sgemm = sgemm > 0 ? 100.0 * row.gflops / sgemm : 0.0;
  return row;
}

std::string attention_bench_json(const std::string& blas_kernel, int threads, double sgemm,
                                 const std::vector<AttentionBenchRow>& rows, int kernel_threads,
                                 const std::vector<GpuAttentionRow>& gpu_rows, double fma_peak_gflops,
                                 const std::string& fma_unit) {
  nlohmann::ordered_json j;
  j["blas_kernel"] = blas_kernel;
  j["threads"] = threads;
  j["sgemm_gflops"] = sgemm;
  if (fma_peak_gflops > 0) {
    j["fma_unit"] = fma_unit;
    j["fma_peak_gflops"] = fma_peak_gflops;
  }
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    if (r.skipped) continue;
    j["rows"].push_back({{"impl", r.impl}, {"path", r.path}, {"threads", r.impl == "tiled" ? kernel_threads : threads},
                         {"n", r.n}, {"d", r.d}, {"heads", r.heads}, {"causal", r.causal},
                         {"gflops", r.gflops}, {"pct_of_sgemm", r.pct_of_sgemm}, {"peak_mib", r.peak_mib}});
    if (fma_peak_gflops > 0) j["rows"].back()["pct_of_peak"] = r.pct_of_peak;
  }
  if (!gpu_rows.empty()) {
    j["gpu_rows"] = nlohmann::ordered_json::array();
    for (const auto& g : gpu_rows)
      j["gpu_rows"].push_back({{"kernel", g.kernel}, {"n", g.n}, {"d", g.d}, {"bh", g.bh}, {"causal", g.causal},
                               {"tflops", g.tflops}, {"roof", g.roof}, {"pct_of_roof", g.pct_of_roof}});
  }
  return j.dump(2);
}

double copy_bandwidth_gbs(std::size_t bytes) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  const double s = best_seconds([&] { std::memcpy(b.data(), a.data(), bytes); }, 3);
  return 2.0 * double(bytes) / s * 1e-9;
}

}  // namespace attn
