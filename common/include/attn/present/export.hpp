// The export contract (tests and outside tools read it): `--export DIR` writes one float32
// C-order .npy per shown tensor and DIR/manifest.json =
//   {"chapter": "03", "seed": 7, "tensors": [{"name": "scores", "file": "scores.npy",
//    "shape": [4, 4], "step": 2}, …]}
// Names are stable identifiers documented per chapter. Files are first written into a hidden
// staging folder inside DIR and moved into place only when all of them are written, manifest
// last, so an interrupted run never leaves a half-written export.
#pragma once

#include <cstdint>
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
};

class ExportRecorder {
 public:
  // Keeps a copy. A name may be recorded once; a second time throws (names are identifiers).
  void add(const std::string& name, const Shape& shape, const float* data, int step);
  bool has(const std::string& name) const;
  // An extra top-level manifest entry (e.g. a model's "config"); value is JSON text. Throws
  // ExportError for invalid JSON or a reserved key (chapter, seed, tensors).
  void set_manifest_field(const std::string& key, const std::string& json_value);
  const std::vector<RecordedTensor>& tensors() const { return tensors_; }

  // Writes every tensor and the manifest into dir (created if missing).
  void write(const std::string& dir, const std::string& chapter, std::uint64_t seed) const;

 private:
  std::vector<RecordedTensor> tensors_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Creates dir if needed and proves it is writable (by creating and removing a probe file).
// Throws ExportError with the reason otherwise. Called before any work starts.
void prepare_export_dir(const std::string& dir);

// A tensor name must be a safe file stem: letters, digits, '_', '-', '.'.
bool valid_export_name(const std::string& name);

}  // namespace attn
