// Embedding: a lookup table, row i is token i's vector.
//   out[n] = table[ids[n]]      ids: (N,), table: (V, D) -> out: (N, D)
// Backward scatters: dtable[ids[n]] += dout[n] (a token used twice gets both contributions).
#pragma once

#include <vector>

#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

// (V, D) ~ N(0, stddev²); PyTorch's nn.Embedding uses stddev 1.
Mat embedding_init(std::size_t vocab, std::size_t dim, Rng& rng, float stddev = 1.0f);

// ids: (N,), table: (V, D) -> out: (N, D). An id outside [0, V) throws std::out_of_range.
template <class T> void embedding_forward(MatT<T>& out, const std::vector<int>& ids, const MatT<T>& table);
// dout: (N, D) -> dtable: (V, D), accumulated.
template <class T> void embedding_backward(MatT<T>& dtable, const MatT<T>& dout, const std::vector<int>& ids);

}  // namespace attn
