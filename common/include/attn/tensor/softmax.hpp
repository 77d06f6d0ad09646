// Softmax, numerically stable: subtract the row's max before exp, so logits of ±1e4 stay finite.
// An additive mask holds 0 (keep), −∞ (drop) or any finite bias; a row whose entries are all −∞
// gives zeros, never NaN (there is nothing to attend to).
//   softmax(x)_j = exp(x_j + m_j − M) / Σ_k exp(x_k + m_k − M),   M = max_k (x_k + m_k)
#pragma once

#include <cstddef>

#include "attn/tensor/tensor.hpp"

namespace attn {

// The softmax family: every softmax, log-softmax and log-sum-exp in the core (the trainable
// layers; the sparse, tiled and cached attention paths; the loss; decoding and sampling; the
// interpretability losses) calls one of the row functions below. Outside it, exp appears only in
// references written out for comparison, the online (streaming) softmax whose running rescale is
// the lesson of chapters 06 and 11, and functions that are not a softmax (GELU, sigmoid, the
// Gaussian of local attention, BLEU's brevity penalty): scripts/lint checks it.
//
// The one softmax kernel, on one row of n values. mask may be nullptr; out may alias x. Each
// weight is exp(z_j − M) divided by the row's sum (one rounding per entry); the sum runs left to
// right. n = 0 or a row of all −∞ gives zeros.
// Float for the forward passes, double for the gradient checks (the same code in both).
void softmax_row(float* out, const float* x, const float* mask, std::size_t n);
void softmax_row(double* out, const double* x, const double* mask, std::size_t n);

// Softmax at temperature τ > 0 (what sampling draws from): p_j = exp((x_j − M)/τ) / Σ_k exp((x_k − M)/τ).
// Each x_j − M is rounded to float, divided by τ, exponentiated and summed in double (left to
// right); each p_j is rounded to float once. n = 0 or a row of all −∞ gives zeros. out may alias x.
// Throws std::invalid_argument unless τ > 0 (greedy decoding, τ = 0, is an argmax, not a softmax).
void softmax_row_temperature(float* out, const float* x, std::size_t n, float temperature);

// Log-sum-exp of one row: log Σ_j exp(x_j), computed as M + log Σ_j exp(x_j − M), M = max_j x_j,
// so no exp overflows (logits of ±1e4 stay finite). The sum runs left to right in the row's type.
// n = 0 or a row of all −∞ gives −∞ (the log of an empty sum).
float logsumexp_row(const float* x, std::size_t n);
double logsumexp_row(const double* x, std::size_t n);
// The same for a float row, all in double: M, every x_j − M (exact) and the sum.
double logsumexp_row_in_double(const float* x, std::size_t n);

// Log-softmax of one row: out_j = x_j − log Σ_k exp(x_k), finite where softmax_row underflows to 0.
// For a float row each x_j − M is rounded to float and its exp summed in double; the log-sum-exp
// M + log Σ is rounded to float once and subtracted from each x_j. out may alias x. n = 0 does
// nothing; a row of all −∞ gives all −∞ (every probability 0).
void log_softmax_row(float* out, const float* x, std::size_t n);
void log_softmax_row(double* out, const double* x, std::size_t n);

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
