// Training the decoder-only language model (attn/models/decoder_lm.hpp) on a token stream:
//   AdamW (Loshchilov & Hutter 2019; decay on matrices only, not on the RMSNorm gains), linear
//   warm-up then cosine decay (attn/nn/schedule.hpp), gradient clipping by global norm, batches of
//   random windows (attn/data/text_corpus.hpp), validation loss every `eval_every` steps.
// Deterministic: same seed, same OpenBLAS thread count -> the same bits.
// Numerics never print: progress goes through on_step.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "attn/models/decoder_lm.hpp"

namespace attn {

struct LmTrainConfig {
  std::size_t steps = 1000;
  std::size_t batch = 16;
  std::size_t time = 256;          // tokens per training window (≤ context)
  double lr = 3e-3, min_lr = 3e-4;  // peak and final learning rate
  std::size_t warmup = 50;
  float weight_decay = 0.1f;
  float beta2 = 0.95f;
  double clip = 1.0;
  std::uint64_t seed = 1;          // initialisation and batch order
  std::size_t eval_every = 100;    // validation loss every so many steps (and at the last)
  std::size_t eval_windows = 32;   // validation windows of `time` tokens each
  std::function<void(std::size_t step, double loss, double lr)> on_step;
  std::function<void(std::size_t step, double valid_loss)> on_eval;
};

struct LmCurvePoint {
  std::size_t step;
  double train_loss;  // mean training loss since the previous point
  double valid_loss;
};

struct LmTrainResult {
  DecoderLM model;
  std::vector<LmCurvePoint> curve;
  double seconds = 0.0;
  double tokens = 0.0;  // training tokens processed
};

LmTrainResult train_decoder_lm(const DecoderLMConfig& cfg, const std::vector<int>& train_tokens,
                               const std::vector<int>& valid_tokens, const LmTrainConfig& tc);

}  // namespace attn
