// ALiBi slopes, bias and per-head biased attention (see attn/position/alibi.hpp).
#include "attn/position/alibi.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "attn/tensor/tensor_ops.hpp"

namespace attn {

namespace {
// 2^(−8/n), 2^(−16/n), …, 2^(−8) for n a power of 2 (Press et al. 2021, §3).
std::vector<double> slopes_power_of_2(std::size_t n) {
  std::vector<double> s(n);
  for (std::size_t i = 0; i < n; ++i) s[i] = std::pow(2.0, -8.0 * double(i + 1) / double(n));
  return s;
}
bool is_power_of_2(std::size_t n) { return n > 0 && (n & (n - 1)) == 0; }
std::vector<double> slopes_any(std::size_t n) {
  if (is_power_of_2(n)) return slopes_power_of_2(n);
  std::size_t p = 1;
  while (2 * p <= n) p *= 2;  // the closest power of 2 below n
  std::vector<double> s = slopes_power_of_2(p);
  const std::vector<double> twice = slopes_any(2 * p);
  for (std::size_t i = 0; s.size() < n; i += 2) s.push_back(twice[i]);  // twice[0::2][:n − p]
  return s;
}
}  // namespace

Vec alibi_slopes(std::size_t n_heads) {
  if (n_heads == 0) throw std::invalid_argument("alibi_slopes: n_heads must be > 0");
  const std::vector<double> s = slopes_any(n_heads);
  Vec v = xt::zeros<float>({n_heads});
  for (std::size_t i = 0; i < n_heads; ++i) v(i) = float(s[i]);
  return v;
}

template <class T>
void alibi_bias_forward(Tensor3T<T>& bias, const VecT<T>& slopes, std::size_t t_q, std::size_t t_k) {
  // slopes: (H,) -> bias: (H, t_q, t_k)
  if (t_q > t_k)
    throw ShapeError("alibi_bias_forward: t_q = " + std::to_string(t_q) + " queries but only t_k = " + std::to_string(t_k) +
                     " keys; queries are the last t_q of the t_k positions");
  const std::size_t H = slopes.size(), offset = t_k - t_q;
  bias = xt::zeros<T>({H, t_q, t_k});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < t_q; ++i)
      for (std::size_t j = 0; j < t_k; ++j) {
        const long dist = std::labs(long(offset + i) - long(j));
        bias(h, i, j) = -slopes(h) * T(dist);
      }
}

template <class T>
void alibi_bias_backward(VecT<T>& dslopes, const Tensor3T<T>& dbias) {
  // dbias: (H, t_q, t_k) -> dslopes: (H,) +=
  expect_shape("alibi_bias_backward", "dslopes", shape_of(dslopes), {dbias.shape(0)});
  const std::size_t H = dbias.shape(0), t_q = dbias.shape(1), t_k = dbias.shape(2);
  if (t_q > t_k) throw ShapeError("alibi_bias_backward: dbias " + shape_str(shape_of(dbias)) + " has t_q > t_k");
  const std::size_t offset = t_k - t_q;
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < t_q; ++i)
      for (std::size_t j = 0; j < t_k; ++j) {
        // in the forward pass this was: bias(h, i, j) = −m_h·|p_i − j|
        const long dist = std::labs(long(offset + i) - long(j));
        dslopes(h) += -T(dist) * dbias(h, i, j);
      }
}

template void alibi_bias_forward(Tensor3T<float>&, const VecT<float>&, std::size_t, std::size_t);
template void alibi_bias_forward(Tensor3T<double>&, const VecT<double>&, std::size_t, std::size_t);
template void alibi_bias_backward(VecT<float>&, const Tensor3T<float>&);
template void alibi_bias_backward(VecT<double>&, const Tensor3T<double>&);

Tensor3 alibi_bias(const Vec& slopes, std::size_t T) {
  Tensor3 b;
  alibi_bias_forward(b, slopes, T, T);
  return b;
}

AttentionResult3 attention_with_bias(const Tensor3& q, const Tensor3& k, const Tensor3& v, const Tensor3& bias,
                                     const Mat& mask, float scale) {
  // q: (H, T, d_k), k: (H, S, d_k), v: (H, S, d_v), bias: (H, T, S), mask: (T, S) or empty
  const std::size_t H = q.shape(0), T = q.shape(1), S = k.shape(1);
  expect_shape("attention_with_bias", "k", shape_of(k), {H, 0, q.shape(2)});
  expect_shape("attention_with_bias", "v", shape_of(v), {H, S, 0});
  expect_shape("attention_with_bias", "bias", shape_of(bias), {H, T, S});
  if (mask.size() > 0) expect_shape("attention_with_bias", "mask", shape_of(mask), {T, S});
  const std::size_t dv = v.shape(2);
  AttentionResult3 r;
  r.scores = xt::zeros<float>({H, T, S});
  r.weights = xt::zeros<float>({H, T, S});
  r.output = xt::zeros<float>({H, T, dv});
  for (std::size_t h = 0; h < H; ++h) {
    Mat m = slice_of(bias, h);
    if (mask.size() > 0) m += mask;
    const AttentionResult a = scaled_dot_product_attention(slice_of(q, h), slice_of(k, h), slice_of(v, h), m, scale);
    std::copy(a.scores.begin(), a.scores.end(), r.scores.data() + h * T * S);
    std::copy(a.weights.begin(), a.weights.end(), r.weights.data() + h * T * S);
    std::copy(a.output.begin(), a.output.end(), r.output.data() + h * T * dv);
  }
  return r;
}

}  // namespace attn
