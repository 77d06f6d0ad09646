// The export contract (tests and outside tools read it): `--export DIR` writes one float32
// C-order .npy per shown tensor and DIR/manifest.json =
//   {"written_by": "attention_step_by_step", "chapter": "03", "seed": 7,
//    "tensors": [{"name": "scores", "file": "scores.npy",
//    "shape": [4, 4], "step": 2}, …]}
// (plus "files": ["results.json"] when a chapter adds whole files, and any extra entries a chapter
// sets, e.g. chapter 09's "config"). Names are stable identifiers
// documented per chapter.
// The export replaces DIR as a whole: everything is written into a hidden sibling folder
// (.DIR.attn-export-PID), which is then swapped with DIR in one atomic step (Linux renameat2
// RENAME_EXCHANGE) and the old contents removed. Killed at any moment, DIR holds either the
// complete previous export or the complete new one; a staging folder left by a killed run is
// removed by the next export. Because the folder is replaced, DIR must be empty or hold an earlier
// export of this program: a manifest.json carrying "written_by": "attention_step_by_step" and
// nothing the manifest does not list. Anything else (a folder of someone's .npy files, a file added
// beside an export) is refused before any work starts, and so is any folder inside the shipped
// data (data/, $ATTN_DATA_DIR). A missing DIR appears only once the export is complete (the staging
// folder is renamed into place), so a run that fails first leaves no folder; the folders above DIR
// are never created.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RecordedTensor {
  std::string name;
  Shape shape;
  std::vector<float> data;
  int step = 0;
  Labels query_tokens, key_tokens;  // written as "query_tokens" / "key_tokens" when not empty
};

class ExportRecorder {
 public:
  // Keeps a copy. A name may be recorded once; a second time throws (names are identifiers).
  void add(const std::string& name, const Shape& shape, const float* data, int step);
  // A whole file written beside the tensors (e.g. "results.json"); listed under "files".
  void add_file(const std::string& file, std::string bytes);
  bool has(const std::string& name) const;
  // The tokens along a recorded tensor's query and key axes (throws ExportError for an unknown name).
  void set_tokens(const std::string& name, const Labels& query_tokens, const Labels& key_tokens);
  // An extra top-level manifest entry (e.g. a model's "config"); value is JSON text. Throws
  // ExportError for invalid JSON or a reserved key (chapter, seed, tensors, files).
  void set_manifest_field(const std::string& key, const std::string& json_value);
  // The same (chapter 08's name for it).
  void add_manifest_field(const std::string& key, const std::string& json_text);
  const std::vector<RecordedTensor>& tensors() const { return tensors_; }

  // Writes every tensor and the manifest into dir (which appears, complete, if it was missing).
  void write(const std::string& dir, const std::string& chapter, std::uint64_t seed) const;

 private:
  std::vector<RecordedTensor> tensors_;
  std::vector<std::pair<std::string, std::string>> files_;  // name, bytes
  std::vector<std::pair<std::string, std::string>> fields_;  // extra manifest fields: key, JSON text
};

// Checks that dir's parent exists, that dir is missing, empty or holds an earlier export
// of this program only, that it is not inside the shipped data, and proves that it
// and the folder holding it are writable (probe files). Throws ExportError with the reason
// otherwise (an empty name too). Called before any work starts.
void prepare_export_dir(const std::string& dir);

// A tensor name must be a safe file stem: letters, digits, '_', '-', '.'.
bool valid_export_name(const std::string& name);

}  // namespace attn
