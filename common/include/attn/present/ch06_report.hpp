// Presentation of chapter 06 (efficient attention): each function prints one step's results
// through the Narrator; the numbers and verdicts come from attn/studies/efficient_sweep.hpp and the
// sentences are chosen by the verdicts' outcomes. Nothing here measures.
#pragma once

#include <string>
#include <vector>

#include "attn/attention/sparse_attention.hpp"
#include "attn/present/narrate.hpp"
#include "attn/studies/efficient_sweep.hpp"

namespace attn {

// A pattern as a picture: '█' where a query sees a key, '·' where it is masked. Recorded under
// `name` as the additive mask (0 visible, −∞ masked), as chapter 03's causal_mask.
void show_pattern(Narrator& nar, const std::string& name, const SparsePattern& p, const std::string& caption);
// Step 1: visible pairs of the full causal, window and dilated patterns against n·w.
void report_window_pairs(Narrator& nar, std::size_t n, std::size_t w, const SparsePattern& window,
                         const SparsePattern& dilated);
// Step 3 and step 4's results.
void report_linear(Narrator& nar, const LinearCheck& c);
void report_tiled(Narrator& nar, const TiledCheck& c, std::size_t n, std::size_t tile);
// Step 5: the timed decode and the KV-cache sizes of a 7B-like model.
void report_kv_cache(Narrator& nar, const KVCacheTiming& kv, std::size_t steps);
// Step 6: the time table with its spread, the slope table with its verdicts, the cost per
// visible pair where sparse loses to full attention, and the export ("sweep", manifest
// "sweep_variants", "sweep_columns").
void report_sweep(Narrator& nar, const EfficientSweep& s, const EfficientSweepConfig& cfg);
// The closing lines, chosen by the sweep's verdicts.
std::vector<std::string> ch06_takeaway(const EfficientSweep& s, std::size_t fit_from);

}  // namespace attn
