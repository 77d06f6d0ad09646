// Softmax cross-entropy with padding and label smoothing (see attn/nn/loss.hpp).
#include "attn/nn/loss.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/tensor/softmax.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

std::size_t count_targets(const std::vector<int>& targets, int ignore_index) {
  std::size_t n = 0;
  for (int t : targets) n += t != ignore_index;
  return n;
}

namespace {
void check_targets(const char* fn, const std::vector<int>& targets, std::size_t rows, std::size_t vocab,
                   int ignore_index) {
  if (targets.size() != rows)
    throw ShapeError(std::string(fn) + ": targets has " + std::to_string(targets.size()) +
                     " entries, expected one per row (" + std::to_string(rows) + ")");
  for (std::size_t i = 0; i < rows; ++i)
    if (targets[i] != ignore_index && (targets[i] < 0 || std::size_t(targets[i]) >= vocab))
      throw std::out_of_range(std::string(fn) + ": targets[" + std::to_string(i) + "] = " +
                              std::to_string(targets[i]) + " is outside [0, " + std::to_string(vocab) + ")");
}
}  // namespace

template <class T>
T cross_entropy_forward(MatT<T>& probs, const MatT<T>& logits, const std::vector<int>& targets, int ignore_index,
                        T label_smoothing) {
  // logits: (N, V), targets: (N,) -> probs: (N, V), mean loss
  const std::size_t n = logits.shape(0), v = logits.shape(1);
  check_targets("cross_entropy_forward", targets, n, v, ignore_index);
  ensure_shape(probs, {n, v});
  const std::size_t counted = count_targets(targets, ignore_index);
  T total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const T* z = logits.data() + i * v;
    softmax_row(probs.data() + i * v, z, static_cast<const T*>(nullptr), v);
    if (targets[i] == ignore_index) continue;
    // log p_j = z_j − log Σ exp(z): finite even when p_j underflows to 0
    const T lse = logsumexp_row(z, v);
    // −Σ_j q_j log p_j with q = (1 − ε)·onehot + ε/V
    T mean_logp = 0;
    if (label_smoothing > T(0)) {
      for (std::size_t j = 0; j < v; ++j) mean_logp += z[j] - lse;
      mean_logp /= T(v);
    }
    total += -(T(1) - label_smoothing) * (z[targets[i]] - lse) - label_smoothing * mean_logp;
  }
  return counted > 0 ? total / T(counted) : T(0);
}

template <class T>
void cross_entropy_backward(MatT<T>& dlogits, const MatT<T>& probs, const std::vector<int>& targets,
                            int ignore_index, T label_smoothing, T dloss) {
  // probs: (N, V) -> dlogits: (N, V)
  const std::size_t n = probs.shape(0), v = probs.shape(1);
  expect_same_shape("cross_entropy_backward", "dlogits", dlogits, "probs", probs);
  check_targets("cross_entropy_backward", targets, n, v, ignore_index);
  const std::size_t counted = count_targets(targets, ignore_index);
  if (counted == 0) return;
  const T scale = dloss / T(counted);
  for (std::size_t i = 0; i < n; ++i) {
    if (targets[i] == ignore_index) continue;  // padding: no gradient
    // forward: loss_i = −Σ_j q_j log softmax(z)_j  ->  dz_j = p_j − q_j
    for (std::size_t j = 0; j < v; ++j) {
      const T q = (std::size_t(targets[i]) == j ? T(1) - label_smoothing : T(0)) + label_smoothing / T(v);
      dlogits(i, j) += (probs(i, j) - q) * scale;
    }
  }
}

template float cross_entropy_forward(MatT<float>&, const MatT<float>&, const std::vector<int>&, int, float);
template double cross_entropy_forward(MatT<double>&, const MatT<double>&, const std::vector<int>&, int, double);
template void cross_entropy_backward(MatT<float>&, const MatT<float>&, const std::vector<int>&, int, float, float);
template void cross_entropy_backward(MatT<double>&, const MatT<double>&, const std::vector<int>&, int, double,
                                     double);

}  // namespace attn
