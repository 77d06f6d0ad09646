// The √d_k scaling study (see attn/studies/scaling.hpp).
#include "attn/studies/scaling.hpp"

#include <cmath>

#include "attn/tensor/softmax.hpp"

namespace attn {

double sample_variance(const std::vector<double>& xs) {
  if (xs.size() < 2) return 0.0;
  double mean = 0.0;
  for (double x : xs) mean += x;
  mean /= double(xs.size());
  double ss = 0.0;
  for (double x : xs) ss += (x - mean) * (x - mean);
  return ss / double(xs.size() - 1);
}

double softmax_jacobian_norm(const Vec& p) {
  // J_ij = p_i (δ_ij − p_j)
  double sum = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < p.size(); ++j) {
      const double jij = double(p(i)) * ((i == j ? 1.0 : 0.0) - double(p(j)));
      sum += jij * jij;
    }
  return std::sqrt(sum);
}

ScalingRow measure_scaling(Rng& rng, std::size_t d_k, std::size_t n_keys, std::size_t trials) {
  ScalingRow row;
  row.d_k = d_k;
  const double inv_sqrt = 1.0 / std::sqrt(double(d_k));
  std::vector<double> dots;
  Vec raw = xt::zeros<float>({n_keys}), scaled = xt::zeros<float>({n_keys});
  Vec p_raw = raw, p_scaled = raw;
  for (std::size_t t = 0; t < trials; ++t) {
    Vec q = rng.normal_vec(d_k);
    for (std::size_t j = 0; j < n_keys; ++j) {
      Vec k = rng.normal_vec(d_k);
      double dot = 0.0;
      for (std::size_t i = 0; i < d_k; ++i) dot += double(q(i)) * double(k(i));
      dots.push_back(dot);
      raw(j) = float(dot);
      scaled(j) = float(dot * inv_sqrt);
    }
    softmax_row(p_raw.data(), raw.data(), nullptr, n_keys);
    softmax_row(p_scaled.data(), scaled.data(), nullptr, n_keys);
    row.max_weight_raw += xt::amax(p_raw)();
    row.max_weight_scaled += xt::amax(p_scaled)();
    row.grad_raw += softmax_jacobian_norm(p_raw);
    row.grad_scaled += softmax_jacobian_norm(p_scaled);
  }
  row.var_raw = sample_variance(dots);
  row.var_scaled = row.var_raw / double(d_k);  // Var(c·X) = c² Var(X), c = 1/√d_k
  const double n = double(trials);
  row.max_weight_raw /= n;
  row.max_weight_scaled /= n;
  row.grad_raw /= n;
  row.grad_scaled /= n;
  return row;
}

}  // namespace attn
