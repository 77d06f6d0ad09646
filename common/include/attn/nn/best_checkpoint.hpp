// Keeping the best model seen on validation (issue 4: the attention model's longest bucket slipped
// late in training at a constant learning rate). Call offer() after each periodic validation; it
// saves a safetensors checkpoint only when the metric improved (lower is better), atomically.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "attn/tensor/params.hpp"
#include "attn/data/safetensors.hpp"

namespace attn {

class BestCheckpoint {
 public:
  explicit BestCheckpoint(std::string path) : path_(std::move(path)) {}
  // Saves reg to path when valid_loss < best so far; returns whether it did. The file's metadata
  // records the step and the loss. A non-finite loss is never "best".
  bool offer(const ParamRegistry& reg, double valid_loss, std::int64_t step);
  double best_loss() const { return best_; }
  std::int64_t best_step() const { return best_step_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  double best_ = std::numeric_limits<double>::infinity();
  std::int64_t best_step_ = -1;
};

// True on the steps where a loop that validates every `every` steps should validate (and on the last).
inline bool is_validation_step(std::int64_t step, std::int64_t every, std::int64_t total) {
  return step == total || (every > 0 && step % every == 0);
}

}  // namespace attn
