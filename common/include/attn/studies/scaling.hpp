// Why attention divides by √d_k, measured. For q, k with independent N(0, 1) entries,
// q·k = Σ_i q_i k_i is a sum of d_k terms of variance 1, so Var(q·k) = d_k (Vaswani et al. 2017,
// footnote 4). Large scores push softmax towards one-hot, where its Jacobian
// J = diag(p) − p·pᵀ vanishes and gradients stop flowing. Dividing by √d_k restores variance 1.
#pragma once

#include "attn/tensor/rng.hpp"

namespace attn {

struct ScalingRow {
  std::size_t d_k = 0;
  double var_raw = 0, var_scaled = 0;          // sample variance of q·k and of q·k/√d_k
  double max_weight_raw = 0, max_weight_scaled = 0;  // mean largest softmax weight over n_keys keys
  double grad_raw = 0, grad_scaled = 0;        // mean Frobenius norm of the softmax Jacobian
};

// Draws `trials` queries, each against n_keys random keys, all N(0, 1) in d_k dimensions.
ScalingRow measure_scaling(Rng& rng, std::size_t d_k, std::size_t n_keys, std::size_t trials);

// ‖diag(p) − p·pᵀ‖_F for a probability vector p: 0 for one-hot p, largest for uniform p.
double softmax_jacobian_norm(const Vec& p);

// Sample variance (dividing by n − 1).
double sample_variance(const std::vector<double>& xs);

}  // namespace attn
