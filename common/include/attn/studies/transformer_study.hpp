// Measured experiments on the Transformer of attn/models/transformer.hpp (chapter 08):
//   Post-Norm vs Pre-Norm (Xiong et al. 2020, "On Layer Normalization in the Transformer
//   Architecture"): the gradient norm of each layer's parameters at initialisation, and short
//   training runs with and without learning-rate warm-up, loss after K steps, several seeds;
//   the training step's time (forward + backward + Adam), median of several steps after warm-up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/data/corpus.hpp"
#include "attn/models/transformer.hpp"

namespace attn {

// The gradient norm of each layer group ("embeddings", "enc.0", …, "dec.N", "final norms", "out")
// at initialisation (seed), for one fixed batch of the corpus's training split.
struct LayerGradNorms {
  std::vector<std::string> layers;
  std::vector<double> norms;
};
LayerGradNorms grad_norms_at_init(const TransformerModelConfig& cfg, const ToyCorpus& corpus, std::size_t batch,
                                  std::uint64_t seed);

// The gradient norm ‖∂L/∂W2‖_F of each layer's second FFN matrix at initialisation (seed), on the
// same batch (Xiong et al. 2020, Fig. 3), layer 0 first.
struct FfnGradNorms {
  std::vector<double> encoder, decoder;
};
FfnGradNorms ffn_w2_grad_norms(const TransformerModelConfig& cfg, const ToyCorpus& corpus, std::size_t batch,
                               std::uint64_t seed);

// The untrained model's next-word distributions p: the weights --train starts from (transformer_init
// at `seed`), on the first training batch of `batch` sentences of 20 source words, every target
// position but <pad>. entropy: the mean of −Σ_j p_j·ln p_j; unrelated_loss: the mean of
// −(1/V)·Σ_j ln p_j, the cross-entropy expected of a target that has nothing to do with p, which
// is at least ln V (the arithmetic–geometric mean inequality), equal only for a uniform p.
struct InitialPredictions {
  std::size_t rows = 0;
  double entropy = 0.0, unrelated_loss = 0.0;
};
InitialPredictions initial_predictions(const TransformerModelConfig& cfg, const ToyCorpus& corpus, std::size_t batch,
                                       std::uint64_t seed);

// One short run: mean training loss over the last 10 of `steps` steps (NaN if it diverged).
struct WarmupRun {
  NormPlacement norm;
  bool warmup;
  std::uint64_t seed;
  double final_loss;
};
struct WarmupStudyConfig {
  std::size_t steps = 300, batch = 32;
  std::int64_t warmup = 150;   // with warm-up: the rate rises over these steps
  double lr_factor = 2.0;      // eq. 3's factor (the peak rate is factor · d^−½ · warmup^−½)
  std::vector<std::uint64_t> seeds = {1, 2, 3};
};
std::vector<WarmupRun> warmup_study(const TransformerModelConfig& cfg, const ToyCorpus& corpus,
                                    const WarmupStudyConfig& sc);

// Median milliseconds of one training step on batch `batch` of source length src_len (the
// target is one longer: <bos> … or … <eos>), over `reps` steps after 2 warm-up steps.
// Also the median CPU time of the process per step (std::clock: all threads together), which on a
// busy shared machine estimates what the step costs on an idle one with one thread.
struct StepTiming {
  double median_ms = 0.0;
  double median_cpu_ms = 0.0;
  double min_cpu_ms = 0.0, max_cpu_ms = 0.0;  // the spread of the timed steps' CPU times
  std::size_t batch = 0, src_len = 0, tgt_len = 0, reps = 0;
};
StepTiming time_transformer_step(const TransformerModelConfig& cfg, const ToyCorpus& corpus, std::size_t batch,
                                 std::size_t src_len, std::size_t reps, std::uint64_t seed = 1);

// A peer's time for the same training step, as written by chapters/08_transformer/pytorch_step_time.py
// (one JSON object). Throws std::runtime_error naming the file when it cannot be read or lacks a field.
struct PeerStepTime {
  std::string framework;  // e.g. "PyTorch 1.13.0a0"
  double wall_ms = 0.0, cpu_ms = 0.0;
  std::size_t batch = 0, src_len = 0, tgt_len = 0, threads = 0, parameters = 0;
  double load_average = 0.0;  // the 1-minute load average when it was measured
  std::string measured_on;    // "measured_on" (a date), "" when the file does not say
  std::string machine;        // "machine" (the CPU), "" when the file does not say
};
PeerStepTime read_peer_step_time(const std::string& path);
// The same from the file's text (path only names it in messages); every field type- and range-checked.
PeerStepTime parse_peer_step_time(const std::string& text, const std::string& path);

}  // namespace attn
