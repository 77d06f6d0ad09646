// Induction heads, measured (chapter 10; Elhage et al. 2021, Olsson et al. 2022).
// Task: a block of `period` distinct random tokens repeated until the sequence is full, the
// period drawn anew per sequence from [min_period, max_period] (a fixed period would let a model
// memorise the offset instead of looking the token up). The first repeat cannot be predicted
// (loss ≈ log V); from the second repeat on, the next token is "whatever followed the last time
// this token appeared" — what an induction head does: a previous-token head in layer 0 writes
// "my predecessor was A" into each position; a head in layer 1 finds the position whose
// predecessor matches the current token (prefix matching) and copies its token (copying).
// Training: the attention-only model of attn/models/attn_only.hpp, Adam, fresh batches each step.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "attn/models/attn_only.hpp"
#include "attn/nn/optim.hpp"

namespace attn {

struct InductionTask {
  std::size_t vocab = 64;
  std::size_t length = 48;  // tokens per sequence (≤ the model's context)
  std::size_t min_period = 6, max_period = 20;
};

struct InductionBatch {
  std::size_t batch = 0, len = 0;
  std::vector<int> tokens;            // (B·T)
  std::vector<int> targets;           // (B·T): the next token; −1 at each sequence's last position
  std::vector<std::size_t> periods;   // (B)
  // Sequence b's tokens as a vector.
  std::vector<int> sequence(std::size_t b) const;
};
// Throws std::invalid_argument when the periods do not fit (min > max, max > vocab, 2·min > length).
InductionBatch induction_batch(Rng& rng, const InductionTask& task, std::size_t batch);
// Targets kept only where the predicted token lies in repeat r (r = 1: positions [0, period),
// r = 2: [period, 2·period), …; r = 0: every repeat after the first); the rest set to −1.
std::vector<int> repeat_targets(const InductionBatch& b, std::size_t repeat);

struct InductionTrainConfig {
  InductionTask task;
  AttnOnlyConfig model;  // vocab must equal task.vocab
  std::size_t steps = 3000, batch = 32, curve_every = 25;
  AdamConfig adam{2e-3f};
  std::size_t warmup = 100;  // linear warm-up steps, then constant
  std::uint64_t seed = 1;
  std::function<void(std::size_t step, double loss, std::int64_t tokens)> on_step;
};
struct InductionTrainResult {
  AttnOnly model;
  std::vector<float> loss_curve;  // mean training loss of each block of curve_every steps
  double seconds = 0.0;
};
InductionTrainResult train_induction(const InductionTrainConfig& cfg);

// Per-position cross-entropy (nats) of a forward pass; −1 targets give NaN.
std::vector<double> position_losses(const AttnOnlyCache& cache, const std::vector<int>& targets);

struct RepeatLosses {
  double first = 0.0, second = 0.0;  // mean loss on tokens of the first and the second repeat
};
RepeatLosses repeat_losses(const AttnOnly& m, const InductionBatch& b, const std::vector<HeadEditSpec>& edits = {});

// Elhage et al.'s OV circuit of head h in layer l, direct path: W_E·W_V^h·W_O^h·W_U (V × V).
Mat ov_circuit(const AttnOnly& m, std::size_t layer, std::size_t head);

// Per layer (H, T, T) weights of one sequence (one forward pass, with `edits` applied on the way:
// an edited head shows its edited weights, and later layers see its changed output).
std::vector<Tensor3> attn_only_weights(const AttnOnly& m, const std::vector<int>& tokens,
                                       const std::vector<HeadEditSpec>& edits = {});

}  // namespace attn
