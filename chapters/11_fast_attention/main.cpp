// Chapter 11 · Fast attention — how close can exact attention on a CPU get to the speed of a
// matrix product? The roofs (the CPU's FMA peak, sgemm, memory bandwidth), the naive three-pass
// version with its n×n matrix timed pass by pass, then a fused, tiled, multi-threaded kernel with an
// online softmax, measured in one run.
//   build/bin/11_fast_attention                          the lesson + the sweep (n up to 4096)
//   build/bin/11_fast_attention --sizes 512,1024,2048,4096,8192,16384    the long sweep (minutes)
//   build/bin/11_fast_attention --sizes 512,2048 --dims 64 --json     machine-readable table
//   build-gpu/bin/11_fast_attention --gpu-sizes 4096     built with -DATTN_CUDA=ON: the last step
//                                                        times the CUDA kernels (common/cuda) too
// Export names: naive_phases (per pass: seconds, flops, bytes, seconds at copy speed, cached
// softmax seconds), online_softmax_example (per tile: begin, end, m, rescale, ℓ, O), check_output, check_reference, sweep (columns: impl (0 naive, 1 tiled), n, d,
// heads, causal, seconds, gflops, pct_of_sgemm, pct_of_peak, peak_mib, skipped, median seconds, runs; NaN where
// skipped), roofs (FMA peak before, after; sgemm before, after; copy GB/s). Studies:
// attn/studies/fast_attention_study.hpp; reports: attn/present/ch11_report.hpp.
#include <thread>

#include "attn/attention/fast_attention.hpp"
#include "attn/present/ch11_report.hpp"
#include "attn/present/cli.hpp"
#include "attn/tensor/openblas.hpp"
#ifdef ATTN_HAVE_CUDA
#include "attn/cuda/bench.hpp"
#include "attn/cuda/check.hpp"
#endif
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
// The CUDA ladder (naive cuBLAS, flash FP32, flash BF16 on tensor cores, the FP32 and BF16
// backwards) timed at a few sizes, each against the same run's cuBLAS GEMM; or why not.
GpuStep gpu_measure(const std::vector<std::size_t>& sizes, const std::vector<std::size_t>& dims,
                    const std::string& causal_opt) {
  GpuStep g;
#ifdef ATTN_HAVE_CUDA
  const attn::cuda::DeviceStatus device = attn::cuda::device_status();
  g.state = device.available ? GpuStep::State::measured : GpuStep::State::no_device;
  g.error = device.error, g.device = device.name;
  g.compute_capability = device.compute_capability, g.multiprocessors = device.multiprocessors;
  attn::cuda::GpuBenchConfig cfg;
  cfg.n.assign(sizes.begin(), sizes.end());
  cfg.d.clear();
  for (std::size_t d : dims)
    if (d == 64 || d == 128) cfg.d.push_back(int(d));  // the tiled kernels' head sizes
  if (device.available && cfg.d.empty()) g.state = GpuStep::State::no_dims;
  if (g.state != GpuStep::State::measured) return g;
  cfg.full = causal_opt != "yes", cfg.causal = causal_opt != "no", cfg.repeats = 3;
  const attn::cuda::GpuRoof roof = attn::cuda::measure_roofs(cfg);
  g.gemm = roof.gemm, g.sgemm_tflops = roof.sgemm, g.bf16_tflops = roof.bf16;
  for (const auto& r : attn::cuda::gpu_bench_rows(attn::cuda::run_gpu_sweep(cfg), roof))
    g.rows.push_back({r.kernel, std::size_t(r.n), std::size_t(r.d), std::size_t(r.bh), r.causal, r.tflops, r.roof,
                      r.pct_of_roof});
#else
  (void)sizes, (void)dims, (void)causal_opt;
#endif
  return g;
}
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("11", /*default_seed=*/11, /*total_steps=*/6);
  // Up to 4096 by default, so that the lesson takes no longer than the others' order of time; the long
  // sweep (8192, 16384, where the naive path's n×n matrices pass --max-naive-mib) is asked for by --sizes.
  std::vector<std::size_t> sizes = {512, 1024, 2048, 4096};
  std::vector<std::size_t> dims = {64, 128};
  std::vector<std::size_t> gpu_sizes = {1024, 4096, 16384};
  std::size_t heads = 8;
  std::string causal_opt = "both";
  AttentionBenchOptions bopt;
  ch.app().add_option("--sizes", sizes, _("sequence lengths n to sweep (the default stops at 4096; --sizes 512,1024,2048,4096,8192,16384 adds minutes, "
        "and there the naive path's n×n matrices pass --max-naive-mib and are skipped)"))->delimiter(',')->capture_default_str()
      ->check(CLI::Range(1, 65536));
  ch.app().add_option("--dims", dims, _("head sizes d to sweep"))->delimiter(',')->capture_default_str()->check(CLI::Range(1, 512));
  ch.app().add_option("--heads", heads, _("heads (batch × heads)"))->capture_default_str()->check(CLI::Range(1, 64));
  ch.app().add_option("--causal", causal_opt, _("no, yes or both"))->capture_default_str()->check(CLI::IsMember({"no", "yes", "both"}));
  ch.app().add_option("--threads", bopt.threads, _("threads of the tiled kernel (0: every core)"))->capture_default_str()->check(CLI::Range(0, 256));
  ch.app().add_option("--repeats", bopt.repeats, _("timed runs per row (best is kept)"))->capture_default_str()->check(CLI::Range(1, 20));
  ch.app().add_option("--max-naive-mib", bopt.max_naive_mib, _("skip the naive path when its n×n matrices need more"))
      ->capture_default_str()->check(finite_range(0.01, 1e7));
  ch.app().add_option("--gpu-sizes", gpu_sizes, _("sequence lengths n of the GPU step (built with -DATTN_CUDA=ON, d from --dims)"))
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1, 65536));
  ch.drop_html_option();  // its steps draw tables and text, no heatmap: an --html page would stay empty
  ch.add_json_flag(_("print the measured table as JSON on stdout (the narration goes to stderr)"));
  ch.set_question(_("Question: exact attention does 4·n²·d flops per head — can a CPU do them at matrix-product speed?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const int threads = bopt.threads > 0 ? bopt.threads : int(std::thread::hardware_concurrency());
    // sgemm and the naive path's products run on as many threads as the FMA loop and the tiled kernel.
    const ScopedBlasThreads blas_threads(threads);

    nar.step(_("The roofs: the FMA units, a matrix product, memory"), _("peak = threads · lanes · 2 flops per FMA · FMAs/cycle · Hz;  "
             "sgemm: 2n³ flops, n = 2048"), "OpenBLAS " + blas_info().kernel);
    Roofs roofs = measure_roofs(threads);  // the FMA peak and sgemm are measured again after the sweep
    report_roofs(nar, roofs);
    nar.code("attn/studies/fast_attention_study.hpp: measure_roofs; attn/studies/peak_flops.hpp: peak_fma_gflops; "
             "attn/studies/timing.hpp: sgemm_gflops");
    nar.why(_("attention is two matrix products with a softmax between: nothing beats the FMA peak, and a kernel as good "
            "as the BLAS's own product reaches sgemm at best — unless that BLAS kernel is weaker than the CPU."));

    nar.step(_("The naive way: three passes over an n×n matrix"), _("S = Q·Kᵀ/√d → P = softmax(S) → O = P·V"));
    const NaivePhases phases = measure_naive_phases(naive_phase_size(sizes, heads, bopt.max_naive_mib), dims.front(),
                                                    heads, roofs, threads, bopt.repeats);
    report_naive_phases(nar, phases);
    nar.code("attn/studies/fast_attention_study.hpp: measure_naive_phases; attn/attention/fast_attention.hpp: "
             "naive_attention_forward");
    nar.why(_("frameworks that run attention as three operations do this (PyTorch's nn.MultiheadAttention with "
              "need_weights=True, its default: torch.bmm, softmax, torch.bmm, in multi_head_attention_forward, "
              "torch/nn/functional.py), so the naive rows are this machine's measure of that approach (PyTorch "
              "itself is not run: the suite needs no Python); the n×n matrices set its size limit, the table what "
              "sets its speed."));

    nar.step(_("Tiles and an online softmax"), _("a running max m, sum ℓ and output O per query row"),
             _("Milakov & Gimelshein 2018; Dao et al. 2022"));
    report_online_softmax_example(nar, online_softmax_example());
    const std::vector<FastKernelCheck> checks = fast_kernel_checks(nar.options().seed);
    report_fast_kernel_checks(nar, checks, fast_attention_path({}, 64), threads);
    nar.code("attn/attention/fast_attention.hpp: fast_attention, fast_attention_forward");
    nar.why(_("tiling changes the order of the sums, not the result: the same attention, exact to float rounding."));

    nar.step(_("The sweep"), _f("GFLOP/s = 4·n²·d·heads / time (causal: visible pairs only), {}",
                                        heads == 1 ? std::string(_("1 head")) : _f("{} heads", heads)));
    std::vector<AttentionBenchRow> rows = run_sweep(sizes, dims, heads, causal_opt, roofs, bopt);
    remeasure_roofs(roofs);  // other programs share this machine: the roofs are the best seen in this run
    apply_roofs(rows, roofs);
    report_sweep(nar, rows, roofs);
    nar.code("attn/studies/fast_attention_study.hpp: run_sweep, apply_roofs; attn/studies/attention_speed.hpp: "
             "bench_attention");
    nar.why(_("best of a few runs on a shared machine; each roof is the better of its two measurements in this run, "
              "before and after the sweep, so one burst of load on a roof does not inflate the percentages."));

    nar.step(_("Does arithmetic per byte explain the speedup?"), _("naive ≈ d/4, tiled ≈ block rows/2 flop/B"));
    const SweepSummary summary = summarize_sweep(rows, roofs);
    const NaiveRecheck recheck = recheck_naive(phases, rows);
    report_naive_recheck(nar, recheck);
    report_sweep_summary(nar, summary, judge_roofline(roofs, phases.d), phases, roofs);
    nar.code("attn/studies/fast_attention_study.hpp: recheck_naive, summarize_sweep, judge_roofline");
    nar.why(ch11_why_faster(phases, recheck, roofs));

    nar.step(_("On the GPU"), _("the same sweep with the CUDA kernels: TFLOP/s and % of cuBLAS GEMM"));
    const GpuStep gpu = gpu_measure(gpu_sizes, dims, causal_opt);
    report_gpu(nar, gpu);
    if (gpu.state == GpuStep::State::measured) {
      nar.code("common/cuda/include/attn/cuda/bench.hpp: measure_roofs, run_gpu_sweep");
      nar.why(_("as on the CPU: fused kernels skip the n×n round trip through memory; tensor cores do the rest."));
    }
    nar.takeaway(ch11_takeaway(roofs, phases, summary, checks));
    nar.json(attention_bench_json(roofs.blas_kernel, roofs.blas_threads, roofs.sgemm(), rows, threads, gpu.rows,
                                  roofs.peak(),
                                  roofs.unit));  // with --json
  });
}
