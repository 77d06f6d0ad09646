// Presentation for chapter 08 (no numerics here): getting the chapter's Transformer (shipped
// checkpoint, --checkpoint PATH or --train, with a progress bar), its tables, and its step time
// beside PyTorch's. (Its training curves are drawn with attn/present/sparkline.hpp.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attn/models/transformer_train.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/table.hpp"
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

// Our training step beside PyTorch's on the same model (chapters/08_transformer/pytorch_step_time.py
// writes data/ch08/pytorch_step_time.json): the lines chapter 08 prints. CPU times are compared (a
// busy machine inflates wall time far more); no ratio when the peer timed another batch shape, thread
// count or parameter count, or when there is no peer figure (peer empty).
std::vector<std::string> peer_step_lines(const StepTiming& ours, std::size_t threads, std::size_t parameters,
                                         const std::optional<PeerStepTime>& peer);

}  // namespace attn
