// Short convolution, selective SSM and causal linear attention: forward and backward (see
// attn/nn/sequence_mixers.hpp). Each gradient line sits under the forward line it differentiates.
#include "attn/nn/sequence_mixers.hpp"

#include <cmath>

#include "attn/attention/ssd.hpp"
#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

namespace {

template <class T> T softplus_t(T z) { return z > T(20) ? z : std::log1p(std::exp(z)); }

template <class T> Tensor3T<T> zeros3(std::size_t a, std::size_t b, std::size_t c) {
  return xt::zeros<T>({a, b, c});
}

void check_heads(const char* fn, std::size_t channels, std::size_t heads) {
  if (heads == 0 || channels % heads != 0)
    throw ShapeError(std::string(fn) + ": " + std::to_string(heads) + " heads do not divide d_model = " +
                     std::to_string(channels));
}

}  // namespace

// ------------------------------------------------------------------ short convolution

ShortConv short_conv_init(std::size_t channels, std::size_t taps, Rng& rng) {
  ShortConv p;
  p.w = xt::zeros<float>({taps, channels});
  const float bound = 1.0f / std::sqrt(float(taps));
  for (std::size_t c = 0; c < channels; ++c) {
    p.w(0, c) = 1.0f;
    for (std::size_t k = 1; k < taps; ++k) p.w(k, c) = rng.uniform(-bound, bound);
  }
  return p;
}

template <class T>
ShortConvT<T> zeros_like(const ShortConvT<T>& p) {
  return {xt::zeros<T>(p.w.shape())};
}

template <class T>
void short_conv_forward(Tensor3T<T>& s, const Tensor3T<T>& u, const ShortConvT<T>& p) {
  const std::size_t nb = u.shape(0), nt = u.shape(1), nc = u.shape(2), taps = p.w.shape(0);
  expect_shape("short_conv_forward", "w", shape_of(p.w), {0, nc});
  ensure_shape(s, shape_of(u));
  fill_zero(s);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t t = 0; t < nt; ++t)
      for (std::size_t k = 0; k < taps && k <= t; ++k)
        for (std::size_t c = 0; c < nc; ++c) s(b, t, c) += p.w(k, c) * u(b, t - k, c);  // s_t = Σ_k w_k ⊙ u_{t−k}
}

template <class T>
void short_conv_backward(Tensor3T<T>& du, ShortConvT<T>& dp, const Tensor3T<T>& ds, const Tensor3T<T>& u,
                         const ShortConvT<T>& p) {
  const char* fn = "short_conv_backward";
  expect_shape(fn, "ds", shape_of(ds), shape_of(u));
  expect_shape(fn, "dw", shape_of(dp.w), shape_of(p.w));
  const bool want_du = wants_grad(fn, "du", du, shape_of(u));
  const std::size_t nb = u.shape(0), nt = u.shape(1), nc = u.shape(2), taps = p.w.shape(0);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t t = 0; t < nt; ++t)
      for (std::size_t k = 0; k < taps && k <= t; ++k)
        for (std::size_t c = 0; c < nc; ++c) {
          // forward: s_t += w_k ⊙ u_{t−k}
          dp.w(k, c) += ds(b, t, c) * u(b, t - k, c);
          if (want_du) du(b, t - k, c) += ds(b, t, c) * p.w(k, c);
        }
}

// ------------------------------------------------------------------ selective SSM

SelectiveSsm selective_ssm_init(std::size_t d_model, std::size_t heads, std::size_t state_n, Rng& rng) {
  check_heads("selective_ssm_init", d_model, heads);
  SelectiveSsm p;
  p.heads = heads;
  p.state_n = state_n;
  p.in_x = linear_init(d_model, d_model, rng, false);
  p.in_b = linear_init(d_model, state_n, rng, false);
  p.in_c = linear_init(d_model, state_n, rng, false);
  p.in_dt = linear_init(d_model, heads, rng, true);
  p.a_log = xt::zeros<float>({heads});
  p.d_skip = xt::ones<float>({heads});
  for (std::size_t h = 0; h < heads; ++h) {
    // Δ0 log-spaced in [0.1, 1] (Mamba-2 uses [0.001, 0.1]; on MQAR at this size the larger Δ
    // trained better); b_Δ = softplus⁻¹(Δ0) = log(exp(Δ0) − 1)
    const double frac = heads > 1 ? double(h) / double(heads - 1) : 0.0;
    const double dt0 = std::exp(std::log(0.1) + frac * (std::log(1.0) - std::log(0.1)));
    p.in_dt.b(h) = float(std::log(std::expm1(dt0)));
    p.a_log(h) = float(std::log(double(h + 1)));
  }
  p.out = linear_init(d_model, d_model, rng, false);
  return p;
}

template <class T>
SelectiveSsmT<T> zeros_like(const SelectiveSsmT<T>& p) {
  SelectiveSsmT<T> z;
  z.heads = p.heads;
  z.state_n = p.state_n;
  z.in_x = zeros_like(p.in_x);
  z.in_b = zeros_like(p.in_b);
  z.in_c = zeros_like(p.in_c);
  z.in_dt = zeros_like(p.in_dt);
  z.a_log = xt::zeros<T>(p.a_log.shape());
  z.d_skip = xt::zeros<T>(p.d_skip.shape());
  z.out = zeros_like(p.out);
  return z;
}

std::size_t selective_ssm_state_floats(std::size_t d_model, std::size_t heads, std::size_t state_n) {
  return heads * state_n * (d_model / heads);
}

template <class T>
void selective_ssm_forward(Tensor3T<T>& out, SelectiveSsmCacheT<T>& cache, const Tensor3T<T>& u,
                           const SelectiveSsmT<T>& p) {
  const char* fn = "selective_ssm_forward";
  const std::size_t nb = u.shape(0), nt = u.shape(1), nc = u.shape(2), nh = p.heads, nn = p.state_n;
  check_heads(fn, nc, nh);
  expect_shape(fn, "in_x.w", shape_of(p.in_x.w), {nc, nc});
  expect_shape(fn, "in_b.w", shape_of(p.in_b.w), {nc, nn});
  expect_shape(fn, "a_log", shape_of(p.a_log), {nh});
  const std::size_t np = nc / nh;
  linear_forward(cache.x, u, p.in_x);    // x = u·W_x
  linear_forward(cache.b, u, p.in_b);    // B = u·W_B
  linear_forward(cache.c, u, p.in_c);    // C = u·W_C
  linear_forward(cache.dt_raw, u, p.in_dt);
  ensure_shape(cache.dt, {nb, nt, nh});
  ensure_shape(cache.log_a, {nb, nt, nh});
  for (std::size_t i = 0; i < cache.dt.size(); ++i) {
    const std::size_t h = i % nh;
    cache.dt.data()[i] = softplus_t(cache.dt_raw.data()[i]);                   // Δ = softplus(u·W_Δ + b_Δ)
    cache.log_a.data()[i] = -cache.dt.data()[i] * std::exp(p.a_log(h));        // log a = −Δ·A
  }
  ensure_shape(cache.states, {nb, nh, nt, nn * np});
  ensure_shape(cache.y, {nb, nt, nc});
  fill_zero(cache.y);
  std::vector<T> hs(nn * np);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t h = 0; h < nh; ++h) {
      std::fill(hs.begin(), hs.end(), T(0));
      for (std::size_t t = 0; t < nt; ++t) {
        const T a = std::exp(cache.log_a(b, t, h)), dt = cache.dt(b, t, h);
        const T* xr = &cache.x(b, t, h * np);
        T* yr = &cache.y(b, t, h * np);
        for (std::size_t i = 0; i < nn; ++i) {
          const T bi = cache.b(b, t, i) * dt, ci = cache.c(b, t, i);
          T* hrow = &hs[i * np];
          for (std::size_t j = 0; j < np; ++j) {
            hrow[j] = a * hrow[j] + bi * xr[j];  // h_t = a_t·h_{t−1} + B_t (Δ_t x_t)ᵀ
            yr[j] += ci * hrow[j];               // y_t = h_tᵀ C_t
          }
        }
        for (std::size_t j = 0; j < np; ++j) yr[j] += p.d_skip(h) * xr[j];  // + D x_t
        std::copy(hs.begin(), hs.end(), &cache.states(b, h, t, 0));
      }
    }
  linear_forward(out, cache.y, p.out);  // out = y·W_O
}

template <class T>
void selective_ssm_backward(Tensor3T<T>& du, SelectiveSsmT<T>& dp, const Tensor3T<T>& dout,
                            const SelectiveSsmCacheT<T>& cache, const Tensor3T<T>& u, const SelectiveSsmT<T>& p) {
  const char* fn = "selective_ssm_backward";
  expect_shape(fn, "dout", shape_of(dout), shape_of(u));
  const std::size_t nb = u.shape(0), nt = u.shape(1), nc = u.shape(2), nh = p.heads, nn = p.state_n;
  const std::size_t np = nc / nh;
  // out = y·W_O
  Tensor3T<T> dy = zeros3<T>(nb, nt, nc);
  linear_backward(dy, dp.out, dout, cache.y, p.out);
  Tensor3T<T> dx = zeros3<T>(nb, nt, nc), dbm = zeros3<T>(nb, nt, nn), dcm = zeros3<T>(nb, nt, nn);
  Tensor3T<T> dlog_a = zeros3<T>(nb, nt, nh), ddt = zeros3<T>(nb, nt, nh);
  std::vector<T> g(nn * np), dh(nn * np);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t h = 0; h < nh; ++h) {
      std::fill(g.begin(), g.end(), T(0));  // ∂L/∂h_t arriving from h_{t+1}
      for (std::size_t t = nt; t-- > 0;) {
        const T a = std::exp(cache.log_a(b, t, h)), dt = cache.dt(b, t, h);
        const T* xr = &cache.x(b, t, h * np);
        const T* dyr = &dy(b, t, h * np);
        const T* ht = &cache.states(b, h, t, 0);
        const T* hprev = t > 0 ? &cache.states(b, h, t - 1, 0) : nullptr;
        T* dxr = &dx(b, t, h * np);
        // y_t += D x_t
        for (std::size_t j = 0; j < np; ++j) {
          dp.d_skip(h) += dyr[j] * xr[j];
          dxr[j] += p.d_skip(h) * dyr[j];
        }
        T da = 0, ddt_bx = 0;
        for (std::size_t i = 0; i < nn; ++i) {
          const T bi = cache.b(b, t, i), ci = cache.c(b, t, i);
          T dci = 0, dbi = 0;
          for (std::size_t j = 0; j < np; ++j) {
            // y_t = h_tᵀ C_t  ->  dC_t += h_t dy_t,  dh_t = g + C_t dy_tᵀ
            dci += ht[i * np + j] * dyr[j];
            const T dhij = g[i * np + j] + ci * dyr[j];
            // h_t = a_t·h_{t−1} + (Δ_t B_t) x_tᵀ  ->  da += dh ⊙ h_{t−1},  d(Δ B)_i += dh_i·x,  dx += (Δ B_i) dh_i
            if (hprev) da += dhij * hprev[i * np + j];
            dbi += dhij * xr[j];
            dxr[j] += bi * dt * dhij;
            g[i * np + j] = a * dhij;  // ∂L/∂h_{t−1} through the decay
          }
          dcm(b, t, i) += dci;
          dbm(b, t, i) += dbi * dt;  // B is shared by the heads: their gradients add
          ddt_bx += dbi * bi;
        }
        // a = exp(log a)
        dlog_a(b, t, h) = da * a;
        ddt(b, t, h) = ddt_bx;
      }
    }
  // log a = −Δ·exp(A_log),  Δ = softplus(z)
  Tensor3T<T> ddt_raw = zeros3<T>(nb, nt, nh);
  for (std::size_t i = 0; i < ddt.size(); ++i) {
    const std::size_t h = i % nh;
    const T big_a = std::exp(p.a_log(h)), dl = dlog_a.data()[i];
    dp.a_log(h) += dl * cache.log_a.data()[i];  // ∂(−Δ·e^{A_log})/∂A_log = log a
    const T ddelta = ddt.data()[i] - dl * big_a;
    ddt_raw.data()[i] = ddelta * sigmoid_t(cache.dt_raw.data()[i]);  // softplus' = σ
  }
  wants_grad(fn, "du", du, shape_of(u));  // its shape checked up front; empty: every product skips it
  linear_backward(du, dp.in_x, dx, u, p.in_x);
  linear_backward(du, dp.in_b, dbm, u, p.in_b);
  linear_backward(du, dp.in_c, dcm, u, p.in_c);
  linear_backward(du, dp.in_dt, ddt_raw, u, p.in_dt);
}

Vec selective_ssm_step(const SelectiveSsm& p, Tensor3& state, const Vec& u) {
  const std::size_t nc = u.size(), nh = p.heads, nn = p.state_n, np = nc / nh;
  expect_shape("selective_ssm_step", "state", shape_of(state), {nh, nn, np});
  Mat row = Mat::from_shape({std::size_t(1), nc});
  std::copy(u.begin(), u.end(), row.begin());
  Mat x, b, c, dt_raw, out;
  linear_forward(x, row, p.in_x);
  linear_forward(b, row, p.in_b);
  linear_forward(c, row, p.in_c);
  linear_forward(dt_raw, row, p.in_dt);
  Mat y = Mat::from_shape({std::size_t(1), nc});
  Vec bv = xt::view(b, 0, xt::all()), cv = xt::view(c, 0, xt::all());
  Mat hstate = Mat::from_shape({nn, np});
  for (std::size_t h = 0; h < nh; ++h) {
    const float dt = softplus_t(dt_raw(0, h)), a = std::exp(-dt * std::exp(p.a_log(h)));
    Vec xh = Vec::from_shape({np});
    for (std::size_t j = 0; j < np; ++j) xh(j) = dt * x(0, h * np + j);  // Δ·x
    std::copy(&state(h, 0, 0), &state(h, 0, 0) + nn * np, hstate.begin());
    const Vec yh = ssd_scan_step(hstate, a, bv, cv, xh);
    std::copy(hstate.begin(), hstate.end(), &state(h, 0, 0));
    for (std::size_t j = 0; j < np; ++j) y(0, h * np + j) = yh(j) + p.d_skip(h) * x(0, h * np + j);
  }
  linear_forward(out, y, p.out);
  return xt::view(out, 0, xt::all());
}

// ------------------------------------------------------------------ causal linear attention

LinearAttentionLayer linear_attention_layer_init(std::size_t d_model, std::size_t heads, Rng& rng) {
  check_heads("linear_attention_layer_init", d_model, heads);
  LinearAttentionLayer p;
  p.heads = heads;
  p.q = linear_init(d_model, d_model, rng, false);
  p.k = linear_init(d_model, d_model, rng, false);
  p.v = linear_init(d_model, d_model, rng, false);
  p.out = linear_init(d_model, d_model, rng, false);
  return p;
}

template <class T>
LinearAttentionLayerT<T> zeros_like(const LinearAttentionLayerT<T>& p) {
  return {p.heads, zeros_like(p.q), zeros_like(p.k), zeros_like(p.v), zeros_like(p.out)};
}

std::size_t linear_attention_state_floats(std::size_t d_model, std::size_t heads) {
  const std::size_t dk = d_model / heads;
  return heads * (dk * dk + dk);
}

namespace {
template <class T> T phi(T x) { return x > T(0) ? x + T(1) : std::exp(x); }   // elu + 1
template <class T> T dphi(T x) { return x > T(0) ? T(1) : std::exp(x); }
template <class T> Tensor3T<T> phi_of(const Tensor3T<T>& x) {
  Tensor3T<T> y = Tensor3T<T>::from_shape(x.shape());
  for (std::size_t i = 0; i < x.size(); ++i) y.data()[i] = phi(x.data()[i]);
  return y;
}
}  // namespace

template <class T>
void linear_attention_layer_forward(Tensor3T<T>& out, LinearAttentionCacheT<T>& cache, const Tensor3T<T>& u,
                                    const LinearAttentionLayerT<T>& p) {
  const char* fn = "linear_attention_layer_forward";
  const std::size_t nb = u.shape(0), nt = u.shape(1), nc = u.shape(2), nh = p.heads;
  check_heads(fn, nc, nh);
  const std::size_t dk = nc / nh;
  linear_forward(cache.q, u, p.q);
  linear_forward(cache.k, u, p.k);
  linear_forward(cache.v, u, p.v);
  ensure_shape(cache.weights, {nb, nh, nt, nt});
  ensure_shape(cache.norm, {nb, nh, nt});
  ensure_shape(cache.concat, {nb, nt, nc});
  fill_zero(cache.weights);
  fill_zero(cache.concat);
  const Tensor3T<T> fq = phi_of(cache.q), fk = phi_of(cache.k);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t h = 0; h < nh; ++h)
      for (std::size_t t = 0; t < nt; ++t) {
        const T* qt = &fq(b, t, h * dk);
        T* w = &cache.weights(b, h, t, 0);
        T z = 0;
        for (std::size_t s = 0; s <= t; ++s) {  // A_ts = φ(q_t)·φ(k_s), s ≤ t
          const T* ks = &fk(b, s, h * dk);
          T dot = 0;
          for (std::size_t e = 0; e < dk; ++e) dot += qt[e] * ks[e];
          w[s] = dot;
          z += dot;
        }
        cache.norm(b, h, t) = z;
        T* o = &cache.concat(b, t, h * dk);
        for (std::size_t s = 0; s <= t; ++s) {  // P_ts = A_ts / z_t,  O_t = Σ_s P_ts v_s
          w[s] /= z;
          const T* vs = &cache.v(b, s, h * dk);
          for (std::size_t e = 0; e < dk; ++e) o[e] += w[s] * vs[e];
        }
      }
  linear_forward(out, cache.concat, p.out);
}

template <class T>
void linear_attention_layer_backward(Tensor3T<T>& du, LinearAttentionLayerT<T>& dp, const Tensor3T<T>& dout,
                                     const LinearAttentionCacheT<T>& cache, const Tensor3T<T>& u,
                                     const LinearAttentionLayerT<T>& p) {
  const char* fn = "linear_attention_layer_backward";
  expect_shape(fn, "dout", shape_of(dout), shape_of(u));
  const std::size_t nb = u.shape(0), nt = u.shape(1), nc = u.shape(2), nh = p.heads, dk = nc / nh;
  Tensor3T<T> dconcat = zeros3<T>(nb, nt, nc);
  linear_backward(dconcat, dp.out, dout, cache.concat, p.out);
  Tensor3T<T> dv = zeros3<T>(nb, nt, nc);
  const Tensor3T<T> fq = phi_of(cache.q), fk = phi_of(cache.k);
  Tensor3T<T> dfq = zeros3<T>(nb, nt, nc), dfk = zeros3<T>(nb, nt, nc);
  std::vector<T> dpw(nt);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t h = 0; h < nh; ++h)
      for (std::size_t t = 0; t < nt; ++t) {
        const T* w = &cache.weights(b, h, t, 0);
        const T* dot = &dconcat(b, t, h * dk);
        // O_t = Σ_s P_ts v_s  ->  dP_ts = dO_t·v_s,  dv_s += P_ts dO_t
        T row = 0;
        for (std::size_t s = 0; s <= t; ++s) {
          const T* vs = &cache.v(b, s, h * dk);
          T* dvs = &dv(b, s, h * dk);
          T d = 0;
          for (std::size_t e = 0; e < dk; ++e) {
            d += dot[e] * vs[e];
            dvs[e] += w[s] * dot[e];
          }
          dpw[s] = d;
          row += d * w[s];
        }
        // P_ts = A_ts / z_t  ->  dA_ts = (dP_ts − Σ_s' dP_ts' P_ts') / z_t
        const T z = cache.norm(b, h, t);
        const T* qt = &fq(b, t, h * dk);
        T* dqt = &dfq(b, t, h * dk);
        for (std::size_t s = 0; s <= t; ++s) {
          const T da = (dpw[s] - row) / z;
          // A_ts = φ(q_t)·φ(k_s)  ->  dφ(q_t) += da·φ(k_s),  dφ(k_s) += da·φ(q_t)
          const T* ks = &fk(b, s, h * dk);
          T* dks = &dfk(b, s, h * dk);
          for (std::size_t e = 0; e < dk; ++e) {
            dqt[e] += da * ks[e];
            dks[e] += da * qt[e];
          }
        }
      }
  // φ = elu + 1  ->  dq = dφ(q) ⊙ φ'(q)
  Tensor3T<T> dq = zeros3<T>(nb, nt, nc), dk3 = zeros3<T>(nb, nt, nc);
  for (std::size_t i = 0; i < dq.size(); ++i) {
    dq.data()[i] = dfq.data()[i] * dphi(cache.q.data()[i]);
    dk3.data()[i] = dfk.data()[i] * dphi(cache.k.data()[i]);
  }
  wants_grad(fn, "du", du, shape_of(u));  // its shape checked up front; empty: every product skips it
  linear_backward(du, dp.q, dq, u, p.q);
  linear_backward(du, dp.k, dk3, u, p.k);
  linear_backward(du, dp.v, dv, u, p.v);
}

#define ATTN_INSTANTIATE_MIXERS(T)                                                                          \
  template ShortConvT<T> zeros_like(const ShortConvT<T>&);                                                  \
  template void short_conv_forward(Tensor3T<T>&, const Tensor3T<T>&, const ShortConvT<T>&);               \
  template void short_conv_backward(Tensor3T<T>&, ShortConvT<T>&, const Tensor3T<T>&, const Tensor3T<T>&,  \
                                    const ShortConvT<T>&);                                                  \
  template SelectiveSsmT<T> zeros_like(const SelectiveSsmT<T>&);                                            \
  template void selective_ssm_forward(Tensor3T<T>&, SelectiveSsmCacheT<T>&, const Tensor3T<T>&,             \
                                      const SelectiveSsmT<T>&);                                             \
  template void selective_ssm_backward(Tensor3T<T>&, SelectiveSsmT<T>&, const Tensor3T<T>&,                 \
                                       const SelectiveSsmCacheT<T>&, const Tensor3T<T>&,                    \
                                       const SelectiveSsmT<T>&);                                            \
  template LinearAttentionLayerT<T> zeros_like(const LinearAttentionLayerT<T>&);                            \
  template void linear_attention_layer_forward(Tensor3T<T>&, LinearAttentionCacheT<T>&, const Tensor3T<T>&, \
                                               const LinearAttentionLayerT<T>&);                            \
  template void linear_attention_layer_backward(Tensor3T<T>&, LinearAttentionLayerT<T>&, const Tensor3T<T>&, \
                                                const LinearAttentionCacheT<T>&, const Tensor3T<T>&,        \
                                                const LinearAttentionLayerT<T>&);
ATTN_INSTANTIATE_MIXERS(float)
ATTN_INSTANTIATE_MIXERS(double)

}  // namespace attn
