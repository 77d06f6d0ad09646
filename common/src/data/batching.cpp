// Batches of one exact source length (see attn/data/batching.hpp).
#include "attn/data/batching.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace attn {

namespace {
// Fisher–Yates with our own generator (std::shuffle's use of the engine is implementation-defined).
template <class T>
void shuffle_with(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(std::uint32_t(i))]);
}
}  // namespace

std::vector<Batch> make_batches(const std::vector<SentencePair>& pairs, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, std::size_t batch_size, Rng* shuffle) {
  if (batch_size == 0) throw std::invalid_argument("make_batches: batch_size must be positive");
  std::map<std::size_t, std::vector<std::size_t>> by_length;
  for (std::size_t i = 0; i < pairs.size(); ++i) by_length[pairs[i].src.size()].push_back(i);
  std::vector<Batch> batches;
  for (auto& [len, idx] : by_length) {
    if (shuffle) shuffle_with(idx, *shuffle);
    for (std::size_t start = 0; start < idx.size(); start += batch_size) {
      Batch b;
      b.index.assign(idx.begin() + std::ptrdiff_t(start), idx.begin() + std::ptrdiff_t(std::min(idx.size(), start + batch_size)));
      b.size = b.index.size();
      b.src_len = len;
      std::size_t longest = 0;
      for (auto i : b.index) longest = std::max(longest, pairs[i].tgt.size());
      b.tgt_len = longest + 1;
      b.src.reserve(b.size * len);
      b.tgt_in.assign(b.size * b.tgt_len, Vocab::pad);
      b.tgt_out.assign(b.size * b.tgt_len, Vocab::pad);
      for (std::size_t r = 0; r < b.size; ++r) {
        const SentencePair& p = pairs[b.index[r]];
        for (const auto& w : p.src) b.src.push_back(src_vocab.id(w));
        const std::vector<int> y = tgt_vocab.encode(p.tgt);
        b.tgt_in[r * b.tgt_len] = Vocab::bos;
        for (std::size_t t = 0; t < y.size(); ++t) {
          b.tgt_in[r * b.tgt_len + t + 1] = y[t];
          b.tgt_out[r * b.tgt_len + t] = y[t];
        }
        b.tgt_out[r * b.tgt_len + y.size()] = Vocab::eos;
      }
      batches.push_back(std::move(b));
    }
  }
  if (shuffle) shuffle_with(batches, *shuffle);
  return batches;
}

}  // namespace attn
