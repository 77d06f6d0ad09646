// SwiGLU feed-forward (Shazeer 2020, "GLU Variants Improve Transformer"; used by PaLM and LLaMA):
//   gate = x·W_gate,  up = x·W_up            x: (N, d), W_gate, W_up: (d, d_ff)
//   act  = silu(gate) ⊙ up                    silu(z) = z·σ(z)
//   y    = act·W_down                         W_down: (d_ff, d) -> y: (N, d)
// Three matrices instead of the ReLU FFN's two, so d_ff = (2/3)·4d keeps the parameter count
// of a ReLU FFN with d_ff = 4d (3·d·(8d/3) = 2·d·4d). No biases, as in LLaMA.
// Backward (gradients accumulate): see swiglu.cpp, each line under the forward it differentiates.
#pragma once

#include <string>

#include "attn/nn/linear.hpp"

namespace attn {

template <class T>
struct SwiGLUT {
  LinearT<T> gate;  // W_gate: (d, d_ff), no bias
  LinearT<T> up;    // W_up:   (d, d_ff), no bias
  LinearT<T> down;  // W_down: (d_ff, d), no bias
  std::size_t d_model() const { return gate.w.shape(0); }
  std::size_t hidden() const { return gate.w.shape(1); }
};
using SwiGLU = SwiGLUT<float>;
using SwiGLUD = SwiGLUT<double>;

// LLaMA's hidden size: (2/3)·4d rounded up to a multiple of `multiple_of` (d = 128 -> 344 with 8).
std::size_t swiglu_hidden(std::size_t d_model, std::size_t multiple_of = 8);

// W_gate, W_up ~ U(−1/√d, 1/√d), W_down ~ U(−1/√d_ff, 1/√d_ff) (nn.Linear's default).
SwiGLU swiglu_init(std::size_t d_model, std::size_t d_ff, Rng& rng);
template <class T> SwiGLUT<T> zeros_like(const SwiGLUT<T>& p);
void register_params(ParamRegistry& reg, const std::string& prefix, SwiGLU& p, SwiGLU& grad);

template <class T>
struct SwiGLUCacheT {
  MatT<T> gate;  // (N, d_ff) x·W_gate, before the SiLU
  MatT<T> up;    // (N, d_ff) x·W_up
  MatT<T> act;   // (N, d_ff) silu(gate) ⊙ up
};

// x: (N, d) -> y: (N, d); y is resized when needed.
template <class T>
void swiglu_forward(MatT<T>& y, SwiGLUCacheT<T>& cache, const MatT<T>& x, const SwiGLUT<T>& p);
// dy: (N, d) -> dx: (N, d) (+=; empty to skip), dp (+=).
template <class T>
void swiglu_backward(MatT<T>& dx, SwiGLUT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const SwiGLUCacheT<T>& cache,
                     const SwiGLUT<T>& p);

}  // namespace attn
