// The kit of the chapters that train their models (00–02; chapter 08 uses chapter_transformer): the
// flags they share and getting each model, trained now or loaded, with one call.
//   --train                 retrain this chapter's own models (saved where they are loaded from)
//   --checkpoint PATH       one own model's file (the first own model unless named otherwise)
//   --checkpoint-dir DIR    every own model's file, DIR/<name>.safetensors (chapters with several)
//   --steps N               training steps with --train
//   --<flag> PATH           a model of an earlier chapter that this one only loads (add_earlier)
// A model not named by a flag is the shipped data/chNN/<name>.safetensors (attn/data/data_files.hpp).
//
//   ChapterApp ch("01", 1, 7);
//   ChapterModels models(ch, {"bahdanau"});
//   models.add_earlier("--baseline", "00", "no_attention");
//   return ch.run(argc, argv, [&](Narrator& nar) {
//     const ChapterModel cm = models.seq2seq("bahdanau", nar);  // trained with --train, else loaded
//     …
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "attn/present/cli.hpp"
#include "attn/present/seq2seq_report.hpp"

namespace attn {

class ChapterModels {
 public:
  // own: the models this chapter trains, by name (config_for's names for seq2seq models);
  // checkpoint_model: the one --checkpoint names (default: own.front()).
  ChapterModels(ChapterApp& ch, std::vector<std::string> own, std::string checkpoint_model = "");
  // A model of chapter `chapter` that this one only loads; --<flag> PATH overrides its file.
  void add_earlier(const std::string& flag, const std::string& chapter, const std::string& name);

  bool train() const { return train_; }               // --train
  bool is_own(const std::string& name) const;
  // The file a model is loaded from (or, trained now, written to): --checkpoint, --checkpoint-dir,
  // its --<flag>, or the shipped file. Throws std::invalid_argument for a name never declared.
  std::string path_for(const std::string& name) const;
  // The training settings: --steps, and the run's --seed.
  TrainConfig train_config(const Narrator& nar) const;
  // The corpus every chapter 00–02 model is trained and measured on (made on first use).
  const ToyCorpus& corpus();
  // A seq2seq model: one of this chapter's own, trained now with --train (a progress bar on stderr
  // unless --quiet) and saved to path_for(name); otherwise, and for earlier chapters' models, loaded.
  ChapterModel seq2seq(const std::string& name, const Narrator& nar);

 private:
  struct Earlier {
    std::string flag, chapter, name, path;
  };
  const Earlier* earlier(const std::string& name) const;
  std::string missing_advice(const std::string& name) const;
  ChapterApp& ch_;
  std::string chapter_;
  std::vector<std::string> own_;
  std::string checkpoint_model_;
  std::deque<Earlier> earlier_;  // a deque: CLI11 holds a reference to each path
  bool train_ = false;
  std::string checkpoint_, checkpoint_dir_;
  std::size_t steps_ = TrainConfig{}.steps;
  std::optional<ToyCorpus> corpus_;
};

}  // namespace attn
