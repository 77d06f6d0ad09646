// MQAR batches (see attn/data/mqar.hpp).
#include "attn/data/mqar.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

namespace attn {

MqarBatch mqar_batch(std::size_t batch, std::size_t pairs, std::size_t vocab, Rng& rng) {
  const std::size_t half = vocab / 2;
  if (pairs == 0 || pairs > half)
    throw std::invalid_argument("mqar_batch: " + std::to_string(pairs) + " pairs need 1 … vocab/2 = " +
                                std::to_string(half) + " distinct keys");
  MqarBatch out;
  out.batch = batch;
  out.pairs = pairs;
  out.seq_len = 3 * pairs;
  out.tokens.assign(batch * out.seq_len, 0);
  out.targets.assign(batch * out.seq_len, -1);
  std::vector<int> keys(half), order(pairs);
  for (std::size_t b = 0; b < batch; ++b) {
    std::iota(keys.begin(), keys.end(), 0);
    for (std::size_t i = 0; i < pairs; ++i) std::swap(keys[i], keys[i + rng.below(std::uint32_t(half - i))]);
    std::vector<int> values(pairs);
    int* tok = &out.tokens[b * out.seq_len];
    int* tgt = &out.targets[b * out.seq_len];
    for (std::size_t i = 0; i < pairs; ++i) {
      values[i] = int(half + rng.below(std::uint32_t(vocab - half)));
      tok[2 * i] = keys[i];
      tok[2 * i + 1] = values[i];
    }
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = pairs; i > 1; --i) std::swap(order[i - 1], order[rng.below(std::uint32_t(i))]);
    for (std::size_t q = 0; q < pairs; ++q) {
      tok[2 * pairs + q] = keys[order[q]];
      tgt[2 * pairs + q] = values[order[q]];
    }
  }
  return out;
}

}  // namespace attn
