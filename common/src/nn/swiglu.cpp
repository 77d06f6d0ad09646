// SwiGLU feed-forward, forward and backward (see attn/nn/swiglu.hpp), templated on float and double
// so the finite-difference check runs this very code.
#include "attn/nn/swiglu.hpp"

#include <cmath>

#include "attn/nn/activations.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

std::size_t swiglu_hidden(std::size_t d_model, std::size_t multiple_of) {
  if (multiple_of == 0) multiple_of = 1;
  const std::size_t raw = (2 * 4 * d_model + 2) / 3;  // ⌈(2/3)·4d⌉
  return (raw + multiple_of - 1) / multiple_of * multiple_of;
}

SwiGLU swiglu_init(std::size_t d_model, std::size_t d_ff, Rng& rng) {
  SwiGLU p;
  p.gate = linear_init(d_model, d_ff, rng, /*bias=*/false);
  p.up = linear_init(d_model, d_ff, rng, false);
  p.down = linear_init(d_ff, d_model, rng, false);
  return p;
}

template <class T>
SwiGLUT<T> zeros_like(const SwiGLUT<T>& p) {
  return {zeros_like(p.gate), zeros_like(p.up), zeros_like(p.down)};
}

void register_params(ParamRegistry& reg, const std::string& prefix, SwiGLU& p, SwiGLU& grad) {
  reg.add(prefix + ".w_gate", p.gate.w, grad.gate.w);
  reg.add(prefix + ".w_up", p.up.w, grad.up.w);
  reg.add(prefix + ".w_down", p.down.w, grad.down.w);
}

namespace {
template <class T>
void check_swiglu(const char* fn, const SwiGLUT<T>& p, const MatT<T>& x) {
  const std::size_t d = p.gate.w.shape(0), f = p.gate.w.shape(1);
  expect_shape(fn, "W_up", shape_of(p.up.w), {d, f});
  expect_shape(fn, "W_down", shape_of(p.down.w), {f, d});
  expect_shape(fn, "x", shape_of(x), {0, d});
}
}  // namespace

template <class T>
void swiglu_forward(MatT<T>& y, SwiGLUCacheT<T>& cache, const MatT<T>& x, const SwiGLUT<T>& p) {
  // x: (N, d) -> y: (N, d)
  check_swiglu("swiglu_forward", p, x);
  linear_forward(cache.gate, x, p.gate);  // gate = x·W_gate
  linear_forward(cache.up, x, p.up);      // up = x·W_up
  ensure_shape(cache.act, shape_of(cache.gate));
  activation_forward(Activation::Silu, cache.act.data(), cache.gate.data(), cache.gate.size());
  const std::size_t n = cache.act.size();
  T* a = cache.act.data();
  const T* u = cache.up.data();
  for (std::size_t i = 0; i < n; ++i) a[i] *= u[i];  // act = silu(gate) ⊙ up
  linear_forward(y, cache.act, p.down);               // y = act·W_down
}

template <class T>
void swiglu_backward(MatT<T>& dx, SwiGLUT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const SwiGLUCacheT<T>& cache,
                     const SwiGLUT<T>& p) {
  // dy: (N, d) -> dx (+=), dp (+=)
  const char* fn = "swiglu_backward";
  check_swiglu(fn, p, x);
  expect_same_shape(fn, "dy", dy, "x", x);
  const bool want_dx = wants_grad(fn, "dx", dx, shape_of(x));
  // forward: y = act·W_down
  MatT<T> dact = xt::zeros<T>(cache.act.shape());
  linear_backward(dact, dp.down, dy, cache.act, p.down);
  // forward: act = silu(gate) ⊙ up   ->  dup = dact ⊙ silu(gate),  dsilu = dact ⊙ up
  const std::size_t n = dact.size();
  MatT<T> silu_gate = xt::zeros<T>(cache.gate.shape());
  activation_forward(Activation::Silu, silu_gate.data(), cache.gate.data(), n);
  MatT<T> dup = xt::zeros<T>(cache.up.shape()), dsilu = xt::zeros<T>(cache.gate.shape());
  for (std::size_t i = 0; i < n; ++i) {
    dup.data()[i] = dact.data()[i] * silu_gate.data()[i];
    dsilu.data()[i] = dact.data()[i] * cache.up.data()[i];
  }
  // forward: silu(gate)  ->  dgate = silu'(gate) ⊙ dsilu
  MatT<T> dgate = xt::zeros<T>(cache.gate.shape());
  activation_backward(Activation::Silu, dgate.data(), dsilu.data(), cache.gate.data(), n);
  // forward: gate = x·W_gate,  up = x·W_up
  MatT<T> none;
  linear_backward(want_dx ? dx : none, dp.gate, dgate, x, p.gate);
  linear_backward(want_dx ? dx : none, dp.up, dup, x, p.up);
}

#define ATTN_INSTANTIATE_SWIGLU(T)                                                                        \
  template SwiGLUT<T> zeros_like(const SwiGLUT<T>&);                                                      \
  template void swiglu_forward(MatT<T>&, SwiGLUCacheT<T>&, const MatT<T>&, const SwiGLUT<T>&);             \
  template void swiglu_backward(MatT<T>&, SwiGLUT<T>&, const MatT<T>&, const MatT<T>&, const SwiGLUCacheT<T>&, \
                                const SwiGLUT<T>&);
ATTN_INSTANTIATE_SWIGLU(float)
ATTN_INSTANTIATE_SWIGLU(double)

}  // namespace attn
