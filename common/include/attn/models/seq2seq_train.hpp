// Training and loading the translation models of chapters 00–02 (attn/models/seq2seq.hpp):
//   Adam (Kingma & Ba 2015), gradient clipping by global norm, teacher forcing, batches of one exact
//   source length (attn/data/batching.hpp), greedy BLEU on the validation split every `valid_every` steps,
//   and the best model on validation kept (the attention model's longest bucket slipped late in
//   training at a constant learning rate in the prototype). Deterministic: same seed, same bits.
// Numerics never print: a chapter that wants a progress bar passes TrainConfig::on_step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/data/corpus.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/models/seq2seq.hpp"

namespace attn {

// The corpus every chapter 00–02 model trains and is measured on (seed 1, 20000 / 500 / 1200
// pairs, source lengths 4–60).
CorpusConfig chapter_corpus_config();

struct TrainConfig {
  std::size_t steps = 1500;
  std::size_t batch = 64;
  std::size_t valid_every = 100;  // greedy validation BLEU every so many steps (and at the end)
  float lr = 2e-3f;
  bool cosine = true;             // decay lr along half a cosine to lr/10 at the last step
  double clip = 1.0;              // max global gradient norm
  std::uint64_t seed = 1;         // initialisation and batch order
  // Called after each step with the step (1-based), its training loss and the target tokens it
  // processed; chapters pass one that draws a progress bar (attn/present/progress.hpp).
  std::function<void(std::size_t step, double loss, std::int64_t tokens)> on_step;
};

struct ValidPoint {
  std::size_t step;
  double loss;   // teacher-forced validation cross-entropy
  double bleu;   // greedy corpus BLEU on the validation split, 0–100
};

struct TrainResult {
  Seq2Seq best;                   // the parameters with the best validation BLEU
  std::size_t best_step = 0;
  double best_bleu = 0.0;
  std::vector<float> train_losses;  // one per step
  std::vector<ValidPoint> valid;
  double seconds = 0.0;           // wall time of the whole run, validation included
};

TrainResult train_seq2seq(const Seq2SeqConfig& cfg, const ToyCorpus& corpus, const TrainConfig& tc);

// Teacher-forced mean cross-entropy of m on pairs (token-weighted).
double mean_loss(const Seq2Seq& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                 const Vocab& tgt_vocab);

// Checkpoints: every parameter by the name visit_params gives it (unused, empty ones left out) plus
// metadata {"model": model_name, …}.
void save_seq2seq(const std::string& path, const Seq2Seq& m, const Metadata& metadata = {});
// Builds the model `name` (attn/models/seq2seq.hpp config_for) and loads it; throws SafetensorsError
// naming the file when it is missing, corrupt, of another model or of other shapes.
Seq2Seq load_seq2seq(const std::string& path, const std::string& name, std::size_t src_vocab, std::size_t tgt_vocab,
                     Metadata* metadata = nullptr);

// Where a chapter's shipped checkpoint lives: <data>/chNN/<name>.safetensors, with <data> =
// $ATTN_DATA_DIR, ./data, or data/ next to the build folder holding the running program.
std::string shipped_checkpoint(const std::string& chapter, const std::string& name);
// Where --train writes it when no path is given: <data_dir()>/chNN/<name>.safetensors — inside
// $ATTN_DATA_DIR when that is set, never in the source tree behind it (attn/data/data_files.hpp).
std::string trained_checkpoint(const std::string& chapter, const std::string& name);

}  // namespace attn
