// Training and checkpoints of the Transformer (attn/models/transformer.hpp) on the toy corpus of
// chapters 00–02: Adam (β2 = 0.98, ε = 1e-9, the paper's §5.3) with the warm-up then
// inverse-square-root schedule (eq. 3, attn/nn/schedule.hpp), label smoothing 0.1, gradient
// clipping, batches of one exact source length, greedy validation BLEU every `valid_every` steps,
// the best model on validation kept. Deterministic: same seed, same bits. Numerics never print:
// a chapter that wants a progress bar passes on_step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attn/data/corpus.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/models/transformer.hpp"

namespace attn {

// Adam's decay rates of its running averages of the gradient (β1) and of its square (β2), and its ε:
// β2 = 0.98 and ε = 1e-9 as in Vaswani et al. 2017, §5.3 (β1 0.9 there too).
inline constexpr float kTransformerAdamBeta1 = 0.9f, kTransformerAdamBeta2 = 0.98f, kTransformerAdamEps = 1e-9f;

struct TransformerTrainConfig {
  std::size_t steps = 1500;
  std::size_t batch = 64;
  std::size_t valid_every = 250;  // greedy validation BLEU (and at the last step); 0 = only at the end
  bool validate = true;           // false: no validation at all (short studies); best = the last model
  double lr_factor = 0.5;         // eq. 3's scale: lr = factor · d^−½ · min(step^−½, step · warmup^−³ᐟ²)
  std::int64_t warmup = 400;
  bool use_warmup = true;         // false: the peak rate from step 1, then the same decay
  double clip = 1.0;              // max global gradient norm (0 = no clipping)
  std::uint64_t seed = 1;         // initialisation and batch order
  std::function<void(std::size_t step, double loss, std::int64_t tokens)> on_step;
};

// The learning rate at `step` (≥ 1) under tc for a model of width d_model.
double transformer_learning_rate(const TransformerTrainConfig& tc, std::size_t d_model, std::int64_t step);

struct TransformerValidPoint {
  std::size_t step;
  double bleu;  // greedy corpus BLEU on the validation split, 0–100
};

struct TransformerTrainResult {
  Transformer best;
  std::size_t best_step = 0;
  double best_bleu = 0.0;
  std::vector<float> train_losses;  // label-smoothed loss, one per step
  std::vector<float> grad_norms;    // global gradient norm before clipping, one per step
  std::vector<TransformerValidPoint> valid;
  double seconds = 0.0;             // wall time of the whole run, validation included
};

TransformerTrainResult train_transformer(const TransformerModelConfig& cfg, const ToyCorpus& corpus,
                                         const TransformerTrainConfig& tc);

// Greedy corpus BLEU (0–100) of m on pairs.
double transformer_bleu(const Transformer& m, const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                        const Vocab& tgt_vocab);

// The recorded curves, stored in a checkpoint beside the weights as tensors "curve.*".
struct TrainingCurves {
  std::vector<float> train_loss, grad_norm;       // per step
  std::vector<float> valid_step, valid_bleu;      // per validation
};
TrainingCurves curves_of(const TransformerTrainResult& r);

// Weights by name (for_each_param), the curves, and metadata with the config ("model":
// "transformer", "d_model", "heads", "d_ff", "enc_layers", "dec_layers", "norm", "tie_output",
// "src_vocab", "tgt_vocab") plus anything in `metadata`.
void save_transformer(const std::string& path, const Transformer& m, const TrainingCurves& curves = {},
                      const Metadata& metadata = {});
// Rebuilds the model from the file's config and loads it; throws SafetensorsError naming the file
// when it is missing, corrupt, not a Transformer, or has a missing, extra or misshapen tensor.
Transformer load_transformer(const std::string& path, TrainingCurves* curves = nullptr, Metadata* metadata = nullptr);

}  // namespace attn
