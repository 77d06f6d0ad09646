// Learned absolute positions (BERT, GPT-2): a trainable table with one row per position, added to
// the token embeddings:  y[t] = x[t] + P[start + t]     P: (max_len, d)
// Backward: dx[t] += dy[t],  dP[start + t] += dy[t].
// Its hard limit: a position ≥ max_len has no row — it was never trained and cannot be looked up.
// (The sinusoidal table is added the same way: pass it as P, with as many rows as you need.)
#pragma once

#include <cstddef>
#include <stdexcept>

#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

// Thrown when a sequence reaches past the table: names the position and the table's length.
class PositionLimitError : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

// (max_len, d) ~ N(0, stddev²). 0.02 is BERT's initializer_range (Devlin et al. 2019, config).
Mat learned_position_init(std::size_t max_len, std::size_t d, Rng& rng, float stddev = 0.02f);

// x: (T, d), table: (max_len, d) -> y: (T, d) (resized; may be x). start + T > max_len throws
// PositionLimitError; a width mismatch throws ShapeError.
template <class T>
void learned_position_forward(MatT<T>& y, const MatT<T>& x, const MatT<T>& table, std::size_t start = 0);
// dy: (T, d) -> dx: (T, d) (+=; pass an empty dx to skip it), dtable: (max_len, d) (+=).
template <class T>
void learned_position_backward(MatT<T>& dx, MatT<T>& dtable, const MatT<T>& dy, std::size_t start = 0);

}  // namespace attn
