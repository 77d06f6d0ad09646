// Softmax, numerically stable: subtract the row's max before exp, so logits of ±1e4 stay finite.
// An additive mask holds 0 (keep), −∞ (drop) or any finite bias; a row whose entries are all −∞
// gives zeros, never NaN (there is nothing to attend to).
//   softmax(x)_j = exp(x_j + m_j − M) / Σ_k exp(x_k + m_k − M),   M = max_k (x_k + m_k)
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace attn {

// The one softmax kernel: every softmax in the core (these functions, the trainable layers, the
// sparse, tiled, cached and fused attention paths, the loss) calls it on one row of n values.
// mask may be nullptr; out may alias x. Each weight is exp(z_j − M) divided by the row's sum (one
// rounding per entry); the sum runs left to right. n = 0 or a row of all −∞ gives zeros.
// Float for the forward passes, double for the gradient checks (the same code in both).
void softmax_row(float* out, const float* x, const float* mask, std::size_t n);
void softmax_row(double* out, const double* x, const double* mask, std::size_t n);

// Backward of one row y = softmax(x): dx_j += y_j (dy_j − Σ_k dy_k y_k).
void softmax_row_backward(float* dx, const float* y, const float* dy, std::size_t n);
void softmax_row_backward(double* dx, const double* y, const double* dy, std::size_t n);

// x: (R, C) -> (R, C), softmax along `axis` (1: each row sums to 1; 0: each column).
Mat softmax(const Mat& x, std::size_t axis = 1);
// x: (R, C), mask: (R, C) additive -> (R, C), softmax along axis.
Mat softmax(const Mat& x, const Mat& mask, std::size_t axis = 1);
// x: (H, T, S), mask: (T, S) shared by every head (or empty) -> (H, T, S), along the last axis.
Tensor3 softmax(const Tensor3& x, const Mat& mask = {});

// Backward of y = softmax(x) along rows: dx += y ⊙ (dy − Σ_j dy_j y_j).
// y: (R, C), dy: (R, C) -> dx: (R, C), accumulated.
void softmax_rows_backward(Mat& dx, const Mat& y, const Mat& dy);

// Reference in double with plain loops (row-wise), for tests. mask may be empty.
MatD softmax_reference(const Mat& x, const Mat& mask = {});

}  // namespace attn
