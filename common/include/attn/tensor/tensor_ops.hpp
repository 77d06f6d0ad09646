// Small tensor utilities that chapters and tests share, so they need not include xtensor's
// heavier view and math headers: a row as a vector, the largest element-wise difference, and
// each row's argmax.
#pragma once

#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

Vec row_of(const Mat& m, std::size_t i);  // m: (R, C) -> (C,)
Mat slice_of(const Tensor3& t, std::size_t i);  // t: (A, B, C) -> (B, C)

// max |a − b| over all entries; the shapes must match (ShapeError otherwise).
double max_abs_diff(const Vec& a, const Vec& b);
double max_abs_diff(const Mat& a, const Mat& b);
double max_abs_diff(const Tensor3& a, const Tensor3& b);
double max_abs_diff(const Mat& a, const MatD& b);

// Index of each row's largest entry, the first one on ties (greedy decoding, token accuracy,
// alignments read off attention weights). x: (N, V) -> (N,)
std::vector<int> argmax_rows(const Mat& x);

}  // namespace attn
