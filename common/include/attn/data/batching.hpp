// Length-bucketed batches: every sentence in a batch has exactly the same source length, so an
// encoder needs no padding, no masks and no packing (and a backward RNN's final state is right).
// Targets are padded with <pad> to the batch's longest and framed for teacher forcing:
//   tgt_in  = <bos> y1 … yn <pad> …       (what the decoder reads)
//   tgt_out = y1 … yn <eos> <pad> …       (what it must predict; <pad> is ignored by the loss)
#pragma once

#include <cstddef>
#include <vector>

#include "attn/data/corpus.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/data/vocab.hpp"

namespace attn {

struct Batch {
  std::size_t size = 0;     // B
  std::size_t src_len = 0;  // S, the same for every sentence in the batch
  std::size_t tgt_len = 0;  // T = longest target + 1
  std::vector<int> src;     // (B, S) row-major ids
  std::vector<int> tgt_in;  // (B, T)
  std::vector<int> tgt_out; // (B, T)
  std::vector<std::size_t> index;  // which pairs (positions in the input vector), in batch order
};

// Groups pairs by exact source length (ascending), cuts each group into batches of at most
// batch_size. With a generator, pairs within a length and the order of batches are shuffled
// (deterministically); without one, the order is the input order, lengths ascending.
std::vector<Batch> make_batches(const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, std::size_t batch_size, Rng* shuffle = nullptr);

}  // namespace attn
