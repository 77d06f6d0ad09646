// Chapter 12's presentation: the state-space layer's three forms, their timing, the family of
// recurrent mixers, the MQAR table with its verdicts, and the cost of one generated token. Every
// sentence is chosen from a computed verdict (attn/studies/verdict.hpp).
#pragma once

#include <string>

#include "attn/present/narrate.hpp"
#include "attn/studies/recall.hpp"
#include "attn/studies/state_space.hpp"

namespace attn {

void show_ssd_example(Narrator& nar, const SsdExample& e);
// Step 2's tensors: L (numbers and a heatmap), the quadratic and chunked outputs, the float64 reference.
void show_ssd_forms(Narrator& nar, const SsdExample& e);
void report_ssd_agreement(Narrator& nar, const SsdAgreement& a);
void report_ssd_timing(Narrator& nar, const SsdTiming& t);
void report_family(Narrator& nar, const FamilyDemo& f);
// The task (one sequence printed), the models and what training needed.
void show_mqar_task(Narrator& nar, std::size_t vocab);
// Step 5: one model's training curve from its checkpoint, drawn, and how long it sat at 1/n
// (judge_recall_plateau), and what it recalled at budget_step (the other models' most steps) against
// its last eval; or that the checkpoint stores none. vocab_values: the values a target can take
// (chance over all of them).
void report_recall_curve(Narrator& nar, RecallArch arch, std::size_t d_model, const RecallCurve& c,
                         std::size_t vocab_values, std::size_t budget_step = 0);
// Step 5: what training needed (the learning rate, the short convolution) and the SSM's recipe, as
// the README records them; the stopping rule of tc (recall_shipped_recipe(), or this run's recipe
// when trained_now), with the steps the checkpoints of t record.
void show_mqar_recipe(Narrator& nar, const RecallTrainConfig& tc, bool trained_now, const RecallTable& t,
                      const RecallModelConfig& cfg);
// The steps t's checkpoints record, the SSMs' (ssm) or the others': "400–1500", "4000", "?" (none).
std::string recall_steps_range(const RecallTable& t, bool ssm);
// Why the window misses what full attention recalls at d where the sequence fits it: the steps each
// ran, and the share of training queries beyond the window's reach (v.blind_share).
std::string window_gap_cause(const RecallTable& t, const RecallVerdicts& v, std::size_t d);
// cfg: the models' shared settings (N, d_k, w, k_conv) for the legend; source: where the checkpoints
// came from (and with which seed).
void report_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v, const RecallModelConfig& cfg,
                   const std::string& source);
// For --export: mqar_accuracy and mqar_state_bytes (archs × widths × pairs), the axes and verdicts in
// the manifest's "mqar" entry.
void export_recall(Narrator& nar, const RecallTable& t, const RecallVerdicts& v);
void report_decode_cost(Narrator& nar, const DecodeCost& c);

// A timing ratio to the two significant digits a rerun keeps: 4188.1 -> "4200", 3.04 -> "3.0".
std::string two_significant(double x);
// The takeaway's MQAR line: attention, SSM and hybrid at the most pairs and widest width, and
// whether the SSM's shortfall is its state (it learned the lookup at the fewest pairs) or training.
std::string recall_takeaway(const RecallTable& t, const RecallVerdicts& v);
// Step 3's and the takeaway's words when the speed-up is withheld (SsdTiming::speedup_clean fails).
std::string ssd_speedup_withheld();
// The takeaway's lines for steps 2–3 (the speed-up quoted only when the scan's and the chunked
// timings grew as their costs say) and step 7 (bytes first, then the time ratio as best–median).
std::string ssd_takeaway(const SsdAgreement& a, const SsdTiming& r);
std::string decode_cost_takeaway(const DecodeCost& c);

}  // namespace attn
