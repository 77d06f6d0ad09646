// Presentation of chapter 04 (multi-head attention): each function prints one step's results
// through the Narrator; the numbers and verdicts come from attn/studies/multi_head_study.hpp and
// attn/studies/transformer_cost.hpp, and the sentences are chosen by the verdicts' outcomes.
#pragma once

#include <string>
#include <vector>

#include "attn/present/narrate.hpp"
#include "attn/studies/multi_head_study.hpp"

namespace attn {

// "3.15M", "420.0K", "1.20G".
std::string si_count(double x);
// Step 3: one heatmap per head side by side (rows = queries), recorded as "weights", shaded from 0
// to the largest weight of all heads (so a long sentence's small weights still show).
void show_head_maps(Narrator& nar, const Tensor3& weights, const Labels& words);
// The shade edge (1 … 4, at k·vmax/5 in a heatmap shaded from 0 to vmax) nearest x when it is within
// tol of x and within a quarter of the edges' spacing, else 0: rows rounding around such an x scatter
// between the two shades that meet there.
int near_shade_edge(double x, double vmax, double tol);
// Blocks side by side in rows that fit max_width columns (2-column indent, gap 3): the first block
// of every row is taken from `labelled` (a heatmap with its row labels), the others from `bare`
// (the same heatmap without), so every row of maps can be read by its labels.
std::string maps_in_rows(const std::vector<std::string>& labelled, const std::vector<std::string>& bare,
                         const std::vector<std::string>& titles, std::size_t max_width);
// The same with a title for each form: labelled_titles[i] over labelled[i], bare_titles[i] over
// bare[i] (a title padded to start over its grid, whose offset differs with the row labels).
std::string maps_in_rows(const std::vector<std::string>& labelled, const std::vector<std::string>& bare,
                         const std::vector<std::string>& labelled_titles, const std::vector<std::string>& bare_titles,
                         std::size_t max_width);
void report_head_diversity(Narrator& nar, const HeadDiversity& h);
// Step 3: how many rows of the maps are only rounding around the uniform weight 1/n.
// The maps are shaded from 0 to r.largest (show_head_maps), so 1/n may or may not sit on a shade's edge.
void report_near_uniform(Narrator& nar, const NearUniformRows& r, const Labels& words);
// Step 3: one head must split its weight between two wanted words; two heads need not.
void report_two_targets(Narrator& nar, const TwoTargets& t);
// Step 4: h heads beside one head of the full width: parameters, FLOPs, score entries.
void report_head_cost(Narrator& nar, const HeadCost& many, const HeadCost& one, std::size_t n, std::size_t d_model);
// Step 4: the trace against the training layer, and against PyTorch when the golden files exist.
void report_layer_agreement(Narrator& nar, const Agreement& layer, const Agreement* pytorch);
// Step 5: the original Transformer's parameters and per-layer FLOPs at the given lengths.
void report_transformer_cost(Narrator& nar, const TransformerConfig& cfg, const std::vector<std::size_t>& lengths);
// Step 5's "why": where attention reaches half the work and the scores match the feed-forward.
void explain_transformer_cost(Narrator& nar, const TransformerConfig& cfg, const std::vector<std::size_t>& lengths);
// Step 6's opening definitions: MQA, GQA, g and the KV cache.
void define_gqa(Narrator& nar);
// Step 6: GQA vs repeated MHA, what mean-pooling MHA's K/V heads into GQA and MQA changes in the
// output (pooled), and the KV-cache bytes of a LLaMA-2-70B-like model.
void report_gqa(Narrator& nar, const Agreement& gqa, const std::vector<GqaPoolingCost>& pooled);
// The caption of step 6's GQA output: h query heads sharing g K/V heads, counted in words that fit
// the numbers ("1 query head"), and "GQA = MHA here" when g = h (h has no smaller divisor used).
std::string gqa_caption(std::size_t heads, std::size_t kv_heads);
// The closing lines.
std::vector<std::string> ch04_takeaway(const Agreement& layer, const Agreement* pytorch, const TransformerConfig& cfg,
                                       const TwoTargets& two);

}  // namespace attn
