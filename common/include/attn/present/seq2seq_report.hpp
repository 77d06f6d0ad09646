// Presentation of the chapters 00–02 experiment (no numerics here): the by-length table of BLEU,
// exact match and token accuracy for one or more models, a terminal bar chart of BLEU by length,
// results.json and translations.json for --export, and getting a chapter's model (shipped checkpoint, --checkpoint PATH
// or --train) with one call.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attn/models/seq2seq_eval.hpp"
#include "attn/models/seq2seq_train.hpp"
#include "attn/present/narrate.hpp"
#include "attn/present/table.hpp"

namespace attn {

using NamedResult = std::pair<std::string, EvalResult>;  // model name, its evaluation
// The evaluation of the model `name` among results (std::invalid_argument when absent).
const EvalResult& result_named(const std::vector<NamedResult>& results, const std::string& name);

// Rows: length buckets (+ "all"); per model three columns "<title> BLEU", "exact %", "tok %".
Table length_table(const std::vector<NamedResult>& models);
// A note for a table of format_score cells, when one has two decimals (a score just under 100); else "".
std::string two_decimals_note(const Table& t);
// One figure per cell, as printed (BLEU with one decimal): "86.6". A score below 100 never reads
// "100.0": from 99.95 up it gets two decimals, cut ("99.96", "99.99").
std::string format_score(double x);

// Horizontal bars, one line per (bucket, model), scaled to 0–100:
//   51-60  no_attention  ████▍                              11.0
std::string bleu_chart(const std::vector<NamedResult>& models, std::size_t width = 40);

// {"bleu_by_length": {"<model>": {"5-10": …}}, "exact_match_by_length": …, "token_accuracy_by_length": …}
// as text (chapters pass it to Narrator::export_file), or written atomically to dir/results.json.
// extra_json_object: more top-level fields as a JSON object's text ("" for none).
std::string results_json(const std::vector<NamedResult>& models, const std::string& extra_json_object = "");
// What the figures are computed from, so that a reader can recompute every one of them:
// {"pairs": "<how to regenerate the split>", "buckets": ["5-10", …], "sources": ["w w …", …],
//  "references": […], "alignments": [[j, …], …], "hypotheses": {"<model>": […]}}, in pair order.
std::string translations_json(const std::vector<NamedResult>& models, const std::vector<SentencePair>& pairs);
// With --export: DIR/results.json (results_json) and DIR/translations.json (translations_json).
void export_results(Narrator& nar, const std::vector<NamedResult>& models, const std::vector<SentencePair>& pairs,
                    const std::string& extra_json_object = "");

// A chapter's model: trained now (train = true; saved to checkpoint or the shipped path) or loaded
// from checkpoint (when not empty) or the shipped data/chNN/<name>.safetensors.
struct ChapterModel {
  Seq2Seq model;
  std::string path;       // the file loaded or written
  Metadata metadata;      // as stored in the file
  bool trained = false;
  TrainResult training;   // when trained
};
ChapterModel chapter_model(const std::string& chapter, const std::string& name, const ToyCorpus& corpus, bool train,
                           const std::string& checkpoint, const TrainConfig& tc, bool progress = false);

// The checkpoint's record of its training: {best_step, steps} (0 for a field missing or not a number).
std::pair<std::size_t, std::size_t> checkpoint_steps(const ChapterModel& cm);
// True when the model's best validation score came at its last training step (it may still have
// been improving when training stopped).
inline bool best_at_last_step(const ChapterModel& cm) {
  const auto [best, steps] = checkpoint_steps(cm);
  return steps > 0 && best == steps;
}

// "no attention: 700 steps in 83 s (best at step 650, valid BLEU 71.2) -> data/ch00/no_attention.safetensors"
// A loaded model's training time is said not to be comparable with another's, unless the caller
// says so once for several models (times_explained: chapter 02's report_training_records).
std::string describe_model(const ChapterModel& cm, bool times_explained = false);

}  // namespace attn
