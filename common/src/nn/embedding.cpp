// Embedding lookup and its scatter-add backward (see attn/nn/embedding.hpp).
#include "attn/nn/embedding.hpp"

#include <stdexcept>
#include <string>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

Mat embedding_init(std::size_t vocab, std::size_t dim, Rng& rng, float stddev) {
  return rng.normal_mat(vocab, dim, stddev);
}

namespace {
void check_id(const char* fn, int id, std::size_t vocab, std::size_t n) {
  if (id < 0 || std::size_t(id) >= vocab)
    throw std::out_of_range(std::string(fn) + ": ids[" + std::to_string(n) + "] = " + std::to_string(id) +
                            " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
}
}  // namespace

template <class T>
void embedding_forward(MatT<T>& out, const std::vector<int>& ids, const MatT<T>& table) {
  // ids: (N,), table: (V, D) -> out: (N, D)
  const std::size_t n = ids.size(), v = table.shape(0), d = table.shape(1);
  ensure_shape(out, {n, d});
  for (std::size_t i = 0; i < n; ++i) {
    check_id("embedding_forward", ids[i], v, i);
    std::copy(table.data() + std::size_t(ids[i]) * d, table.data() + (std::size_t(ids[i]) + 1) * d,
              out.data() + i * d);  // out[i] = table[ids[i]]
  }
}

template <class T>
void embedding_backward(MatT<T>& dtable, const MatT<T>& dout, const std::vector<int>& ids) {
  // dout: (N, D) -> dtable: (V, D)
  const std::size_t n = ids.size(), v = dtable.shape(0), d = dtable.shape(1);
  expect_shape("embedding_backward", "dout", shape_of(dout), {n, d});
  for (std::size_t i = 0; i < n; ++i) {
    check_id("embedding_backward", ids[i], v, i);
    // forward: out[i] = table[ids[i]]
    T* row = dtable.data() + std::size_t(ids[i]) * d;
    for (std::size_t j = 0; j < d; ++j) row[j] += dout(i, j);
  }
}

template void embedding_forward(MatT<float>&, const std::vector<int>&, const MatT<float>&);
template void embedding_forward(MatT<double>&, const std::vector<int>&, const MatT<double>&);
template void embedding_backward(MatT<float>&, const MatT<float>&, const std::vector<int>&);
template void embedding_backward(MatT<double>&, const MatT<double>&, const std::vector<int>&);

}  // namespace attn
