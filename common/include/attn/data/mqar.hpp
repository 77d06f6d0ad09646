// Multi-query associative recall (MQAR; Arora et al. 2023, "Zoology", §3.1 and Fig. 2): a sequence
// of key-value pairs, then the keys again in another order; at each repeated key the model must
// name the value that followed it. Attention looks the key up; a recurrent model must have kept
// every pair in its fixed-size state.
//   tokens:  k_0 v_0 k_1 v_1 … k_{n−1} v_{n−1}  k_σ(0) k_σ(1) … k_σ(n−1)      T = 3n
//   targets: −1 everywhere but at the queries, where the target is the key's value
// Keys are drawn without repetition from [0, V/2), values (with repetition) from [V/2, V).
#pragma once

#include <cstddef>
#include <vector>

#include "attn/tensor/rng.hpp"

namespace attn {

struct MqarBatch {
  std::size_t batch = 0;    // B sequences
  std::size_t seq_len = 0;  // T = 3 · pairs
  std::size_t pairs = 0;    // n
  std::vector<int> tokens;  // (B·T,) row-major, sequence b at [b·T, (b+1)·T)
  std::vector<int> targets; // (B·T,) the value at each query, −1 elsewhere (no loss there)
};

// One batch of `batch` sequences with `pairs` pairs over a vocabulary of `vocab` tokens.
// Needs pairs ≥ 1 and pairs ≤ vocab/2 (distinct keys); throws std::invalid_argument otherwise.
MqarBatch mqar_batch(std::size_t batch, std::size_t pairs, std::size_t vocab, Rng& rng);

}  // namespace attn
