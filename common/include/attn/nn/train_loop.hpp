// The training-loop kit under every loop of the course (seq2seq, the Transformer, the decoder LM,
// the induction model, the extrapolation models): one step is
//   zero the gradients → forward and backward of one batch (the caller's) → clip the global
//   gradient norm → one step of each optimiser at the schedule's rate → the caller's record of the
//   step → validation, on its cadence (every `valid_every` steps and at the last).
// Beside the loop: batches served an epoch at a time (EpochBatches) and the best model seen on
// validation (KeepBest). Nothing here prints; a loop reports progress through its callbacks.
//   TrainLoop loop(/*steps=*/1500, /*clip=*/1.0, /*valid_every=*/100);
//   loop.lr = [&](std::size_t s) { return learning_rate(schedule, std::int64_t(s)); };
//   loop.forward_backward = [&](std::size_t) { const Batch& b = batches.next(); … return loss; };
//   loop.validate = [&](std::size_t s) { best.offer(bleu_now(), s, model); };
//   run_train_loop(loop, reg, {&adam});
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attn/nn/optim.hpp"
#include "attn/tensor/params.hpp"

namespace attn {

// True on the steps a loop validating every `every` steps validates: each multiple of `every`, and
// the last step (every = 0: the last step only).
inline bool is_validation_step(std::size_t step, std::size_t every, std::size_t total) {
  return step == total || (every > 0 && step % every == 0);
}

struct TrainStep {
  std::size_t step = 0;  // 1-based
  double loss = 0.0;     // what forward_backward returned
  double grad_norm = 0.0;  // the global gradient norm before clipping
  double lr = 0.0;       // the rate the optimisers stepped at
};

struct TrainLoop {
  TrainLoop() = default;
  TrainLoop(std::size_t steps_, double clip_, std::size_t valid_every_)
      : steps(steps_), clip(clip_), valid_every(valid_every_) {}
  std::size_t steps = 0;
  double clip = 1.0;            // clip the global gradient norm to this; ≤ 0: measure it, never clip
  std::size_t valid_every = 0;  // validate on each multiple and at the last step; 0: the last only
  // The schedule: the rate at each step; empty: each optimiser's configured rate.
  std::function<double(std::size_t step)> lr;
  // Forward and backward of the step's batch: returns its loss, gradients accumulated into the
  // registry (which the loop has zeroed). Required.
  std::function<double(std::size_t step)> forward_backward;
  std::function<void(const TrainStep&)> after_step;  // recording, progress (may be empty)
  std::function<void(std::size_t step)> validate;    // may be empty: no validation
};

// Runs loop.steps steps over the parameters of reg, stepping each optimiser (in order) after the
// clip. Throws std::invalid_argument without forward_backward or without an optimiser.
void run_train_loop(const TrainLoop& loop, ParamRegistry& reg, const std::vector<Adam*>& optimisers);

// Batches served one at a time from epochs that make_epoch builds (shuffled, say) when the last
// one runs out. Throws std::runtime_error when an epoch has no batch.
template <class Batch>
class EpochBatches {
 public:
  explicit EpochBatches(std::function<std::vector<Batch>()> make_epoch) : make_(std::move(make_epoch)) {}
  const Batch& next() {
    if (next_ == epoch_.size()) {
      epoch_ = make_();
      next_ = 0;
      if (epoch_.empty()) throw std::runtime_error("EpochBatches: an epoch with no batches");
    }
    return epoch_[next_++];
  }

 private:
  std::function<std::vector<Batch>()> make_;
  std::vector<Batch> epoch_;
  std::size_t next_ = 0;
};

// The best model seen on validation, kept in memory: offer() copies the model when its score
// beats the best so far (higher or lower is better; ties keep the earlier model; a NaN score never
// wins). Before any offer it holds `initial` with score `floor` at step 0.
enum class Better { higher, lower };

template <class Model>
class KeepBest {
 public:
  KeepBest(const Model& initial, Better better, double floor) : model_(initial), better_(better), score_(floor) {}
  bool offer(double score, std::size_t step, const Model& m) {
    const bool wins = better_ == Better::higher ? score > score_ : score < score_;
    if (!wins) return false;  // also false for a NaN
    score_ = score;
    step_ = step;
    model_ = m;
    return true;
  }
  double score() const { return score_; }
  std::size_t step() const { return step_; }
  const Model& model() const { return model_; }
  Model take() { return std::move(model_); }

 private:
  Model model_;
  Better better_;
  double score_;
  std::size_t step_ = 0;
};

}  // namespace attn
