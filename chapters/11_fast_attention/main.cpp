// Chapter 11 · Fast attention — how close can exact attention on a CPU get to the speed of a
// matrix product? The roofs (the CPU's FMA peak, sgemm, memory bandwidth), the naive three-pass version with its n×n
// matrix, then a fused, tiled, multi-threaded kernel with an online softmax, measured in one run.
//   build/bin/11_fast_attention                          the lesson + the sweep (under 90 s)
//   build/bin/11_fast_attention --sizes 512,2048 --dims 64 --json     machine-readable table
//   build-gpu/bin/11_fast_attention --gpu-sizes 4096     built with -DATTN_CUDA=ON: the last step
//                                                        times the CUDA kernels (common/cuda) too
// Export names: check_output, check_reference, sweep (columns: impl(0 naive,1 tiled), n, d,
// heads, causal, gflops, pct_of_sgemm, peak_mib, pct_of_peak).
#include <algorithm>
#include <sstream>
#include <thread>

#include <xtensor/xview.hpp>

#include <fmt/format.h>

#include "attn/attention/attention.hpp"
#include "attn/studies/attention_speed.hpp"
#include "attn/studies/peak_flops.hpp"
#include "attn/studies/timing.hpp"
#include "attn/present/cli.hpp"
#include "attn/attention/fast_attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/memory.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/tensor/rng.hpp"
#ifdef ATTN_HAVE_CUDA
#include "attn/cuda/bench.hpp"
#include "attn/cuda/check.hpp"
#endif
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

// What each rung changed and what it bought, read off the measured rows at one size (the largest
// n at the largest d measured, full mask if measured): each line names the change and the two
// TFLOP/s it moved between.
void narrate_ladder(Narrator& nar, const std::vector<GpuAttentionRow>& rows) {
  if (rows.empty()) return;
  auto preferred = [](const GpuAttentionRow& a, const GpuAttentionRow& b) {  // a over b
    if (a.d != b.d) return a.d > b.d;
    if (a.n != b.n) return a.n > b.n;
    return !a.causal && b.causal;
  };
  const GpuAttentionRow* ref = &rows.front();
  for (const auto& r : rows)
    if (preferred(r, *ref)) ref = &r;
  auto find = [&](const char* kernel) -> const GpuAttentionRow* {
    for (const auto& r : rows)
      if (r.kernel == kernel && r.n == ref->n && r.d == ref->d && r.causal == ref->causal) return &r;
    return nullptr;
  };
  nar.say(_f("What each rung changed and bought, at n = {}, d = {}, {}:", ref->n, ref->d,
             ref->causal ? _("causal") : _("full")));
  auto step = [&](const char* from, const char* to, const char* change) {
    const GpuAttentionRow *a = find(from), *b = find(to);
    if (a == nullptr || b == nullptr) return;
    nar.say(fmt::format("  {} → {}: {}", from, to, tr(change)));
    nar.say(_f("    {:.1f} → {:.1f} TFLOP/s ({:.1f}×; now {:.0f}% of its roof)", a->tflops, b->tflops,
               b->tflops / a->tflops, b->pct_of_roof));
  };
  step("naive", "flash_fp32", N_("one fused pass with an online softmax; the n×n scores never reach memory"));
  step("flash_fp32", "flash_bf16", N_("tensor cores (mma.sync: BF16 in, FP32 sums), 128 rows over 8 warps,"));
  if (find("flash_fp32") && find("flash_bf16")) {
    nar.say(_("    Q in registers, K/V by ldmatrix (.trans for V) through a 3-stage cp.async pipeline,"));
    nar.say(_("    exp2 with the scale folded in, the next tile's Q·Kᵀ issued before this softmax"));
  }
  step("flash_bf16", "flash_hopper", N_("Hopper's own path: TMA copies, wgmma from shared memory,"));
  if (find("flash_bf16") && find("flash_hopper"))
    nar.say(_("    a producer warpgroup feeding two consumers through mbarriers, softmax under the other's GEMM"));
  step("backward_fp32", "backward_bf16", N_("on tensor cores: 5 products in one kernel, dQ by atomics"));
}

// The last step: the CUDA ladder (naive cuBLAS, flash FP32, flash BF16 on tensor cores, the FP32
// and BF16 backwards) timed at a few sizes, each as % of the same run's cuBLAS GEMM. Without CUDA in the
// build, or without a device, one line says so and the step ends there.
std::vector<GpuAttentionRow> gpu_step(Narrator& nar, const std::vector<std::size_t>& sizes,
                                      const std::vector<std::size_t>& dims, const std::string& causal_opt) {
  nar.step(_("On the GPU"), _("the same sweep with the CUDA kernels: TFLOP/s and % of cuBLAS GEMM"), "common/cuda");
  std::vector<GpuAttentionRow> rows;
#ifdef ATTN_HAVE_CUDA
  const attn::cuda::DeviceStatus device = attn::cuda::device_status();
  if (!device.available) {
    nar.result(_f("GPU section skipped: no CUDA device ({})", device.error));
    return rows;
  }
  attn::cuda::GpuBenchConfig cfg;
  cfg.n.assign(sizes.begin(), sizes.end());
  cfg.d.clear();
  for (std::size_t d : dims)
    if (d == 64 || d == 128) cfg.d.push_back(int(d));  // the tiled kernels' head sizes
  if (cfg.d.empty()) {
    nar.result(_("GPU section skipped: the CUDA kernels take d = 64 or 128 (see --dims)"));
    return rows;
  }
  cfg.full = causal_opt != "yes";
  cfg.causal = causal_opt != "no";
  cfg.repeats = 3;
  const attn::cuda::GpuRoof roof = attn::cuda::measure_roofs(cfg);
  nar.result(_f("{} (sm_{}, {} SMs); roofs at {}³:", device.name, device.compute_capability,
                device.multiprocessors, roof.gemm));
  nar.result(_f("cuBLAS SGEMM {:.1f} TFLOP/s, BF16 GEMM (FP32 accumulate) {:.1f} TFLOP/s", roof.sgemm, roof.bf16));
  Table tbl({_("kernel"), "n", "d", _("causal"), "BH", "TFLOP/s", _("% roof"), _("roof")});
  for (const auto& g : attn::cuda::gpu_bench_rows(attn::cuda::run_gpu_sweep(cfg), roof)) {
    rows.push_back({g.kernel, std::size_t(g.n), std::size_t(g.d), std::size_t(g.bh), g.causal, g.tflops, g.roof, g.pct_of_roof});
    tbl.add({g.kernel, std::to_string(g.n), std::to_string(g.d), g.causal ? _("yes") : _("no"), std::to_string(g.bh),
             fmt::format("{:.1f}", g.tflops), fmt::format("{:.0f}%", g.pct_of_roof), g.roof});
  }
  nar.table(tbl, /*as_result=*/true);
  nar.say(_("BH = batch × heads per launch (about 256k query rows); TFLOP/s count 4·n²·d per head (backward: 2.5×); "
            "the BF16 kernels are compared with the BF16 GEMM, the FP32 ones with SGEMM."));
  narrate_ladder(nar, rows);
  nar.say(_("Goals at n ≥ 4096, d = 128: flash_bf16 ≥ 45% of BF16 GEMM, flash_fp32 ≥ 75% and backward_fp32 ≥ 60% of "
            "SGEMM. The full sweep with checks and PyTorch beside it: scripts/cuda-check."));
  nar.code("common/cuda/include/attn/cuda/bench.hpp: measure_roofs, run_gpu_sweep");
  nar.why(_("as on the CPU: fused kernels skip the n×n round trip through memory; tensor cores do the rest."));
#else
  (void)sizes, (void)dims, (void)causal_opt;
  nar.result(_("GPU section skipped: this program was built without -DATTN_CUDA=ON"));
#endif
  return rows;
}

int main(int argc, char** argv) {
  ChapterApp ch("11", /*default_seed=*/11, /*total_steps=*/7);
  std::vector<std::size_t> sizes = {512, 1024, 2048, 4096, 8192, 16384};
  std::vector<std::size_t> dims = {64, 128};
  std::vector<std::size_t> gpu_sizes = {1024, 4096, 16384};
  std::size_t heads = 8;
  std::string causal_opt = "both";
  AttentionBenchOptions bopt;
  ch.app().add_option("--sizes", sizes, _("sequence lengths n to sweep"))->delimiter(',')->capture_default_str()
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
  ch.add_json_flag(_("print the measured table as JSON on stdout (the narration goes to stderr)"));
  ch.set_question(_("Question: exact attention does 4·n²·d flops per head — can a CPU do them at matrix-product speed?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const BlasInfo blas = blas_info();
    const int threads = bopt.threads > 0 ? bopt.threads : int(std::thread::hardware_concurrency());

    nar.step(_("The roofs: the FMA units, a matrix product, memory"), _("peak = cores · lanes · 2 flops per FMA · FMAs/cycle · Hz;  "
             "sgemm: 2n³ flops, n = 2048"), "OpenBLAS " + blas.kernel);
    const std::string unit = widest_vector_unit();
    PeakFma peak = peak_fma_gflops(unit, threads);  // measured again after the sweep, like sgemm
    nar.result(_f("FMA peak: {:.0f} GFLOP/s on {} {} ({}, {} floats per instruction; a loop of FMAs on "
                           "registers only, best of 7) — no float code on this CPU can run faster",
                           peak.gflops, threads, threads == 1 ? _("thread") : _("threads"), unit, vector_lanes(unit)));
    double roof = sgemm_gflops(2048, 5);  // measured again after the sweep; the best of the two is the roof
    nar.result(_f("OpenBLAS {} on {} threads: sgemm {:.0f} GFLOP/s (best of 5, {:.0f}% of the FMA peak) — the "
                           "practical roof for attention's two products", blas.kernel, blas.threads, roof,
                           100.0 * roof / peak.gflops));
    if (roof > peak.gflops)
      nar.result(_("warning: sgemm ran faster than the FMA-peak loop: other programs slowed the loop, so this run's "
                   "peak is too low (it is measured again after the sweep)"));
    const CpuVectorUnits cpu = cpu_vector_units();
    const std::string better = better_openblas_coretype(blas.kernel, cpu.avx512, cpu.avx2);
    if (!better.empty())
      nar.result(_f("warning: OpenBLAS runs its {} kernel, but this CPU's best is {} (OPENBLAS_CORETYPE={} "
                             "would use it): sgemm is below what the CPU can do", blas.kernel, better, better));
    const double bw = copy_bandwidth_gbs();
    nar.result(_f("memory copy: {:.1f} GB/s — the roof for anything that streams an n×n matrix", bw));
    nar.code("attn/studies/peak_flops.hpp: peak_fma_gflops; attn/studies/timing.hpp: sgemm_gflops; "
             "attn/studies/attention_speed.hpp: copy_bandwidth_gbs");
    nar.why(_("attention is two matrix products with a softmax between: nothing beats the FMA peak, and a kernel as good "
            "as the BLAS's own product reaches sgemm at best — unless that BLAS kernel is weaker than the CPU."));

    nar.step(_("The naive way: three passes over an n×n matrix"), _("S = Q·Kᵀ/√d → P = softmax(S) → O = P·V"));
    nar.say(_f("per head: S and P are n×n floats; at n = 16384 that is 1 GiB per head, {} GiB for {} heads", heads, heads));
    nar.say(_f("each element of S is written, read, written as P and read again: 16 bytes per 4·d = {} flops of the "
               "4·n²·d count (d/4 flop per byte), so at d = 64 memory caps it near {:.0f} GFLOP/s-equivalent",
               4 * 64, bw / 16.0 * 256.0));
    nar.code("attn/attention/fast_attention.hpp: naive_attention_forward");
    nar.why(_("frameworks do exactly this (PyTorch's matmul-softmax-matmul); memory, not arithmetic, sets its speed and its size limit."));

    nar.step(_("Tiles and an online softmax"), _("m' = max(m, rowmax S_ij);  O = e^(m−m')·O + e^(S_ij−m')·V_j;  ℓ likewise"),
             _("Milakov & Gimelshein 2018; Dao et al. 2022"));
    nar.say(_f("a block of 96 query rows meets the keys 256 at a time; each row keeps its running max m, sum ℓ and "
               "output O; Kᵀ is packed once per head into 32-key panels; S = Q·Kᵀ keeps each row's max while it is "
               "stored; P overwrites S in the layout P·V reads; the rescale e^(m−m') is applied as O is loaded into "
               "registers; exp is a degree-6 polynomial; threads ({}) take (head, query block) items one at a time. "
               "Path on this CPU: {} (portable: OpenBLAS per tile).", threads, fast_attention_path({}, 64)));
    Rng rng(nar.options().seed);
    const std::size_t cn = 129, cd = 64;
    Tensor3 q = rng.normal_tensor3(1, cn, cd), k = rng.normal_tensor3(1, cn, cd), v = rng.normal_tensor3(1, cn, cd);
    for (bool causal : {false, true}) {
      FastAttentionConfig cfg;
      cfg.causal = causal;
      Tensor3 o = fast_attention(q, k, v, cfg);
      Mat qh = xt::view(q, 0), kh = xt::view(k, 0), vh = xt::view(v, 0);  // head 0 as (n, d)
      Mat ref = xt::cast<float>(attention_reference(qh, kh, vh, causal ? causal_mask(cn) : Mat{}));
      Mat oh = xt::view(o, 0);
      nar.result(_f("n = {}, d = {}, {}: max |tiled − reference (double)| = {:.1e}", cn, cd,
                             causal ? _("causal") : _("non-causal"), double(xt::amax(xt::abs(oh - ref))())));
      if (!causal) {
        nar.record("check_output", oh);
        nar.record("check_reference", ref);
      }
    }
    nar.code("attn/attention/fast_attention.hpp: fast_attention, fast_attention_forward");
    nar.why(_("tiling changes the order of the sums, not the result: the same attention, exact to float rounding."));

    nar.step(_("The sweep"), _f("GFLOP/s = 4·n²·d·heads / time (causal: visible pairs only), {} heads", heads));
    std::vector<AttentionBenchRow> rows;
    Table tbl({_("impl"), "n", "d", _("causal"), _("time ms"), "GFLOP/s", _("% peak"), _("% sgemm"), _("work MiB"), _("RSS+ MiB")});
    for (std::size_t d : dims)
      for (int c = 0; c < 2; ++c) {
        const bool causal = c == 1;
        if ((causal && causal_opt == "no") || (!causal && causal_opt == "yes")) continue;
        for (std::size_t n : sizes)
          for (const char* impl : {"naive", "tiled"}) {
            rows.push_back(bench_attention(impl, n, d, heads, causal, roof, bopt));
            if (rows.back().skipped)
              nar.say(_f("skipped {} n = {}, d = {}{}: {}", impl, n, d, causal ? _(" causal") : "", rows.back().note));
          }
      }
    // Other programs share this machine: the roof is the best sgemm seen in this run (before or after).
    const double roof_after = sgemm_gflops(2048, 5);
    nar.result(_f("sgemm again after the sweep: {:.0f} GFLOP/s; percentages use the better, {:.0f}",
                           roof_after, std::max(roof, roof_after)));
    roof = std::max(roof, roof_after);
    const double peak_after = peak_fma_gflops(unit, threads).gflops;
    nar.result(_f("FMA peak again after the sweep: {:.0f} GFLOP/s; percentages use the better, {:.0f}", peak_after,
                           std::max(peak.gflops, peak_after)));
    peak.gflops = std::max(peak.gflops, peak_after);
    for (auto& r : rows) {
      if (r.skipped) continue;
      r.pct_of_sgemm = 100.0 * r.gflops / roof;
      r.pct_of_peak = 100.0 * r.gflops / peak.gflops;
      tbl.add({r.impl == "tiled" ? "tiled/" + r.path : r.impl, std::to_string(r.n), std::to_string(r.d), r.causal ? _("yes") : _("no"),
               fmt::format("{:.1f}", r.seconds * 1e3), fmt::format("{:.1f}", r.gflops), fmt::format("{:.0f}%", r.pct_of_peak),
               fmt::format("{:.0f}%", r.pct_of_sgemm),
               fmt::format("{:.1f}", r.peak_mib), r.rss_mib < 0 ? _("n/a") : fmt::format("{:.1f}", r.rss_mib)});
    }
    nar.table(tbl, /*as_result=*/true);
    Mat sweep = xt::zeros<float>({rows.size(), std::size_t(8)});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      const double vals[] = {r.impl == "tiled" ? 1.0 : 0.0, double(r.n), double(r.d), double(r.heads), r.causal ? 1.0 : 0.0,
                             r.gflops, r.pct_of_sgemm, r.peak_mib};
      for (std::size_t c = 0; c < 8; ++c) sweep(i, c) = float(vals[c]);
    }
    nar.record("sweep", sweep);
    const bool above_sgemm = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return !r.skipped && r.pct_of_sgemm > 100.0; });
    const bool above_peak = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return !r.skipped && r.pct_of_peak > 100.0; });
    if (above_sgemm)
      nar.result(_f("rows above 100% of sgemm: the tiled kernel drives the CPU's {} unit itself, while OpenBLAS's {} "
                    "kernel reached {:.0f}% of the FMA peak in this run.", unit, blas.kernel, 100.0 * roof / peak.gflops));
    if (above_peak)
      nar.result(_("rows above 100% of the FMA peak: other programs slowed the peak loop more than those rows, so "
                   "this run's peak is too low."));
    else if (above_sgemm)
      nar.result(_("against the FMA peak every row stays below 100%."));
    nar.say(_("work MiB: working memory the implementation allocates beyond Q, K, V and O (counted from its buffers); "
              "RSS+ MiB: growth of the process's peak resident set over one run (VmHWM; includes thread stacks, "
              "allocator slack)."));
    nar.say(_("% peak: of the better of the two FMA-peak runs; % sgemm: of the better of the two sgemm runs."));
    nar.code("attn/studies/attention_speed.hpp: bench_attention");
    nar.why(_("best of a few runs on a shared machine; the roof was measured in this same run, so the percentages compare like with like."));

    nar.step(_("Why the tiled kernel is faster"), _("arithmetic per byte: naive ≈ d/4 flop/B, tiled ≈ block rows flop/B"));
    // The goal is stated for n ≥ 2048; a sweep without such sizes reports over all it measured.
    const bool has_large = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return !r.skipped && r.n >= 2048; });
    const std::string where = has_large ? _("at n ≥ 2048") : _("at the sizes measured (all below 2048)");
    double best_tiled = 0, best_naive = 0, peak_tiled = 0, peak_naive = 0;
    bool tiled_measured = false, naive_measured = false;  // a skipped row has no percentage, not 0%
    for (const auto& r : rows) {
      if (r.skipped || (has_large && r.n < 2048)) continue;
      (r.impl == "tiled" ? tiled_measured : naive_measured) = true;
      (r.impl == "tiled" ? best_tiled : best_naive) = std::max(r.impl == "tiled" ? best_tiled : best_naive, r.pct_of_sgemm);
      (r.impl == "tiled" ? peak_tiled : peak_naive) = std::max(r.impl == "tiled" ? peak_tiled : peak_naive, r.pct_of_peak);
    }
    const auto reach = [](bool measured, double of_sgemm, double of_peak) {
      return measured ? _f("reaches up to {:.0f}% of sgemm ({:.0f}% of the FMA peak)", of_sgemm, of_peak)
                      : std::string(_("was not measured (skipped at every size)"));
    };
    const std::string naive_reach = reach(naive_measured, best_naive, peak_naive);
    const std::string tiled_reach = reach(tiled_measured, best_tiled, peak_tiled);
    nar.result(_f("{}: naive {}, tiled {}", where, naive_reach, tiled_reach));
    nar.say(_("the naive version streams 2 GiB per 8 heads at n = 8192 through memory; the tiled one keeps a 96×256 "
              "tile of S in L2 and reads Q, K, V once per query block. Its softmax (the polynomial exp, max, sum) is "
              "the remaining non-FMA work."));
    nar.why(_("FlashAttention's point is not fewer flops — it is the same flops without the n×n round trip through memory."));

    nar.step(_("A reference point"), _("a framework's attention = matmul → softmax → matmul"));
    nar.say(_("frameworks that run attention as three separate operations (PyTorch 1.13's CPU path, for one) do the "
              "naive row's work: two BLAS products and an n×n softmax through memory. The naive rows above measure "
              "that approach on this machine in this run; PyTorch itself is not run here (the suite does not need "
              "Python)."));

    const std::vector<GpuAttentionRow> gpu_rows = gpu_step(nar, gpu_sizes, dims, causal_opt);
    nar.takeaway({_f("FMA peak {:.0f} GFLOP/s ({}), sgemm {:.0f} ({}); {}, tiled attention {}, naive {}.",
                     peak.gflops, unit, roof, blas.kernel, where, tiled_reach, naive_reach),
                  _("The tiled kernel's memory is a few MiB per thread at any n; the naive one grows as heads·n²·4 bytes."),
                  _("Same numbers, different order of summation: tiled == reference to ~1e-6.")});
    nar.json(attention_bench_json(blas.kernel, blas.threads, roof, rows, gpu_rows, peak.gflops, unit));  // with --json
  });
}
