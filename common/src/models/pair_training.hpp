// Private to common/src/models: what the two translation models' loops share on top of the
// training-loop kit (seq2seq_train.cpp, transformer_train.cpp): the corpus's training pairs in
// batches of one source length, reshuffled each epoch by their own generator (seed, stream 77:
// independent of the initialisation); the teacher-forced step over the next batch; the best model
// on validation BLEU (ties keep the earlier; before any validation, the initial model at step 0).
#pragma once

#include <cstdint>

#include "attn/data/batching.hpp"
#include "attn/data/corpus.hpp"
#include "attn/nn/train_loop.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {

template <class Model, class Tape>
class PairTraining {
 public:
  PairTraining(const ToyCorpus& corpus, std::size_t batch, std::uint64_t seed, const Model& initial)
      : order_(seed, /*stream=*/77),
        batches_([this, &corpus, batch] {
          return make_batches(corpus.train, corpus.source_vocab, corpus.target_vocab, batch, &order_);
        }),
        best(initial, Better::higher, /*floor=*/-1.0) {}
  PairTraining(const PairTraining&) = delete;
  PairTraining& operator=(const PairTraining&) = delete;

  // Forward (loss = forward(tape, batch)) and backward (backward(tape, batch)) on the next batch;
  // returns the loss and keeps the batch's target tokens for the progress callback.
  template <class Forward, class Backward>
  double step(Forward forward, Backward backward) {
    const Batch& b = batches_.next();
    const float loss = forward(tape_, b);
    backward(tape_, b);
    tokens_ = std::int64_t(count_targets(b.tgt_out, Vocab::pad));
    return double(loss);
  }
  std::int64_t tokens() const { return tokens_; }  // the last batch's target tokens

 private:
  Rng order_;
  EpochBatches<Batch> batches_;
  Tape tape_;
  std::int64_t tokens_ = 0;

 public:
  KeepBest<Model> best;  // on validation BLEU
};

}  // namespace attn
