// Presentation of chapter 10 (interpretability): each function prints what one study of
// attn/studies/interpretability_claims.hpp measured, through the Narrator, and records its
// exports; a sentence that states a verdict is chosen by the verdict's outcome. Also the two
// induction models, trained now (--train) or loaded, and the takeaway built from the findings.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/data/corpus.hpp"
#include "attn/present/narrate.hpp"
#include "attn/studies/interpretability_claims.hpp"
#include "attn/studies/tiny_lm.hpp"

namespace attn {

// One induction model: trained now with a progress bar on stderr (and saved to its shipped path,
// data/ch10/induction.safetensors for which = 0, …_seed2 for 1) or loaded from there.
struct InductionModel {
  AttnOnly model;
  std::vector<float> curve;  // training loss, one point per curve_every steps
  Metadata metadata;         // seed, steps, batch, length, periods, train_seconds
  std::string file;          // "ch10/induction.safetensors"
  bool trained_now = false;  // trained by this run (--train), not loaded from an earlier one
};
// The training seed is base.seed + which. std::runtime_error naming the file when it is missing.
InductionModel load_or_train_induction(std::size_t which, bool train, const InductionTrainConfig& base, bool progress);
// Claim 4's baseline compares two models trained from different seeds: std::runtime_error naming
// both files when their metadata gives the same seed or their weights are identical (one file
// copied over the other), so "seeds 2 and 2: TVD 0.0000" is never reported as a baseline.
void require_two_seeds(const InductionModel& a, const InductionModel& b);

// The export's "evaluation_set" entry: how to rebuild the sequences every induction figure averages.
std::string evaluation_manifest(const InductionTask& task, const InductionBatch& eval, const InductionModel& a,
                                const InductionModel& b);

// Step 1: every head of the induction model on the drawn sequence, with pointers to what to look
// at; chapter 08's Transformer goes to the --html page only.
// transformer_norm: "post" or "pre" when chapter 08's Transformer went to the page, else "".
void show_every_head(Narrator& nar, const InductionModel& im, const InductionBatch& drawn, const InductionCircuit& c,
                     const std::string& transformer_norm);
void add_transformer_views(Narrator& nar, const Transformer& tf, const ToyCorpus& corpus, const SentencePair& pair);

// Step 2: the induction circuit, then the chapter 09 LM on the same test (when it was measured).
void report_induction(Narrator& nar, const InductionModel& im, const InductionCircuit& c, const InductionBatch& eval,
                      const std::optional<LmInductionStudy>& lm, const Metadata& lm_metadata);

// Step 3 (claim 1): one table and verdict per model measured (see InterpretabilityFindings below).
struct InterpretabilityFindings;
void report_distances(Narrator& nar, const InterpretabilityFindings& f, const std::string& norm,
                      std::size_t sentences);
// Step 4 (claim 2).
// Step 4: why this example (choice), the language and teacher forcing, the maps, what to look at
// (reorderings and misses, computed), and the accuracies.
void report_alignment(Narrator& nar, const AlignmentStudy& a, const SentencePair& example, const ExampleChoice& choice);
// Step 5 (claim 3): the per-layer H / log n of the induction model, then each model's count.
void report_uniform(Narrator& nar, const std::string& label, const UniformClaim& u, const std::vector<HeadStat>* stats);
// Step 5: when most of chapter 08's encoder heads are near uniform beside step 4's aligned
// cross-attention, the likely reason (said as one, not measured); nothing otherwise.
void explain_uniform_encoder(Narrator& nar, const UniformClaim& encoder, const AlignmentStudy& a);
// Step 6 (claim 4).
void report_perturbation(Narrator& nar, const PerturbationSweep& p, const InductionModel& a, const InductionModel& b);
// Step 7 (claim 5).
void report_importance(Narrator& nar, const ImportanceClaim& c);
// "+0.028; 0.085": a signed gap and its noise bound at three decimals, or at as many more (up to six) as
// it takes for two different values to print differently, so a verdict on |gap| ≤ bound can be checked.
std::string gap_and_bound(double gap, double bound);
// A gap at the edge of its noise bound: | |gap| − bound | ≤ kNoiseEdge · bound (a verdict another
// sample could flip either way).
inline constexpr double kNoiseEdge = 0.05;
bool at_noise_edge(double gap, double bound);

// Step 8: what held, and the takeaway, from every finding above (the optional ones when their
// model was shipped).
struct InterpretabilityFindings {
  InductionCircuit circuit;
  std::optional<LmInductionStudy> lm_induction;
  std::size_t lm_tokens_seen = 0;
  DistanceClaim distance;
  std::optional<DistanceClaim> lm_distance, encoder_distance;
  AlignmentStudy alignment;
  UniformClaim uniform;
  std::optional<UniformClaim> lm_uniform, encoder_uniform;
  PerturbationSweep perturbation;
  ImportanceClaim importance;
};
void report_claims(Narrator& nar, const InterpretabilityFindings& f);
std::vector<std::string> interpretability_takeaway(const InterpretabilityFindings& f);

}  // namespace attn
