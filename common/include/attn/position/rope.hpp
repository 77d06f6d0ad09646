// Rotary position embedding, RoPE (Su et al. 2021, RoFormer, eq. 34): rotate each query and key by
// an angle proportional to its position, so their dot product depends only on the distance:
//   pair i = (x[2i], x[2i+1]),  θ_i = base^(−2i/d),  angle = pos·θ_i
//   y[2i]   = x[2i]·cos(pos·θ_i) − x[2i+1]·sin(pos·θ_i)
//   y[2i+1] = x[2i]·sin(pos·θ_i) + x[2i+1]·cos(pos·θ_i)
//   (R_m q)·(R_n k) = q·R_(n−m) k        — a function of n − m only
// Pairing: ADJACENT dimensions (2i, 2i+1), as in the paper and Meta's LLaMA reference code
// (torch.view_as_complex on (…, d/2, 2)). HuggingFace's LLaMA pairs i with i + d/2 ("rotate_half"):
// the same idea on permuted dimensions; checkpoints are not interchangeable without a permutation.
#pragma once

#include <cstddef>

#include "attn/tensor/tensor_t.hpp"

namespace attn {

// RoFormer §3.3 and LLaMA use base 10000 (the sinusoidal encoding's base).
constexpr double kRopeBase = 10000.0;

struct RopeTables {
  Mat cos;  // (n_positions, d/2): cos(pos·θ_i)
  Mat sin;  // (n_positions, d/2): sin(pos·θ_i)
  std::size_t positions() const { return cos.shape(0); }
  std::size_t dim() const { return 2 * cos.shape(1); }
};

// Angles computed in double, stored as float. d must be even (std::invalid_argument otherwise).
RopeTables rope_tables(std::size_t n_positions, std::size_t d, double base = kRopeBase);

// x: (T, d) -> y: (T, d); row t sits at position start + t (start + T ≤ tables' positions, else
// ShapeError). y is resized when needed and may be the same object as x.
template <class T>
void rope_forward(MatT<T>& y, const MatT<T>& x, const RopeTables& tab, std::size_t start = 0);
// dy: (T, d) -> dx: (T, d), accumulated (+=). The rotation is orthogonal: dx = Rᵀ·dy (turn back).
template <class T>
void rope_backward(MatT<T>& dx, const MatT<T>& dy, const RopeTables& tab, std::size_t start = 0);

// Allocating forms; the Tensor3 one rotates every head of x: (H, T, d_head) the same way.
Mat rope_rotate(const Mat& x, const RopeTables& tab, std::size_t start = 0);
Tensor3 rope_rotate(const Tensor3& x, const RopeTables& tab, std::size_t start = 0);

// RoFormer §3.4.3 (Figure 2): the relative upper bound of |q_m·k_n| as the distance grows,
//   (2/d) Σ_{j=1}^{d/2} |S_j|,   S_j = Σ_{i<j} e^{i·r·θ_i},   for r = 0 … max_distance -> (max_distance + 1,)
// It decays (not monotonically) with r: RoPE's "long-term decay".
Vec rope_distance_bound(std::size_t d, std::size_t max_distance, double base = kRopeBase);

}  // namespace attn
