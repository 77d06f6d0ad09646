// Multiplicative (Luong) attention, Luong, Pham & Manning 2015, §3. The decoder attends with its
// *current* state h_t (after the RNN step) over the encoder states h̄_s:
//   dot      score(h_t, h̄_s) = h_tᵀ h̄_s                       (needs Hd = He)
//   general  score(h_t, h̄_s) = h_tᵀ W_a h̄_s                   right-multiplied: (h_t·W_a)·h̄_s
//   concat   score(h_t, h̄_s) = v_cᵀ tanh([h_t; h̄_s]·W_c)      W_c: (Hd + He, A)
// Windows (§3.2):
//   global   α_t = softmax_s(score) over every source position
//   local-m  p_t = t (clamped to S − 1); α_t = softmax over the window |s − p_t| ≤ D, 0 outside
//   local-p  p_t = S·σ(v_pᵀ tanh(h_t·W_p)) (eq. 9); window softmax × exp(−(s − p_t)²/(2σ²)),
//            σ = D/2 (eq. 10); p_t is learned through the Gaussian.
//   c_t = Σ_s α_ts h̄_s
// Sizes: B batch, S source length, Hd decoder state, He encoder state, A concat size, P local-p size.
// Concat splits W_c = [W_c[:Hd]; W_c[Hd:]], so [h_t; h̄_s]·W_c = h_t·W_c[:Hd] + h̄_s·W_c[Hd:]: the
// source half (`keys`, like Bahdanau's U_a·h_j) is computed once per sentence (luong_keys_forward)
// and reused by every decoder step; luong_concat_scores_reference is the unsplit form it is tested on.
// The attentional state h̃_t = tanh(W_c[c_t; h_t]) of eq. 5 is a Linear + tanh in the model.
#pragma once

#include <string>

#include "attn/tensor/params.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/tensor/tensor_t.hpp"

namespace attn {

enum class LuongScore { Dot, General, Concat };
enum class LuongWindow { Global, LocalM, LocalP };
const char* luong_score_name(LuongScore s);    // "dot", "general", "concat"
const char* luong_window_name(LuongWindow w);  // "global", "local-m", "local-p"

struct LuongConfig {
  LuongScore score = LuongScore::General;
  LuongWindow window = LuongWindow::Global;
  std::size_t half_width = 2;  // D of the local windows (the paper uses 10 on WMT)
};

template <class T>
struct LuongT {
  MatT<T> w_a;  // general: (Hd, He); empty otherwise
  MatT<T> w_c;  // concat: (Hd + He, A); empty otherwise
  VecT<T> v_c;  // concat: (A,)
  MatT<T> w_p;  // local-p: (Hd, P); empty otherwise
  VecT<T> v_p;  // local-p: (P,)
};
using Luong = LuongT<float>;
using LuongD = LuongT<double>;

// Allocates only what cfg uses; U(−1/√in, 1/√in).
Luong luong_init(const LuongConfig& cfg, std::size_t dec_hidden, std::size_t enc_hidden, std::size_t attn_size,
                 Rng& rng);
template <class T> LuongT<T> zeros_like(const LuongT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, Luong& p, Luong& grad);
// Its parameters by name: prefix.w_a, .w_c, .v_c, .w_p, .v_p — the ones a score or window does not
// use are empty (size 0) and skipped by registries and checkpoints.
template <class P, class F, if_layer<P, LuongT> = 0>
void visit_params(P& p, const std::string& prefix, F&& f) {
  f(prefix + ".w_a", p.w_a);
  f(prefix + ".w_c", p.w_c);
  f(prefix + ".v_c", p.v_c);
  f(prefix + ".w_p", p.w_p);
  f(prefix + ".v_p", p.v_p);
}

template <class T>
struct LuongStepT {
  MatT<T> scores;    // (B, S) score(h_t, h̄_s) before any window
  MatT<T> align;     // (B, S) softmax over the window (global: all of S)
  MatT<T> alpha;     // (B, S) final weights (local-p: align × Gaussian)
  MatT<T> query;     // general: (B, He) h_t·W_a; concat: (B, A) h_t·W_c[:Hd]
  Tensor3T<T> act;   // concat: (B, S, A) tanh(h_t·W_c[:Hd] + keys), keys = h̄_s·W_c[Hd:]
  VecT<T> p;         // (B,) window centres p_t (local windows)
  MatT<T> p_act;     // local-p: (B, P) tanh(h_t·W_p)
};

// concat: enc (B, S, He) -> keys (B, S, A) = h̄_s·W_c[Hd:], once per sentence; other scores: keys empty.
template <class T>
void luong_keys_forward(Tensor3T<T>& keys, const Tensor3T<T>& enc, const LuongT<T>& p, LuongScore score);
// forward: keys = H·W_c[Hd:]  ->  denc += dkeys·W_c[Hd:]ᵀ, dp.w_c[Hd:] += Hᵀ·dkeys.
template <class T>
void luong_keys_backward(Tensor3T<T>& denc, LuongT<T>& dp, const Tensor3T<T>& dkeys, const Tensor3T<T>& enc,
                         const LuongT<T>& p);
// The naive concat score: v_cᵀ tanh([h_t; h̄_s]·W_c) for every (b, s), one concatenated vector at a
// time, W_c unsplit. h_t: (B, Hd), enc: (B, S, He) -> (B, S). The reference the split form is tested on.
template <class T>
MatT<T> luong_concat_scores_reference(const MatT<T>& h_t, const Tensor3T<T>& enc, const LuongT<T>& p);

// h_t: (B, Hd), enc: (B, S, He), keys: luong_keys_forward's (concat; ignored otherwise) -> scores:
// (B, S) (no window). Also fills step.query / step.act.
template <class T>
void luong_scores_forward(MatT<T>& scores, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                          const Tensor3T<T>& keys, const LuongT<T>& p, LuongScore score);
// The same for a single call: computes the keys itself.
template <class T>
void luong_scores_forward(MatT<T>& scores, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                          const LuongT<T>& p, LuongScore score);

// h_t: (B, Hd), enc: (B, S, He), keys as above -> context: (B, He); t is the decoder step (local-m's p_t).
template <class T>
void luong_forward(MatT<T>& context, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                   const Tensor3T<T>& keys, const LuongT<T>& p, const LuongConfig& cfg, std::size_t t = 0);
// The same for a single call: computes the keys itself.
template <class T>
void luong_forward(MatT<T>& context, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                   const LuongT<T>& p, const LuongConfig& cfg, std::size_t t = 0);
// dcontext: (B, He) -> dh_t: (B, Hd), denc: (B, S, He), dkeys (concat): (B, S, A), dp (all +=); the
// keys' own backward (luong_keys_backward) runs once per sentence, after every step's.
template <class T>
void luong_backward(MatT<T>& dh_t, Tensor3T<T>& denc, Tensor3T<T>& dkeys, LuongT<T>& dp, const MatT<T>& dcontext,
                    const LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc, const LuongT<T>& p,
                    const LuongConfig& cfg);
// The same for a single step: runs the keys' backward itself.
template <class T>
void luong_backward(MatT<T>& dh_t, Tensor3T<T>& denc, LuongT<T>& dp, const MatT<T>& dcontext,
                    const LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc, const LuongT<T>& p,
                    const LuongConfig& cfg);

}  // namespace attn
