// Gated recurrent unit (Cho et al. 2014), PyTorch's equations and gate order (r, z, n), with the
// weights right-multiplied (W_x = weight_ih_l0ᵀ, W_h = weight_hh_l0ᵀ):
//   r  = σ(x·W_xr + b_xr + h·W_hr + b_hr)            reset gate
//   z  = σ(x·W_xz + b_xz + h·W_hz + b_hz)            update gate
//   n  = tanh(x·W_xn + b_xn + r ⊙ (h·W_hn + b_hn))   candidate
//   h' = (1 − z) ⊙ n + z ⊙ h
// Sizes: B = batch, T = time, D = input size, H = hidden size. Sequences are batch-first
// (B, T, D); one batch holds sentences of one exact length, so no masks or packing are needed.
// Backprop through time runs the cell backward from t = T−1 down to 0; gradients accumulate.
#pragma once

#include <string>
#include <vector>

#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

template <class T>
struct GruT {
  MatT<T> wx;  // (D, 3H)  columns [r | z | n]
  MatT<T> wh;  // (H, 3H)
  VecT<T> bx;  // (3H,)
  VecT<T> bh;  // (3H,)
};
using Gru = GruT<float>;
using GruD = GruT<double>;

// Every weight ~ U(−1/√H, 1/√H), PyTorch's nn.GRU default.
Gru gru_init(std::size_t input, std::size_t hidden, Rng& rng);
template <class T> GruT<T> zeros_like(const GruT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, Gru& p, Gru& grad);
// Its parameters by name, in this order: prefix.wx, .wh, .bx, .bh (see attn/tensor/params.hpp).
template <class P, class F, if_layer<P, GruT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  f(prefix + ".wx", p.wx);
  f(prefix + ".wh", p.wh);
  f(prefix + ".bx", p.bx);
  f(prefix + ".bh", p.bh);
}
inline std::size_t gru_hidden_size(const Gru& p) { return p.wh.shape(0); }

// What one step keeps for its backward: all (B, H).
template <class T>
struct GruStepCacheT {
  MatT<T> r, z, n;
  MatT<T> hn;  // h·W_hn + b_hn (the part the reset gate multiplies)
};

// ---- one step --------------------------------------------------------------------------------
// x: (B, D), h: (B, H) -> h_new: (B, H)
template <class T>
void gru_cell_forward(MatT<T>& h_new, GruStepCacheT<T>& cache, const MatT<T>& x, const MatT<T>& h,
                      const GruT<T>& p);
// dh_new: (B, H) -> dx: (B, D) (+=, empty to skip), dh: (B, H) (+=), dp (+=)
template <class T>
void gru_cell_backward(MatT<T>& dx, MatT<T>& dh, GruT<T>& dp, const MatT<T>& dh_new,
                       const GruStepCacheT<T>& cache, const MatT<T>& x, const MatT<T>& h, const GruT<T>& p);

// ---- a whole sequence ------------------------------------------------------------------------
template <class T>
struct GruSeqCacheT {
  std::vector<GruStepCacheT<T>> steps;
  std::vector<MatT<T>> x;       // x_t: (B, D)
  std::vector<MatT<T>> h_prev;  // the state each step started from: (B, H)
};

// x: (B, T, D), h0: (B, H) -> hs: (B, T, H), every step's state (the last one is hs[:, T−1]).
template <class T>
void gru_sequence_forward(Tensor3T<T>& hs, GruSeqCacheT<T>& cache, const Tensor3T<T>& x, const MatT<T>& h0,
                          const GruT<T>& p);
// dhs: (B, T, H), the loss's gradient w.r.t. every state -> dx: (B, T, D) (+=, empty to skip),
// dh0: (B, H) (+=, empty to skip), dp (+=).
template <class T>
void gru_sequence_backward(Tensor3T<T>& dx, MatT<T>& dh0, GruT<T>& dp, const Tensor3T<T>& dhs,
                           const GruSeqCacheT<T>& cache, const GruT<T>& p);

// ---- bidirectional (Bahdanau et al. 2014, §3.2) ------------------------------------------------
template <class T>
struct BiGruT {
  GruT<T> fwd, bwd;  // same sizes; bwd reads the sentence right to left
};
using BiGru = BiGruT<float>;
using BiGruD = BiGruT<double>;
BiGru bigru_init(std::size_t input, std::size_t hidden, Rng& rng);
template <class T> BiGruT<T> zeros_like(const BiGruT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, BiGru& p, BiGru& grad);
// prefix.fwd.*, then prefix.bwd.*
template <class P, class F, if_layer<P, BiGruT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  visit_params(p.fwd, prefix + ".fwd", f);
  visit_params(p.bwd, prefix + ".bwd", f);
}

template <class T>
struct BiGruCacheT {
  GruSeqCacheT<T> fwd, bwd;
};

// x: (B, T, D) -> hs: (B, T, 2H) with hs[b, t] = [→h_t ; ←h_t], both from zero states.
// →h_T (the forward final state) is hs[:, T−1, :H]; ←h_1 (the backward final state) is hs[:, 0, H:].
template <class T>
void bigru_forward(Tensor3T<T>& hs, BiGruCacheT<T>& cache, const Tensor3T<T>& x, const BiGruT<T>& p);
// dhs: (B, T, 2H) -> dx: (B, T, D) (+=, empty to skip), dp (+=)
template <class T>
void bigru_backward(Tensor3T<T>& dx, BiGruT<T>& dp, const Tensor3T<T>& dhs, const BiGruCacheT<T>& cache,
                    const BiGruT<T>& p);

}  // namespace attn
