// The trained-model kit of chapters 00–02 (see attn/present/chapter_models.hpp).
#include "attn/present/chapter_models.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/data/safetensors.hpp"
#include "attn/present/chapters.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

ChapterModels::ChapterModels(ChapterApp& ch, std::vector<std::string> own, std::string checkpoint_model)
    : ch_(ch), chapter_(ch.number()), own_(std::move(own)), checkpoint_model_(std::move(checkpoint_model)) {
  if (own_.empty()) throw std::invalid_argument("ChapterModels: a chapter that trains no model needs no kit");
  if (checkpoint_model_.empty()) checkpoint_model_ = own_.front();
  if (!is_own(checkpoint_model_))
    throw std::invalid_argument("ChapterModels: --checkpoint names '" + checkpoint_model_ + "', not one of the chapter's own");
  const std::string where = "data/ch" + chapter_ + "/";
  CLI::App& app = ch_.app();
  CLI::Option* train = nullptr;
  if (own_.size() == 1) {
    train = app.add_flag("--train", train_, _f("train the {} model from scratch (saves to --checkpoint or {})", own_.front(), where));
  } else {
    train = app.add_flag("--train", train_, _f("train {} from scratch (saves to --checkpoint-dir or {})",
                                                fmt::join(own_, ", "), where));
    app.add_option("--checkpoint-dir", checkpoint_dir_,
                   _f("load (or with --train, write) the models <name>.safetensors here (default {})", where))
        ->type_name("DIR");
  }
  app.add_option("--checkpoint", checkpoint_, _f("load (or with --train, write) the {} model here", checkpoint_model_))
      ->type_name("PATH");
  // Without --train there is nothing to train: --steps alone is refused (exit 2), not silently ignored.
  app.add_option("--steps", steps_, _("training steps with --train"))
      ->capture_default_str()
      ->check(CLI::Range(1, 100000))
      ->needs(train);
}

void ChapterModels::add_earlier(const std::string& flag, const std::string& chapter, const std::string& name) {
  earlier_.push_back({flag, chapter, name, ""});
  ch_.app()
      .add_option(flag, earlier_.back().path,
                  _f("chapter {}'s model (default: data/ch{}/{}.safetensors)", chapter, chapter, name))
      ->type_name("PATH")
      ->check(existing_input_file());  // only read: a wrong path is named before the first step
}

bool ChapterModels::is_own(const std::string& name) const {
  return std::find(own_.begin(), own_.end(), name) != own_.end();
}

const ChapterModels::Earlier* ChapterModels::earlier(const std::string& name) const {
  for (const Earlier& e : earlier_)
    if (e.name == name) return &e;
  return nullptr;
}

std::string ChapterModels::path_for(const std::string& name) const {
  if (is_own(name)) {
    if (name == checkpoint_model_ && !checkpoint_.empty()) return checkpoint_;
    if (!checkpoint_dir_.empty()) return checkpoint_dir_ + "/" + name + ".safetensors";
    // Trained now: written into the data folder (ATTN_DATA_DIR when set), never found file by file.
    return train_ ? trained_checkpoint(chapter_, name) : shipped_checkpoint(chapter_, name);
  }
  if (const Earlier* e = earlier(name)) return e->path.empty() ? shipped_checkpoint(e->chapter, name) : e->path;
  throw std::invalid_argument("ChapterModels: chapter " + chapter_ + " declared no model '" + name + "'");
}

TrainConfig ChapterModels::train_config(const Narrator& nar) const {
  TrainConfig tc;
  tc.steps = steps_;
  tc.seed = nar.options().seed;
  return tc;
}

const ToyCorpus& ChapterModels::corpus() {
  if (!corpus_) corpus_ = make_toy_corpus(chapter_corpus_config());
  return *corpus_;
}

ChapterModel ChapterModels::seq2seq(const std::string& name, const Narrator& nar) {
  const bool own = is_own(name);
  const std::string path = path_for(name);  // throws for an undeclared name
  const std::string chapter = own ? chapter_ : earlier(name)->chapter;
  try {
    return chapter_model(chapter, name, corpus(), own && train_, path, train_config(nar), own && !nar.quiet());
  } catch (const SafetensorsError& e) {
    const std::string what = e.what();
    if (train_ || what.find(": checkpoint not found") == std::string::npos) throw;
    throw SafetensorsError(what + " (" + missing_advice(name) + ")");
  }
}

// What to do about a missing model file, naming only flags this chapter has.
std::string ChapterModels::missing_advice(const std::string& name) const {
  if (const Earlier* e = earlier(name))
    return _f("chapter {}'s model: give its file with {}, or make it with {} --train", e->chapter, e->flag,
              chapter_info(e->chapter).folder);
  if (name == checkpoint_model_ && !checkpoint_.empty()) return _f("--train --checkpoint {} makes it", checkpoint_);
  if (!checkpoint_dir_.empty())
    return _f("is --checkpoint-dir right? --train --checkpoint-dir {} writes every model there", checkpoint_dir_);
  return _("the shipped file is missing: reinstall, set ATTN_DATA_DIR, or make it with --train");
}

}  // namespace attn
