// Length extrapolation, measured (chapter 05): one tiny attention model trained once per positional
// encoding on sequences of length L, evaluated at 1×, 2× and 4× L.
// Task — "recall the latest value of this key": every token is a pair (key, value), K keys × V values.
// At position t the target is the value of the most recent earlier token with the same key (positions
// whose key has not appeared before are not scored). Content finds the tokens with the same key;
// only position can tell which of them is the latest — and longer sequences hold more of them.
// Model: embedding (+ sinusoidal / learned positions) → one multi-head attention layer with a strict
// causal mask (j < t; RoPE on q, k or ALiBi biases per head) → W_O → linear read-out over V values.
// Layers, loss and Adam are the training helpers' (linear, embedding, attention_layer, loss, optim);
// checkpoints are safetensors (data/ch05/<encoding>.safetensors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/nn/embedding.hpp"
#include "attn/nn/linear.hpp"
#include "attn/tensor/params.hpp"
#include "attn/position/position_encoding.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

struct ExtrapolationConfig {
  std::size_t keys = 4, values = 8;     // vocabulary K·V = 32 tokens
  std::size_t d_model = 32, heads = 4;  // d_head 8: four RoPE frequencies per head
  std::size_t train_len = 16;           // L
  std::size_t batch = 16, steps = 3000;   // ~1.3 s per encoding on one core
  float lr = 3e-3f;                     // Adam
  std::uint64_t seed = 1;
};

struct RecallData {
  std::vector<std::vector<int>> tokens;   // token = key·V + value
  std::vector<std::vector<int>> targets;  // value of the latest earlier same-key token, or −1
};
// n sequences of length T, tokens uniform over K·V.
RecallData make_recall_data(Rng& rng, std::size_t n, std::size_t T, std::size_t keys, std::size_t values);

class PositionModel {
 public:
  PositionModel(PositionEncoding enc, const ExtrapolationConfig& cfg, Rng& rng);
  PositionEncoding encoding() const { return enc_; }
  ParamRegistry& registry() { return reg_; }
  // One sequence: returns the mean cross-entropy over its scored positions (0 if none) and the number
  // of correct argmax predictions; with train = true also accumulates gradients (scaled by grad_scale).
  // Learned positions throw PositionLimitError past train_len.
  double run(const std::vector<int>& tokens, const std::vector<int>& targets, std::size_t* correct, bool train,
             float grad_scale = 1.0f);

 private:
  PositionEncoding enc_;
  ExtrapolationConfig cfg_;
  Mat emb_, demb_, pos_, dpos_;
  Linear wq_, wk_, wv_, wo_, out_, dwq_, dwk_, dwv_, dwo_, dout_;
  ParamRegistry reg_;
};

struct ExtrapolationResult {
  std::size_t length = 0;
  bool available = false;  // false: the encoding cannot represent these positions (learned table)
  double loss = 0.0, accuracy = 0.0;
  std::size_t scored = 0;
};
// Mean loss and accuracy over every scored position of data (all sequences of one length).
ExtrapolationResult evaluate_extrapolation(PositionModel& m, const RecallData& data);
// Adam on fresh random batches of length train_len; returns the final training loss (mean of the
// last 100 steps, or of every step when there are fewer).
double train_extrapolation(PositionModel& m, const ExtrapolationConfig& cfg);

}  // namespace attn

namespace attn {
// The chapter's table row for one trained model: results at 1×, 2× and 4× train_len on fixed evaluation
// sets (kExtrapolationTestSequences each, seed 2024 + length: the same sequences for every encoding).
inline constexpr std::size_t kExtrapolationTestSequences = 200;
std::vector<ExtrapolationResult> extrapolation_table_row(PositionModel& m, const ExtrapolationConfig& cfg);

// The best a reader blind to order can expect on recall data: it knows the values of the earlier
// tokens with the query's key only as a multiset, so each of them is the latest with probability
// count/total and its best guess is the most frequent one. Scored as a vote that shares a tie
// evenly: a position adds 1/m when its target is one of m most frequent values, else 0. loss: 0
// (no model). The same scored positions as evaluate_extrapolation.
ExtrapolationResult order_blind_vote(const RecallData& data, std::size_t values);
// order_blind_vote on extrapolation_table_row's test sets (1×, 2×, 4× train_len).
std::vector<ExtrapolationResult> order_blind_vote_row(const ExtrapolationConfig& cfg);
}  // namespace attn
