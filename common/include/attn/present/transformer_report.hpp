// Presentation for chapter 08 (no numerics here): getting the chapter's Transformer (shipped
// checkpoint, --checkpoint PATH or --train, with a progress bar), then one report per step, each
// printing a study of attn/studies/transformer_claims.hpp and choosing its words from the verdicts
// (attn/present/verdict_words.hpp); the block diagram; the export (results.json, translations.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/models/transformer_train.hpp"
#include "attn/present/narrate.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/table.hpp"
#include "attn/studies/transformer_claims.hpp"
#include "attn/studies/transformer_study.hpp"

namespace attn {

struct ChapterTransformer {
  Transformer model;
  std::string path;     // the file loaded or written
  Metadata metadata;    // as stored in the file
  TrainingCurves curves;
  bool trained = false;
};
// Trained now (train = true; saved to checkpoint or data/ch08/transformer.safetensors, with
// threads recorded in the metadata) or loaded from checkpoint or the shipped file.
ChapterTransformer chapter_transformer(const ToyCorpus& corpus, bool train, const std::string& checkpoint,
                                       const TransformerModelConfig& cfg, const TransformerTrainConfig& tc,
                                       int threads, bool progress = false);

// One metric for several models, narrow enough for 100 columns: rows = length buckets + "all",
// one column per model headed by titles[i]; cells as format_score prints them.
enum class LengthMetric { Bleu, Exact, TokenAccuracy };
Table metric_table(const std::vector<NamedResult>& models, const std::vector<std::string>& titles,
                   LengthMetric metric);

// Our training step beside PyTorch's stored figure (chapters/08_transformer/pytorch_step_time.py
// wrote data/ch08/pytorch_step_time.json, on the date it records): the lines chapter 08 prints. The
// two were timed in different runs, so no ratio is printed: only both figures, and whether the
// stored one timed the same step (batch shape, thread count, parameter count).
std::vector<std::string> peer_step_lines(const StepTiming& ours, std::size_t threads, std::size_t parameters,
                                         const std::optional<PeerStepTime>& peer);

// ---- the lesson's reports, one per step ---------------------------------------------------------
// The encoder–decoder as a block diagram in box-drawing characters (stacks, residual paths, norms
// where cfg.norm puts them, masked self-attention, cross-attention), each line under 100 columns.
std::vector<std::string> block_diagram(const TransformerModelConfig& cfg);

// What steps 7–9 and the takeaway sum up.
struct TransformerFindings {
  std::string norm;                  // "post" or "pre": the model narrated
  ParameterParts parts;
  EncoderSharpness sharpness;        // steps 2–4, on the example sentence
  DecoderMaskCheck causal;
  CrossHeads cross;                  // the example sentence
  CrossHeads cross_test;             // every test pair, teacher-forced: the verdict
  std::size_t cross_test_pairs = 0;
  TrainingSummary training;
  std::vector<ModelEval> evals;      // step 7's evaluations
  TranslationFindings translation;
  NormPlacementStudy norms;
  std::optional<WarmupFindings> warmup;  // --norm-study's runs
  CostStudy cost;
  StepTiming step;
  TrainingTimeAccount time;
  std::optional<PeerStepTime> peer;
  std::size_t threads = 1;
  std::size_t layers = 0;            // layers per stack of the trained models (step 7's)
};

void report_model(Narrator& nar, const ChapterTransformer& ct, const ParameterParts& parts, const ToyCorpus& corpus);
void report_encoder(Narrator& nar, const SentencePair& ex, const ExampleRun& run, const EncoderSharpness& s,
                    const Vocab& tgt_vocab);
void report_decoder_mask(Narrator& nar, const ExampleRun& run, const DecoderMaskCheck& c, const Vocab& tgt_vocab);
// c: the example's heads; test: the same over `test_pairs` test pairs (the verdict comes from them).
void report_cross(Narrator& nar, const SentencePair& ex, const ExampleRun& run, const CrossHeads& c,
                  const CrossHeads& test, std::size_t test_pairs, const Vocab& tgt_vocab);
void report_decoder_layer(Narrator& nar, const Transformer& m, const SentencePair& ex, const ExampleRun& run,
                          const Vocab& tgt_vocab);
// Step 6's formula line: the learning-rate schedule (the optimiser's β1, β2 and the label smoothing
// are printed below it, from the training code's constants).
std::string training_formula();
void report_training(Narrator& nar, const ChapterTransformer& ct, const TrainingSummary& s);
// Step 7's evaluations: the RNN models of chapters 00–02, this model greedy and beam 4, the other
// norm's shipped model (when present) and this model on a training sample, all at once, with a
// progress line on a terminal.
std::vector<ModelEval> evaluate_translators(Narrator& nar, const Transformer& m, const ToyCorpus& corpus,
                                            const std::string& norm);
void report_results(Narrator& nar, const TransformerFindings& f, const ToyCorpus& corpus);
// Step 8: the gradients at initialisation, and --norm-study's runs when f.warmup holds them.
void report_norm_placement(Narrator& nar, const TransformerFindings& f, const TransformerModelConfig& cfg);
// --norm-study's table and its reading: warm-up's effect on each norm, Pre- against Post-Norm, and
// how that stands beside Xiong et al. 2020.
void report_warmup_study(Narrator& nar, const WarmupFindings& w);
void report_costs(Narrator& nar, const TransformerFindings& f);
// --export: results.json (every table's figures and every verdict) and translations.json (the
// sentences behind each BLEU figure), written with the tensors.
void export_results(Narrator& nar, const TransformerFindings& f, const ToyCorpus& corpus);
std::vector<std::string> transformer_takeaway(const TransformerFindings& f);

}  // namespace attn
