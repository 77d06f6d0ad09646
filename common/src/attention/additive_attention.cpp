// Bahdanau (additive) attention, forward and backward (see attn/attention/additive_attention.hpp).
#include "attn/attention/additive_attention.hpp"

#include <cmath>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

Bahdanau bahdanau_init(std::size_t dec_hidden, std::size_t enc_hidden, std::size_t attn_size, Rng& rng) {
  Bahdanau p;
  const float bw = 1.0f / std::sqrt(float(dec_hidden)), bu = 1.0f / std::sqrt(float(enc_hidden)),
              bv = 1.0f / std::sqrt(float(attn_size));
  p.w_a = rng.uniform_mat(dec_hidden, attn_size, -bw, bw);
  p.u_a = rng.uniform_mat(enc_hidden, attn_size, -bu, bu);
  p.v_a = Vec::from_shape({attn_size});
  for (auto& v : p.v_a) v = rng.uniform(-bv, bv);
  return p;
}

template <class T>
BahdanauT<T> zeros_like(const BahdanauT<T>& p) {
  return BahdanauT<T>{xt::zeros<T>(p.w_a.shape()), xt::zeros<T>(p.u_a.shape()), xt::zeros<T>(p.v_a.shape())};
}

void register_params(ParamRegistry& reg, const std::string& prefix, Bahdanau& p, Bahdanau& grad) {
  register_visited(reg, p, grad, [&](auto& layer, auto&& f) { visit_params(layer, prefix, f); });
}

template <class T>
void bahdanau_keys_forward(Tensor3T<T>& keys, const Tensor3T<T>& enc, const BahdanauT<T>& p) {
  // enc: (B, S, He), U_a: (He, A) -> keys: (B, S, A)
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = p.u_a.shape(0), a = p.u_a.shape(1);
  expect_shape("bahdanau_keys_forward", "enc", shape_of(enc), {0, 0, he});
  ensure_shape(keys, {b, s, a});
  gemm_raw(Op::N, Op::N, b * s, a, he, T(1), enc.data(), he, p.u_a.data(), a, T(0), keys.data(), a);
}

template <class T>
void bahdanau_keys_backward(Tensor3T<T>& denc, BahdanauT<T>& dp, const Tensor3T<T>& dkeys, const Tensor3T<T>& enc,
                            const BahdanauT<T>& p) {
  // dkeys: (B, S, A) -> denc: (B, S, He), dU_a: (He, A)
  const char* fn = "bahdanau_keys_backward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = p.u_a.shape(0), a = p.u_a.shape(1);
  expect_shape(fn, "dkeys", shape_of(dkeys), {b, s, a});
  expect_same_shape(fn, "dp.u_a", dp.u_a, "u_a", p.u_a);
  // forward: keys = enc·U_a
  gemm_raw(Op::T, Op::N, he, a, b * s, T(1), enc.data(), he, dkeys.data(), a, T(1), dp.u_a.data(), a);  // dU_a += encᵀ·dkeys
  if (wants_grad(fn, "denc", denc, shape_of(enc)))
    gemm_raw(Op::N, Op::T, b * s, he, a, T(1), dkeys.data(), a, p.u_a.data(), a, T(1), denc.data(), he);  // denc += dkeys·U_aᵀ
}

template <class T>
void bahdanau_step_forward(MatT<T>& context, BahdanauStepT<T>& step, const MatT<T>& s_prev, const Tensor3T<T>& enc,
                           const Tensor3T<T>& keys, const BahdanauT<T>& p) {
  // s_prev: (B, Hd), enc: (B, S, He), keys: (B, S, A) -> context: (B, He)
  const char* fn = "bahdanau_step_forward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2);
  const std::size_t hd = p.w_a.shape(0), a = p.w_a.shape(1);
  expect_shape(fn, "s_prev", shape_of(s_prev), {b, hd});
  expect_shape(fn, "keys", shape_of(keys), {b, s, a});
  expect_shape(fn, "v_a", shape_of(p.v_a), {a});
  ensure_shape(step.query, {b, a});
  ensure_shape(step.act, {b, s, a});
  ensure_shape(step.energies, {b, s});
  ensure_shape(step.alpha, {b, s});
  ensure_shape(context, {b, he});
  gemm_t(step.query, s_prev, p.w_a, Op::N, Op::N, T(1), T(0));  // W_a s_{i−1}  (B, A)
  for (std::size_t i = 0; i < b; ++i) {
    for (std::size_t j = 0; j < s; ++j) {
      T e = 0;
      for (std::size_t k = 0; k < a; ++k) {
        const T h = std::tanh(step.query(i, k) + keys(i, j, k));  // tanh(W_a s + U_a h_j)
        step.act(i, j, k) = h;
        e += p.v_a(k) * h;  // e_ij = v_aᵀ tanh(…)
      }
      step.energies(i, j) = e;
    }
    softmax_row(&step.alpha(i, 0), &step.energies(i, 0), static_cast<const T*>(nullptr), s);  // α_i = softmax(e_i)
    for (std::size_t c = 0; c < he; ++c) context(i, c) = 0;
    for (std::size_t j = 0; j < s; ++j)
      for (std::size_t c = 0; c < he; ++c) context(i, c) += step.alpha(i, j) * enc(i, j, c);  // c_i = Σ_j α_ij h_j
  }
}

template <class T>
void bahdanau_step_backward(MatT<T>& ds_prev, Tensor3T<T>& denc, Tensor3T<T>& dkeys, BahdanauT<T>& dp,
                            const MatT<T>& dcontext, const BahdanauStepT<T>& step, const MatT<T>& s_prev,
                            const Tensor3T<T>& enc, const BahdanauT<T>& p) {
  // dcontext: (B, He) -> ds_prev: (B, Hd), denc: (B, S, He), dkeys: (B, S, A), dW_a, dv_a
  const char* fn = "bahdanau_step_backward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2);
  const std::size_t hd = p.w_a.shape(0), a = p.w_a.shape(1);
  expect_shape(fn, "dcontext", shape_of(dcontext), {b, he});
  expect_shape(fn, "dkeys", shape_of(dkeys), {b, s, a});
  expect_same_shape(fn, "dp.w_a", dp.w_a, "w_a", p.w_a);
  expect_same_shape(fn, "dp.v_a", dp.v_a, "v_a", p.v_a);
  const bool want_ds = wants_grad(fn, "ds_prev", ds_prev, {b, hd});
  const bool want_denc = wants_grad(fn, "denc", denc, shape_of(enc));
  MatT<T> dquery = xt::zeros<T>({b, a});
  std::vector<T> dalpha(s), de(s);
  for (std::size_t i = 0; i < b; ++i) {
    // forward: c_i = Σ_j α_ij h_j  ->  dα_ij = dc_i · h_j,  dh_j += α_ij dc_i
    for (std::size_t j = 0; j < s; ++j) {
      T g = 0;
      for (std::size_t c = 0; c < he; ++c) {
        g += dcontext(i, c) * enc(i, j, c);
        if (want_denc) denc(i, j, c) += step.alpha(i, j) * dcontext(i, c);
      }
      dalpha[j] = g;
      de[j] = 0;
    }
    // forward: α_i = softmax(e_i)
    softmax_row_backward(de.data(), &step.alpha(i, 0), dalpha.data(), s);
    // forward: e_ij = Σ_k v_k · act_ijk,  act_ijk = tanh(query_ik + keys_ijk)
    for (std::size_t j = 0; j < s; ++j)
      for (std::size_t k = 0; k < a; ++k) {
        const T h = step.act(i, j, k);
        dp.v_a(k) += de[j] * h;
        const T dpre = de[j] * p.v_a(k) * (T(1) - h * h);
        dkeys(i, j, k) += dpre;
        dquery(i, k) += dpre;
      }
  }
  // forward: query = s_prev·W_a
  gemm_t(dp.w_a, s_prev, dquery, Op::T, Op::N, T(1), T(1));                 // dW_a += s_prevᵀ·dquery
  if (want_ds) gemm_t(ds_prev, dquery, p.w_a, Op::N, Op::T, T(1), T(1));   // ds_prev += dquery·W_aᵀ
}

#define ATTN_INSTANTIATE_BAHDANAU(T)                                                                          \
  template BahdanauT<T> zeros_like(const BahdanauT<T>&);                                                      \
  template void bahdanau_keys_forward(Tensor3T<T>&, const Tensor3T<T>&, const BahdanauT<T>&);                 \
  template void bahdanau_keys_backward(Tensor3T<T>&, BahdanauT<T>&, const Tensor3T<T>&, const Tensor3T<T>&,   \
                                       const BahdanauT<T>&);                                                  \
  template void bahdanau_step_forward(MatT<T>&, BahdanauStepT<T>&, const MatT<T>&, const Tensor3T<T>&,        \
                                      const Tensor3T<T>&, const BahdanauT<T>&);                               \
  template void bahdanau_step_backward(MatT<T>&, Tensor3T<T>&, Tensor3T<T>&, BahdanauT<T>&, const MatT<T>&,   \
                                       const BahdanauStepT<T>&, const MatT<T>&, const Tensor3T<T>&,           \
                                       const BahdanauT<T>&);
ATTN_INSTANTIATE_BAHDANAU(float)
ATTN_INSTANTIATE_BAHDANAU(double)

}  // namespace attn
