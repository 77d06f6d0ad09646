// Additive (Bahdanau) attention, Bahdanau, Cho & Bengio 2014, eq. 5–6 and appendix A.1.2:
//   e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j)     energy: how well source word j fits output step i
//   α_ij = softmax_j(e_ij)                       alignment weights, rows sum to 1
//   c_i  = Σ_j α_ij h_j                          context vector for step i
// Right-multiplied here: s·W_a, h_j·U_a. U_a·h_j does not depend on i, so it is computed once per
// sentence (bahdanau_keys_forward) and reused by every decoder step.
// Sizes: B batch, S source length, Hd decoder state, He encoder state (2H when bidirectional), A
// attention size. Encoder states are batch-first: enc (B, S, He).
#pragma once

#include <string>

#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

template <class T>
struct BahdanauT {
  MatT<T> w_a;  // (Hd, A)
  MatT<T> u_a;  // (He, A)
  VecT<T> v_a;  // (A,)
};
using Bahdanau = BahdanauT<float>;
using BahdanauD = BahdanauT<double>;

// W_a, U_a ~ N(0, 0.001²) and v_a = 0 in the paper; we use U(−1/√in, 1/√in) so that a fresh
// model's alignments are not all uniform (the paper's small init trains too, just slower).
Bahdanau bahdanau_init(std::size_t dec_hidden, std::size_t enc_hidden, std::size_t attn_size, Rng& rng);
template <class T> BahdanauT<T> zeros_like(const BahdanauT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, Bahdanau& p, Bahdanau& grad);
// Its parameters by name: prefix.w_a, .u_a, .v_a (see attn/tensor/params.hpp).
template <class P, class F, if_layer<P, BahdanauT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  f(prefix + ".w_a", p.w_a);
  f(prefix + ".u_a", p.u_a);
  f(prefix + ".v_a", p.v_a);
}

// enc: (B, S, He) -> keys: (B, S, A) = enc·U_a
template <class T> void bahdanau_keys_forward(Tensor3T<T>& keys, const Tensor3T<T>& enc, const BahdanauT<T>& p);
// dkeys: (B, S, A) -> denc (+=), dp.u_a (+=)
template <class T>
void bahdanau_keys_backward(Tensor3T<T>& denc, BahdanauT<T>& dp, const Tensor3T<T>& dkeys,
                            const Tensor3T<T>& enc, const BahdanauT<T>& p);

// One decoder step's intermediates: what a chapter shows and what the backward needs.
template <class T>
struct BahdanauStepT {
  MatT<T> query;      // (B, A)    s_{i−1}·W_a
  Tensor3T<T> act;    // (B, S, A) tanh(query + keys)
  MatT<T> energies;   // (B, S)    e_ij
  MatT<T> alpha;      // (B, S)    α_ij
};

// s_prev: (B, Hd), enc: (B, S, He), keys: (B, S, A) -> context: (B, He)
template <class T>
void bahdanau_step_forward(MatT<T>& context, BahdanauStepT<T>& step, const MatT<T>& s_prev,
                           const Tensor3T<T>& enc, const Tensor3T<T>& keys, const BahdanauT<T>& p);
// dcontext: (B, He) -> ds_prev: (B, Hd), denc: (B, S, He), dkeys: (B, S, A), dp.w_a, dp.v_a (all +=).
template <class T>
void bahdanau_step_backward(MatT<T>& ds_prev, Tensor3T<T>& denc, Tensor3T<T>& dkeys, BahdanauT<T>& dp,
                            const MatT<T>& dcontext, const BahdanauStepT<T>& step, const MatT<T>& s_prev,
                            const Tensor3T<T>& enc, const BahdanauT<T>& p);

}  // namespace attn
