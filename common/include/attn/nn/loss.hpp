// Softmax cross-entropy over a vocabulary, with padding and label smoothing.
//   p = softmax(logits_n),  q = (1 − ε)·onehot(target_n) + ε/V   (Szegedy et al. 2016; ε = 0: plain CE)
//   loss = (1/N') Σ_n −Σ_v q_v log p_v,  over the N' rows whose target is not ignore_index (<pad>)
// Backward: dlogits_n += (p_n − q_n) · dloss / N' for counted rows, 0 for padded ones.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/tensor/tensor_ops.hpp"  // argmax_rows, which greedy decoding uses beside the loss
#include "attn/tensor/tensor_t.hpp"

namespace attn {

// Rows whose target is not ignore_index.
std::size_t count_targets(const std::vector<int>& targets, int ignore_index);

// logits: (N, V), targets: (N,) -> probs: (N, V); returns the mean loss over counted rows (0 when
// none). A target outside [0, V) that is not ignore_index throws std::out_of_range.
template <class T>
T cross_entropy_forward(MatT<T>& probs, const MatT<T>& logits, const std::vector<int>& targets,
                        int ignore_index = -1, T label_smoothing = T(0));

// probs: (N, V) from the forward -> dlogits: (N, V), accumulated; dloss scales the mean loss.
template <class T>
void cross_entropy_backward(MatT<T>& dlogits, const MatT<T>& probs, const std::vector<int>& targets,
                            int ignore_index = -1, T label_smoothing = T(0), T dloss = T(1));

}  // namespace attn
