// Chapter 01 — worked solutions in plain loops. (The library's batched version is
// common/src/attention/additive_attention.cpp: bahdanau_keys_forward + bahdanau_step_forward.)
#include <algorithm>
#include <cmath>

#include "exercises.hpp"

namespace ex01 {

attn::Vec bahdanau_energies(const attn::Vec& s_prev, const attn::Mat& H, const attn::Mat& w_a,
                            const attn::Mat& u_a, const attn::Vec& v_a) {
  const std::size_t s = H.shape(0), he = H.shape(1), hd = s_prev.size(), a = v_a.size();
  attn::Vec q = xt::zeros<float>({a});  // s_prev·W_a
  for (std::size_t k = 0; k < a; ++k)
    for (std::size_t i = 0; i < hd; ++i) q(k) += s_prev(i) * w_a(i, k);
  attn::Vec e = xt::zeros<float>({s});
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t k = 0; k < a; ++k) {
      float key = 0.0f;  // (h_j·U_a)[k]
      for (std::size_t i = 0; i < he; ++i) key += H(j, i) * u_a(i, k);
      e(j) += v_a(k) * std::tanh(q(k) + key);
    }
  return e;
}

attn::Vec attention_weights(const attn::Vec& e) {
  const float m = *std::max_element(e.begin(), e.end());
  attn::Vec alpha = xt::zeros<float>({e.size()});
  float sum = 0.0f;
  for (std::size_t j = 0; j < e.size(); ++j) sum += (alpha(j) = std::exp(e(j) - m));
  for (std::size_t j = 0; j < e.size(); ++j) alpha(j) /= sum;
  return alpha;
}

attn::Vec context_vector(const attn::Vec& alpha, const attn::Mat& H) {
  attn::Vec c = xt::zeros<float>({H.shape(1)});
  for (std::size_t j = 0; j < H.shape(0); ++j)
    for (std::size_t k = 0; k < H.shape(1); ++k) c(k) += alpha(j) * H(j, k);
  return c;
}

}  // namespace ex01
