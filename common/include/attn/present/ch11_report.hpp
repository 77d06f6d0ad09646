// Presentation of chapter 11 (fast attention): each function prints one step's results through the
// Narrator and records what it prints for --export; the numbers and verdicts come from
// attn/studies/fast_attention_study.hpp, and the sentences are chosen by the verdicts' outcomes.
// Nothing here measures.
#pragma once

#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/studies/fast_attention_study.hpp"

namespace attn {

// Step 1: the FMA peak, sgemm with the OpenBLAS kernel in use (and who chose it), the copy bandwidth.
void report_roofs(Narrator& nar, const Roofs& r);
// Step 2: the n×n sizes, the memory cap, the three passes timed (recorded "naive_phases": per pass
// seconds, flops, bytes, plus the cached softmax), and what limits the naive way here.
void report_naive_phases(Narrator& nar, const NaivePhases& p);
// Step 3: the online softmax by hand, tile by tile (recorded "online_softmax_example": per tile
// begin, end, m, rescale, ℓ, O), and O/ℓ against the plain softmax.
void report_online_softmax_example(Narrator& nar, const OnlineSoftmaxExample& e);
// Step 3: the tiled kernel's path and its checks (recorded "check_output", "check_reference").
void report_fast_kernel_checks(Narrator& nar, const std::vector<FastKernelCheck>& checks, const std::string& path, int threads);
// Step 4: the skipped rows, the roofs again, the table (recorded "sweep": impl (0 naive, 1 tiled), n,
// d, heads, causal, seconds, GFLOP/s, % sgemm, % peak, work MiB, skipped; "roofs": FMA peak before,
// after, sgemm before, after, copy GB/s), and why rows pass 100% of sgemm when they do.
void report_sweep(Narrator& nar, const std::vector<AttentionBenchRow>& rows, const Roofs& r);
// Step 5: the best and median rows in range, skipped ones said as skipped, the verdicts (not judged
// when their rows were timed once), and the roofline with the whole run's roofs set against what
// step 2 measured, ending on whether it separates the two kernels (Roofline::separates).
void report_sweep_summary(Narrator& nar, const SweepSummary& s, const Roofline& rl, const NaivePhases& p,
                          const Roofs& r);
// Step 5: step 2's three passes against step 4's naive row of the same size, and whether they agree.
void report_naive_recheck(Narrator& nar, const NaiveRecheck& c);
// Step 5's why, chosen by what step 2 found limits the naive way and by step 2's two products set
// against step 4's tiled row of the same size (NaiveRecheck::products_slower).
std::string ch11_why_faster(const NaivePhases& p, const NaiveRecheck& c, const Roofs& r);
// Step 6: the GPU table and what each rung bought, or the one line saying why there is none.
void report_gpu(Narrator& nar, const GpuStep& g);

std::vector<std::string> ch11_takeaway(const Roofs& r, const NaivePhases& p, const SweepSummary& s,
                                       const std::vector<FastKernelCheck>& checks);

}  // namespace attn
