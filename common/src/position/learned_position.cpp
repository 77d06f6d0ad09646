// Learned absolute position table (see attn/position/learned_position.hpp).
#include "attn/position/learned_position.hpp"

#include <string>

namespace attn {

Mat learned_position_init(std::size_t max_len, std::size_t d, Rng& rng, float stddev) {
  return rng.normal_mat(max_len, d, stddev);
}

namespace {
void check_limit(const char* fn, std::size_t start, std::size_t rows, std::size_t max_len) {
  if (start + rows > max_len)
    throw PositionLimitError(std::string(fn) + ": position " + std::to_string(start + rows - 1) +
                             " has no learned row — the table was trained for positions 0 … " +
                             std::to_string(max_len == 0 ? 0 : max_len - 1) + " (max_len " + std::to_string(max_len) + ")");
}
}  // namespace

template <class T>
void learned_position_forward(MatT<T>& y, const MatT<T>& x, const MatT<T>& table, std::size_t start) {
  // x: (T, d), table: (max_len, d) -> y: (T, d)
  expect_shape("learned_position_forward", "table", shape_of(table), {0, x.shape(1)});
  check_limit("learned_position_forward", start, x.shape(0), table.shape(0));
  if (&y != &x) y = x;
  for (std::size_t t = 0; t < x.shape(0); ++t)
    for (std::size_t c = 0; c < x.shape(1); ++c) y(t, c) += table(start + t, c);
}

template <class T>
void learned_position_backward(MatT<T>& dx, MatT<T>& dtable, const MatT<T>& dy, std::size_t start) {
  // dy: (T, d) -> dx: (T, d) +=, dtable: (max_len, d) +=
  expect_shape("learned_position_backward", "dtable", shape_of(dtable), {0, dy.shape(1)});
  check_limit("learned_position_backward", start, dy.shape(0), dtable.shape(0));
  if (dx.size() > 0) expect_same_shape("learned_position_backward", "dx", dx, "dy", dy);
  for (std::size_t t = 0; t < dy.shape(0); ++t)
    for (std::size_t c = 0; c < dy.shape(1); ++c) {
      // in the forward pass this was: y[t] = x[t] + P[start + t]
      if (dx.size() > 0) dx(t, c) += dy(t, c);
      dtable(start + t, c) += dy(t, c);
    }
}

template void learned_position_forward(MatT<float>&, const MatT<float>&, const MatT<float>&, std::size_t);
template void learned_position_forward(MatT<double>&, const MatT<double>&, const MatT<double>&, std::size_t);
template void learned_position_backward(MatT<float>&, MatT<float>&, const MatT<float>&, std::size_t);
template void learned_position_backward(MatT<double>&, MatT<double>&, const MatT<double>&, std::size_t);

}  // namespace attn
