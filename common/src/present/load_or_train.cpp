// One model, trained now or loaded (see attn/present/load_or_train.hpp).
#include "attn/present/load_or_train.hpp"
#include "attn/present/checkpoint_set.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "attn/data/data_files.hpp"
#include "attn/data/output_file.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/i18n.hpp"  // last of ours: it defines the _ macro

namespace attn {

namespace {
// What --train may replace: a checkpoint, or nothing yet (check_output_file's rules, one folder level
// may be made). Only a checkpoint is replaced: a text file named by mistake (or through a link) stays.
void check_train_target(const std::string& path) {
  check_output_file(path, "--train", /*new_folder=*/true);
  const std::string target = output_target(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && !looks_like_safetensors(target))
    throw OutputFileError(_f("--train: {} exists and is not a checkpoint (a safetensors file); it is left as it is: "
                             "name another file, or remove this one first", path));
}
}  // namespace

std::string new_run_id() {
  std::random_device source;
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return fnv1a64_hex(std::to_string(now) + "/" + std::to_string(::getpid()) + "/" + std::to_string(source()) + "/" +
                     std::to_string(source()));
}

void check_checkpoint_set(const std::vector<std::string>& paths, const std::string& remedy) {
  std::vector<std::string> runs;  // "" where a file records none
  for (const std::string& path : paths) {
    Metadata meta;
    (void)read_safetensors(path, &meta);
    const auto it = meta.find(kSetRunKey);
    runs.push_back(it == meta.end() ? std::string() : it->second);
  }
  const auto run_of = [](const std::string& id) {
    return id.empty() ? std::string("a run that recorded no id (a set made before run ids)") : "--train run " + shown_path(id);
  };
  for (std::size_t i = 1; i < paths.size(); ++i) {
    if (runs[i] == runs[0]) continue;
    throw SafetensorsError(shown_path(paths[i]) + " does not belong with " + shown_path(paths[0]) + ": it was written by " +
                           run_of(runs[i]) + ", the other by " + run_of(runs[0]) + ". The files of this set were not "
                           "written together (a --train run stopped while it replaced them, or a file copied in from "
                           "elsewhere), and a mixed set is never used. " + remedy);
  }
}

std::vector<std::string> require_data_set(const std::vector<std::string>& relative) {
  namespace fs = std::filesystem;
  check_data_dir_variable();
  for (const DataPlace& p : data_places()) {
    std::error_code ec;
    const auto here = [&](const std::string& r) { return fs::exists(fs::path(p.dir) / r, ec); };
    if (std::none_of(relative.begin(), relative.end(), here)) continue;
    std::vector<std::string> paths;
    for (const std::string& r : relative) {
      const fs::path f = fs::path(p.dir) / r;
      if (!fs::is_regular_file(f, ec)) {
        const std::string what = !fs::exists(f, ec)        ? "is missing"
                                 : fs::is_directory(f, ec) ? "is a folder, not a file"
                                                           : "is not a regular file";
        throw DataFileError(shown_path(f.string()) + " " + what + ": the " + std::to_string(relative.size()) +
                            " files of this set are read from one folder, " + shown_path(f.parent_path().string()) +
                            " (" + p.why + "), never one by one from several. Put the file back, or use a copy of "
                            "the whole set");
      }
      paths.push_back(f.string());
    }
    return paths;
  }
  throw DataFileError(missing_data_file_message(relative.empty() ? std::string() : relative.front(), data_places()));
}

CheckpointSet::CheckpointSet(std::vector<std::string> relative, bool train)
    : train_(train), relative_(std::move(relative)) {
  if (!train_) {
    paths_ = require_data_set(relative_);
    const std::string folder = std::filesystem::path(relative_.front()).parent_path().string();
    check_checkpoint_set(paths_, "Run the chapter with --train to write the whole set again, or put back the "
                                 "shipped data/" + folder + "/ files.");
    return;
  }
  const std::string dir = data_dir();  // $ATTN_DATA_DIR when set: never the source tree behind it
  for (const std::string& r : relative_) paths_.push_back(dir + "/" + r);
  for (const std::string& p : paths_) {
    check_train_target(p);         // all of them before the first model trains
    remove_stale_temporaries(p);  // what a killed --train left behind
  }
  run_ = new_run_id();
}

const std::string& CheckpointSet::path(const std::string& relative) const {
  for (std::size_t i = 0; i < relative_.size(); ++i)
    if (relative_[i] == relative) return paths_[i];
  throw std::invalid_argument("CheckpointSet::path: " + relative + " is not one of the set");
}

std::string CheckpointSet::folder() const {
  return paths_.empty() ? std::string() : std::filesystem::path(paths_.front()).parent_path().string();
}

void CheckpointSet::save(const std::string& path, const ParamRegistry& reg, Metadata metadata) {
  metadata[kSetRunKey] = run_;
  prepare_output_folder(path);
  staged_.add(path, safetensors_bytes(checkpoint_tensors(reg), metadata, path));
  ++saved_;
}

void CheckpointSet::commit() {
  if (!train_) return;
  if (saved_ != paths_.size())
    throw OutputFileError("--train: " + std::to_string(saved_) + " of the " + std::to_string(paths_.size()) +
                          " models were trained; none is written unless all are");  // a chapter's own mistake
  staged_.commit();
}

bool load_or_train(const LoadOrTrain& how, const std::function<void(const std::string& path)>& load,
                   const std::function<void(const StepCallback& on_step)>& train,
                   const std::function<void(const std::string& path)>& save) {
  if (!how.train) {
    load(how.path);
    return false;
  }
  check_train_target(how.path);  // before training, not after
  {
    ProgressBar bar(std::int64_t(how.steps), how.progress);  // plain lines when stderr is not a terminal
    train(bar.callback());
    bar.finish();
  }
  prepare_output_folder(how.path);  // a chapter's data/chNN/: one level, as check_output_file allowed
  save(how.path);                   // the savers write through write_file_atomically: all or nothing
  return true;
}

}  // namespace attn
