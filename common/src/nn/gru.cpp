// GRU cell, sequence (backprop through time) and bidirectional wrapper (see attn/nn/gru.hpp).
#include "attn/nn/gru.hpp"

#include <cmath>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

Gru gru_init(std::size_t input, std::size_t hidden, Rng& rng) {
  const float bound = 1.0f / std::sqrt(float(hidden));
  Gru p;
  p.wx = rng.uniform_mat(input, 3 * hidden, -bound, bound);
  p.wh = rng.uniform_mat(hidden, 3 * hidden, -bound, bound);
  p.bx = Vec::from_shape({3 * hidden});
  p.bh = Vec::from_shape({3 * hidden});
  for (auto& b : p.bx) b = rng.uniform(-bound, bound);
  for (auto& b : p.bh) b = rng.uniform(-bound, bound);
  return p;
}

template <class T>
GruT<T> zeros_like(const GruT<T>& p) {
  return GruT<T>{xt::zeros<T>(p.wx.shape()), xt::zeros<T>(p.wh.shape()), xt::zeros<T>(p.bx.shape()),
                 xt::zeros<T>(p.bh.shape())};
}

void register_params(ParamRegistry& reg, const std::string& prefix, Gru& p, Gru& grad) {
  register_visited(reg, p, grad, [&](auto& layer, auto&& f) { visit_params(layer, prefix, f); });
}

namespace {
template <class T>
void check_gru(const char* fn, const GruT<T>& p) {
  const std::size_t h = p.wh.shape(0);
  expect_shape(fn, "wh", shape_of(p.wh), {h, 3 * h});
  expect_shape(fn, "wx", shape_of(p.wx), {0, 3 * h});
  expect_shape(fn, "bx", shape_of(p.bx), {3 * h});
  expect_shape(fn, "bh", shape_of(p.bh), {3 * h});
}
}  // namespace

// ---- one step ----------------------------------------------------------------------------------

template <class T>
void gru_cell_forward(MatT<T>& h_new, GruStepCacheT<T>& cache, const MatT<T>& x, const MatT<T>& h,
                      const GruT<T>& p) {
  // x: (B, D), h: (B, H) -> h_new: (B, H)
  const char* fn = "gru_cell_forward";
  check_gru(fn, p);
  const std::size_t b = x.shape(0), d = p.wx.shape(0), hid = p.wh.shape(0);
  expect_shape(fn, "x", shape_of(x), {0, d});
  expect_shape(fn, "h", shape_of(h), {b, hid});
  MatT<T> gx({b, 3 * hid}), gh({b, 3 * hid});
  gemm_t(gx, x, p.wx, Op::N, Op::N, T(1), T(0));  // x·W_x   (B, 3H)
  gemm_t(gh, h, p.wh, Op::N, Op::N, T(1), T(0));  // h·W_h   (B, 3H)
  for (auto* m : {&cache.r, &cache.z, &cache.n, &cache.hn}) ensure_shape(*m, {b, hid});
  ensure_shape(h_new, {b, hid});
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t j = 0; j < hid; ++j) {
      const T r = sigmoid_t(gx(i, j) + p.bx(j) + gh(i, j) + p.bh(j));
      const T z = sigmoid_t(gx(i, hid + j) + p.bx(hid + j) + gh(i, hid + j) + p.bh(hid + j));
      const T hn = gh(i, 2 * hid + j) + p.bh(2 * hid + j);
      const T n = std::tanh(gx(i, 2 * hid + j) + p.bx(2 * hid + j) + r * hn);
      h_new(i, j) = (T(1) - z) * n + z * h(i, j);
      cache.r(i, j) = r;
      cache.z(i, j) = z;
      cache.n(i, j) = n;
      cache.hn(i, j) = hn;
    }
}

template <class T>
void gru_cell_backward(MatT<T>& dx, MatT<T>& dh, GruT<T>& dp, const MatT<T>& dh_new, const GruStepCacheT<T>& cache,
                       const MatT<T>& x, const MatT<T>& h, const GruT<T>& p) {
  // dh_new: (B, H) -> dx: (B, D), dh: (B, H), dp
  const char* fn = "gru_cell_backward";
  const std::size_t b = x.shape(0), d = p.wx.shape(0), hid = p.wh.shape(0);
  expect_shape(fn, "dh_new", shape_of(dh_new), {b, hid});
  expect_shape(fn, "dh", shape_of(dh), {b, hid});
  const bool want_dx = wants_grad(fn, "dx", dx, {b, d});
  MatT<T> dgx({b, 3 * hid}), dgh({b, 3 * hid});  // gradients of x·W_x + b_x and h·W_h + b_h
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t j = 0; j < hid; ++j) {
      const T r = cache.r(i, j), z = cache.z(i, j), n = cache.n(i, j), hn = cache.hn(i, j);
      const T g = dh_new(i, j);
      // forward: h' = (1 − z)·n + z·h
      const T dn = g * (T(1) - z);
      const T dz = g * (h(i, j) - n);
      dh(i, j) += g * z;
      // forward: n = tanh(a_n),  a_n = x·W_xn + b_xn + r·hn
      const T dan = dn * (T(1) - n * n);
      const T dr = dan * hn;
      // forward: r = σ(a_r), z = σ(a_z)
      const T dar = dr * r * (T(1) - r);
      const T daz = dz * z * (T(1) - z);
      dgx(i, j) = dar;
      dgx(i, hid + j) = daz;
      dgx(i, 2 * hid + j) = dan;
      dgh(i, j) = dar;
      dgh(i, hid + j) = daz;
      dgh(i, 2 * hid + j) = dan * r;  // hn = h·W_hn + b_hn is multiplied by r
    }
  // forward: gx = x·W_x + b_x,  gh = h·W_h + b_h
  gemm_t(dp.wx, x, dgx, Op::T, Op::N, T(1), T(1));  // dW_x += xᵀ·dgx
  gemm_t(dp.wh, h, dgh, Op::T, Op::N, T(1), T(1));  // dW_h += hᵀ·dgh
  if (want_dx) gemm_t(dx, dgx, p.wx, Op::N, Op::T, T(1), T(1));  // dx += dgx·W_xᵀ
  gemm_t(dh, dgh, p.wh, Op::N, Op::T, T(1), T(1));                // dh += dgh·W_hᵀ
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t j = 0; j < 3 * hid; ++j) {
      dp.bx(j) += dgx(i, j);
      dp.bh(j) += dgh(i, j);
    }
}

// ---- a whole sequence --------------------------------------------------------------------------

template <class T>
void gru_sequence_forward(Tensor3T<T>& hs, GruSeqCacheT<T>& cache, const Tensor3T<T>& x, const MatT<T>& h0,
                          const GruT<T>& p) {
  // x: (B, T, D), h0: (B, H) -> hs: (B, T, H)
  const char* fn = "gru_sequence_forward";
  check_gru(fn, p);
  const std::size_t b = x.shape(0), steps = x.shape(1), d = p.wx.shape(0), hid = p.wh.shape(0);
  expect_shape(fn, "x", shape_of(x), {0, 0, d});
  expect_shape(fn, "h0", shape_of(h0), {b, hid});
  ensure_shape(hs, {b, steps, hid});
  cache.steps.assign(steps, {});
  cache.x.assign(steps, MatT<T>({b, d}));
  cache.h_prev.assign(steps, MatT<T>({b, hid}));
  MatT<T> h = h0, h_new;
  for (std::size_t t = 0; t < steps; ++t) {
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t k = 0; k < d; ++k) cache.x[t](i, k) = x(i, t, k);  // x_t = x[:, t]
    cache.h_prev[t] = h;
    gru_cell_forward(h_new, cache.steps[t], cache.x[t], h, p);
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < hid; ++j) hs(i, t, j) = h_new(i, j);
    std::swap(h, h_new);
  }
}

template <class T>
void gru_sequence_backward(Tensor3T<T>& dx, MatT<T>& dh0, GruT<T>& dp, const Tensor3T<T>& dhs,
                           const GruSeqCacheT<T>& cache, const GruT<T>& p) {
  // dhs: (B, T, H) -> dx: (B, T, D), dh0: (B, H), dp
  const char* fn = "gru_sequence_backward";
  const std::size_t steps = cache.steps.size(), d = p.wx.shape(0), hid = p.wh.shape(0);
  const std::size_t b = steps > 0 ? cache.x[0].shape(0) : dhs.shape(0);
  expect_shape(fn, "dhs", shape_of(dhs), {b, steps, hid});
  const bool want_dx = wants_grad(fn, "dx", dx, {b, steps, d});
  const bool want_dh0 = wants_grad(fn, "dh0", dh0, {b, hid});
  MatT<T> carry = xt::zeros<T>({b, hid});  // ∂L/∂h_t flowing back from step t+1
  MatT<T> dh_new({b, hid}), dh_prev({b, hid}), dx_t({b, d});
  for (std::size_t t = steps; t-- > 0;) {
    // forward: hs[:, t] = h_t = cell(x_t, h_{t−1}); h_t feeds the loss and step t+1
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < hid; ++j) dh_new(i, j) = dhs(i, t, j) + carry(i, j);
    fill_zero(dh_prev);
    fill_zero(dx_t);
    gru_cell_backward(dx_t, dh_prev, dp, dh_new, cache.steps[t], cache.x[t], cache.h_prev[t], p);
    if (want_dx)
      for (std::size_t i = 0; i < b; ++i)
        for (std::size_t k = 0; k < d; ++k) dx(i, t, k) += dx_t(i, k);
    std::swap(carry, dh_prev);
  }
  if (want_dh0) dh0 += carry;
}

// ---- bidirectional -----------------------------------------------------------------------------

BiGru bigru_init(std::size_t input, std::size_t hidden, Rng& rng) {
  BiGru p;
  p.fwd = gru_init(input, hidden, rng);
  p.bwd = gru_init(input, hidden, rng);
  return p;
}

template <class T>
BiGruT<T> zeros_like(const BiGruT<T>& p) {
  return BiGruT<T>{zeros_like(p.fwd), zeros_like(p.bwd)};
}

void register_params(ParamRegistry& reg, const std::string& prefix, BiGru& p, BiGru& grad) {
  register_visited(reg, p, grad, [&](auto& layer, auto&& f) { visit_params(layer, prefix, f); });
}

namespace {
// out[:, t] = in[:, T−1−t]
template <class T>
Tensor3T<T> reverse_time(const Tensor3T<T>& in) {
  const std::size_t b = in.shape(0), steps = in.shape(1), c = in.shape(2);
  Tensor3T<T> out({b, steps, c});
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t t = 0; t < steps; ++t)
      for (std::size_t k = 0; k < c; ++k) out(i, t, k) = in(i, steps - 1 - t, k);
  return out;
}
}  // namespace

template <class T>
void bigru_forward(Tensor3T<T>& hs, BiGruCacheT<T>& cache, const Tensor3T<T>& x, const BiGruT<T>& p) {
  // x: (B, T, D) -> hs: (B, T, 2H)
  const std::size_t b = x.shape(0), steps = x.shape(1), hid = p.fwd.wh.shape(0);
  if (p.bwd.wh.shape(0) != hid) shape_mismatch("bigru_forward", "fwd.wh", shape_of(p.fwd.wh), "bwd.wh", shape_of(p.bwd.wh), "must match");
  const MatT<T> h0 = xt::zeros<T>({b, hid});
  Tensor3T<T> hf, hb_rev;
  gru_sequence_forward(hf, cache.fwd, x, h0, p.fwd);                 // left to right
  gru_sequence_forward(hb_rev, cache.bwd, reverse_time(x), h0, p.bwd);  // right to left
  ensure_shape(hs, {b, steps, 2 * hid});
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t t = 0; t < steps; ++t)
      for (std::size_t j = 0; j < hid; ++j) {
        hs(i, t, j) = hf(i, t, j);
        hs(i, t, hid + j) = hb_rev(i, steps - 1 - t, j);
      }
}

template <class T>
void bigru_backward(Tensor3T<T>& dx, BiGruT<T>& dp, const Tensor3T<T>& dhs, const BiGruCacheT<T>& cache,
                    const BiGruT<T>& p) {
  // dhs: (B, T, 2H) -> dx: (B, T, D), dp
  const std::size_t steps = cache.fwd.steps.size(), hid = p.fwd.wh.shape(0), d = p.fwd.wx.shape(0);
  const std::size_t b = dhs.shape(0);
  expect_shape("bigru_backward", "dhs", shape_of(dhs), {0, steps, 2 * hid});
  const bool want_dx = wants_grad("bigru_backward", "dx", dx, {b, steps, d});
  // forward: hs[:, t] = [hf[:, t] ; hb_rev[:, T−1−t]]
  Tensor3T<T> dhf({b, steps, hid}), dhb_rev({b, steps, hid});
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t t = 0; t < steps; ++t)
      for (std::size_t j = 0; j < hid; ++j) {
        dhf(i, t, j) = dhs(i, t, j);
        dhb_rev(i, steps - 1 - t, j) = dhs(i, t, hid + j);
      }
  Tensor3T<T> dxf, dxb_rev;
  MatT<T> no_dh0;
  if (want_dx) {
    dxf = xt::zeros<T>({b, steps, d});
    dxb_rev = xt::zeros<T>({b, steps, d});
  }
  gru_sequence_backward(dxf, no_dh0, dp.fwd, dhf, cache.fwd, p.fwd);
  gru_sequence_backward(dxb_rev, no_dh0, dp.bwd, dhb_rev, cache.bwd, p.bwd);
  if (want_dx)
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t t = 0; t < steps; ++t)
        for (std::size_t k = 0; k < d; ++k) dx(i, t, k) += dxf(i, t, k) + dxb_rev(i, steps - 1 - t, k);
}

#define ATTN_INSTANTIATE_GRU(T)                                                                             \
  template GruT<T> zeros_like(const GruT<T>&);                                                              \
  template BiGruT<T> zeros_like(const BiGruT<T>&);                                                          \
  template void gru_cell_forward(MatT<T>&, GruStepCacheT<T>&, const MatT<T>&, const MatT<T>&, const GruT<T>&); \
  template void gru_cell_backward(MatT<T>&, MatT<T>&, GruT<T>&, const MatT<T>&, const GruStepCacheT<T>&,    \
                                  const MatT<T>&, const MatT<T>&, const GruT<T>&);                          \
  template void gru_sequence_forward(Tensor3T<T>&, GruSeqCacheT<T>&, const Tensor3T<T>&, const MatT<T>&,    \
                                     const GruT<T>&);                                                       \
  template void gru_sequence_backward(Tensor3T<T>&, MatT<T>&, GruT<T>&, const Tensor3T<T>&,                 \
                                      const GruSeqCacheT<T>&, const GruT<T>&);                              \
  template void bigru_forward(Tensor3T<T>&, BiGruCacheT<T>&, const Tensor3T<T>&, const BiGruT<T>&);         \
  template void bigru_backward(Tensor3T<T>&, BiGruT<T>&, const Tensor3T<T>&, const BiGruCacheT<T>&,         \
                               const BiGruT<T>&);
ATTN_INSTANTIATE_GRU(float)
ATTN_INSTANTIATE_GRU(double)

}  // namespace attn
