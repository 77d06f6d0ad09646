// Multi-head attention forward with every intermediate kept, for chapter 04's narration and export
// (Vaswani et al. 2017, §3.2.2). Right-multiplied, as the chapter prints it:
//   Q = X·W_Q + b_Q (T, H·d_head)  ─split─►  Q_heads (H, T, d_head)      (K, V: G K/V heads)
//   head h: O_h = softmax(Q_h·K_gᵀ/√d_head + M)·V_g,   g = h / (H/G)   (GQA; G = H is MHA)
//   concat = [O_1 … O_H] (T, H·d_head),   output = concat·W_O + b_O (T, d_model)
// It uses the training layer's weights (attn/attention/multi_head.hpp, MultiHead) and is tested to agree with
// multi_head_forward; this one computes per head on split copies, so each step can be shown.
#pragma once

#include <cstddef>

#include "attn/attention/multi_head.hpp"
#include "attn/tensor/tensor.hpp"

namespace attn {

// x: (T, H·d_head) -> (H, T, d_head): head h is the column block [h·d_head, (h+1)·d_head).
Tensor3 split_heads(const Mat& x, std::size_t n_heads);
// x: (H, T, d_head) -> (T, H·d_head): the inverse of split_heads.
Mat merge_heads(const Tensor3& x);

struct MhaTrace {
  Mat q, k, v;                       // (T, H·dh), (T, G·dh), (T, G·dh) projections, bias included
  Tensor3 q_heads, k_heads, v_heads; // (H, T, dh), (G, T, dh), (G, T, dh)
  Tensor3 scores;                    // (H, T, T) Q_h·K_gᵀ/√dh before the mask
  Tensor3 weights;                   // (H, T, T) softmax rows
  Tensor3 heads_out;                 // (H, T, dh)
  Mat concat;                        // (T, H·dh)
  Mat output;                        // (T, d_model)
};

// x: (T, d_model), mask: (T, T) additive or empty -> every intermediate.
MhaTrace multi_head_trace(const Mat& x, const MultiHead& p, const Mat& mask = {});

}  // namespace attn
