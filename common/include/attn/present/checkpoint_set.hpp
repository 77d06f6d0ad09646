// Several checkpoints of one chapter as one set (chapter 05's five models, data/ch05/*.safetensors):
// read together, written together, never mixed.
//   reading:  all from one data folder (require_data_set: never one file from here and one from
//             there), and all from one --train run (check_checkpoint_set); checked when the set is
//             made, before the lesson's first step.
//   --train:  every target checked first (load_or_train's rules, for all of them before the first
//             model trains) and what a killed run left (PATH.tmp.PID) removed; save() stages a model
//             (its temporary file beside the target, the run's id in its metadata) and commit()
//             renames the staged files into place. Until commit() the old set stays whole; a set
//             destroyed uncommitted removes its temporaries.
// A kill between two of commit()'s renames leaves files of two runs side by side, as does a file
// copied in from elsewhere: each file records its run's id (kSetRunKey), and a reader refuses a set
// whose ids differ. A set in which no file records one was made before run ids existed (the
// shipped data/ch05): accepted.
//   CheckpointSet set(names, train);
//   load_or_train({set.path("ch05/rope.safetensors"), train, steps, false}, load, train_fn,
//                 [&](const std::string& p) { set.save(p, model.registry(), metadata); });
//   … every model …;  set.commit();
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/data/output_file.hpp"
#include "attn/data/safetensors.hpp"

namespace attn {

inline constexpr const char* kSetRunKey = "set_run";  // the __metadata__ key of the run's id

// 16 hex digits, new for every call (the clock, the process id and the system's random source).
std::string new_run_id();

// Reads (and validates) every file; throws SafetensorsError naming the first one that does not
// belong with the first: another run's id, or no id beside one that has one. remedy ends the
// message: what the learner can do about it.
void check_checkpoint_set(const std::vector<std::string>& paths, const std::string& remedy);

// The paths of files read as one set (relative as data/ names them, "ch05/rope.safetensors"): all
// from the first data place that holds any of them. One missing there, or there as a folder or
// device, throws DataFileError naming it and the place; none anywhere throws the usual
// missing-file message for the first.
std::vector<std::string> require_data_set(const std::vector<std::string>& relative);

class CheckpointSet {
 public:
  // relative: the files as data/ names them; train: --train (written to data_dir(), else read).
  CheckpointSet(std::vector<std::string> relative, bool train);
  // Where one of them is read from, or (--train) written to: relative is one of the names given.
  const std::string& path(const std::string& relative) const;
  const std::string& run() const { return run_; }  // the id --train records ("" when reading)
  std::string folder() const;                       // the folder holding the first file
  // Stages path's new checkpoint, kSetRunKey = run() added to metadata.
  void save(const std::string& path, const ParamRegistry& reg, Metadata metadata);
  // Renames every staged file into place (--train: throws, writing nothing, unless all were staged).
  void commit();

 private:
  bool train_;
  std::vector<std::string> relative_, paths_;
  std::string run_;
  OutputSet staged_;
  std::size_t saved_ = 0;
};

}  // namespace attn
