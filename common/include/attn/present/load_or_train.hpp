// Getting one of a chapter's models with one call: trained now (--train) and saved, or loaded from
// its file. Every chapter that ships a checkpoint goes through it: the seq2seq models of chapters
// 00–02 (chapter_model, ChapterModels), chapter 05's position models, chapter 08's Transformer and
// chapter 10's induction models.
//   with how.train:  how.path is checked first (check_output_file: never a device, a folder or a
//                    missing folder two levels up; OutputFileError before any training); a progress
//                    bar over how.steps on stderr (when how.progress; plain lines when stderr is not
//                    a terminal) around train(on_step); then the folder of how.path is created (one
//                    level) and save(how.path) writes the model;
//   otherwise:       load(how.path).
// Returns whether it trained. An exception from any of the three passes through (the bar is closed).
//   const bool trained = load_or_train({path, train, tc.steps, !nar.quiet()},
//       [&](const std::string& p) { m = load_x(p); },
//       [&](const StepCallback& on_step) { tc.on_step = on_step; m = train_x(tc); },
//       [&](const std::string& p) { save_x(p, m); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace attn {

// What the training loops' on_step receives: the step (1-based), its loss, the tokens it processed.
using StepCallback = std::function<void(std::size_t step, double loss, std::int64_t tokens)>;

struct LoadOrTrain {
  std::string path;       // the file loaded from, or (training) written to
  bool train = false;     // --train
  std::size_t steps = 0;  // the training steps, for the progress bar
  bool progress = false;  // draw the bar (pass !nar.quiet())
};

bool load_or_train(const LoadOrTrain& how, const std::function<void(const std::string& path)>& load,
                   const std::function<void(const StepCallback& on_step)>& train,
                   const std::function<void(const std::string& path)>& save);

}  // namespace attn
