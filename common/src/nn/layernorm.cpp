// LayerNorm and RMSNorm over rows (see attn/nn/layernorm.hpp); forward and backward as llm.c writes them.
#include "attn/nn/layernorm.hpp"

#include <cmath>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

Norm layernorm_init(std::size_t channels) {
  Norm p;
  p.gamma = xt::ones<float>({channels});
  p.beta = xt::zeros<float>({channels});
  return p;
}

Norm rmsnorm_init(std::size_t channels) {
  Norm p;
  p.gamma = xt::ones<float>({channels});
  return p;
}

template <class T>
NormT<T> zeros_like(const NormT<T>& p) {
  NormT<T> g = p;  // the shapes (beta empty for RMSNorm), then zeros
  for (auto* v : {&g.gamma, &g.beta}) v->fill(T(0));
  return g;
}

void register_params(ParamRegistry& reg, const std::string& prefix, Norm& p, Norm& grad) {
  reg.add(prefix + ".gamma", p.gamma, grad.gamma);
  reg.add(prefix + ".beta", p.beta, grad.beta);
}

template <class T>
void layernorm_forward(MatT<T>& y, VecT<T>& mean, VecT<T>& rstd, const MatT<T>& x, const NormT<T>& p, T eps) {
  // x: (N, C), γ, β: (C,) -> y: (N, C), mean, rstd: (N,)
  const char* fn = "layernorm_forward";
  const std::size_t n = x.shape(0), c = x.shape(1);
  expect_shape(fn, "gamma", shape_of(p.gamma), {c});
  expect_shape(fn, "beta", shape_of(p.beta), {c});
  ensure_shape(y, {n, c});
  ensure_shape(mean, {n});
  ensure_shape(rstd, {n});
  for (std::size_t i = 0; i < n; ++i) {
    const T* xi = x.data() + i * c;
    T m = 0;
    for (std::size_t j = 0; j < c; ++j) m += xi[j];
    m /= T(c);
    T var = 0;
    for (std::size_t j = 0; j < c; ++j) var += (xi[j] - m) * (xi[j] - m);
    var /= T(c);  // biased variance, as PyTorch's LayerNorm
    const T s = T(1) / std::sqrt(var + eps);
    T* yi = y.data() + i * c;
    const T *g = p.gamma.data(), *b = p.beta.data();
    for (std::size_t j = 0; j < c; ++j) yi[j] = (xi[j] - m) * s * g[j] + b[j];
    mean(i) = m;
    rstd(i) = s;
  }
}

template <class T>
void layernorm_backward(MatT<T>& dx, NormT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const VecT<T>& mean,
                        const VecT<T>& rstd, const NormT<T>& p) {
  // dy, x: (N, C) -> dx: (N, C), dγ, dβ: (C,)
  const char* fn = "layernorm_backward";
  const std::size_t n = x.shape(0), c = x.shape(1);
  expect_same_shape(fn, "dy", dy, "x", x);
  expect_same_shape(fn, "dx", dx, "x", x);
  expect_shape(fn, "dp.gamma", shape_of(dp.gamma), {c});
  expect_shape(fn, "dp.beta", shape_of(dp.beta), {c});
  const T* g = p.gamma.data();
  T *dg = dp.gamma.data(), *db = dp.beta.data();
  for (std::size_t i = 0; i < n; ++i) {
    const T *xi = x.data() + i * c, *dyi = dy.data() + i * c;
    T* dxi = dx.data() + i * c;
    const T mu = mean(i), rs = rstd(i);
    // forward: x̂ = (x − μ)·rstd,  y = x̂·γ + β
    T mean_dn = 0, mean_dn_xhat = 0;  // mean over j of dx̂_j and of dx̂_j·x̂_j
    for (std::size_t j = 0; j < c; ++j) {
      const T xhat = (xi[j] - mu) * rs;
      const T dn = dyi[j] * g[j];
      mean_dn += dn;
      mean_dn_xhat += dn * xhat;
      dg[j] += dyi[j] * xhat;
      db[j] += dyi[j];
    }
    mean_dn /= T(c);
    mean_dn_xhat /= T(c);
    // dx = rstd · (dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂))
    for (std::size_t j = 0; j < c; ++j) {
      const T xhat = (xi[j] - mu) * rs;
      dxi[j] += rs * (dyi[j] * g[j] - mean_dn - xhat * mean_dn_xhat);
    }
  }
}

template <class T>
void rmsnorm_forward(MatT<T>& y, VecT<T>& rstd, const MatT<T>& x, const NormT<T>& p, T eps) {
  // x: (N, C), γ: (C,) -> y: (N, C), rstd: (N,)
  const std::size_t n = x.shape(0), c = x.shape(1);
  expect_shape("rmsnorm_forward", "gamma", shape_of(p.gamma), {c});
  ensure_shape(y, {n, c});
  ensure_shape(rstd, {n});
  for (std::size_t i = 0; i < n; ++i) {
    T ms = 0;
    for (std::size_t j = 0; j < c; ++j) ms += x(i, j) * x(i, j);
    const T s = T(1) / std::sqrt(ms / T(c) + eps);
    for (std::size_t j = 0; j < c; ++j) y(i, j) = x(i, j) * s * p.gamma(j);
    rstd(i) = s;
  }
}

template <class T>
void rmsnorm_backward(MatT<T>& dx, NormT<T>& dp, const MatT<T>& dy, const MatT<T>& x, const VecT<T>& rstd,
                      const NormT<T>& p) {
  // dy, x: (N, C) -> dx: (N, C), dγ: (C,)
  const char* fn = "rmsnorm_backward";
  const std::size_t n = x.shape(0), c = x.shape(1);
  expect_same_shape(fn, "dy", dy, "x", x);
  expect_same_shape(fn, "dx", dx, "x", x);
  expect_shape(fn, "dp.gamma", shape_of(dp.gamma), {c});
  for (std::size_t i = 0; i < n; ++i) {
    // forward: y_j = x_j·rstd·γ_j,  rstd = (Σ_k x_k²/C + ε)^(−1/2)
    // so dx_j = rstd·γ_j·dy_j − x_j·rstd³/C · Σ_k dy_k γ_k x_k
    T dot = 0;
    for (std::size_t j = 0; j < c; ++j) {
      dot += dy(i, j) * p.gamma(j) * x(i, j);
      dp.gamma(j) += dy(i, j) * x(i, j) * rstd(i);
    }
    const T r = rstd(i), coef = r * r * r * dot / T(c);
    for (std::size_t j = 0; j < c; ++j) dx(i, j) += r * p.gamma(j) * dy(i, j) - x(i, j) * coef;
  }
}

#define ATTN_INSTANTIATE_NORM(T)                                                                         \
  template NormT<T> zeros_like(const NormT<T>&);                                                         \
  template void layernorm_forward(MatT<T>&, VecT<T>&, VecT<T>&, const MatT<T>&, const NormT<T>&, T);     \
  template void layernorm_backward(MatT<T>&, NormT<T>&, const MatT<T>&, const MatT<T>&, const VecT<T>&, \
                                   const VecT<T>&, const NormT<T>&);                                     \
  template void rmsnorm_forward(MatT<T>&, VecT<T>&, const MatT<T>&, const NormT<T>&, T);                \
  template void rmsnorm_backward(MatT<T>&, NormT<T>&, const MatT<T>&, const MatT<T>&, const VecT<T>&,   \
                                 const NormT<T>&);
ATTN_INSTANTIATE_NORM(float)
ATTN_INSTANTIATE_NORM(double)

}  // namespace attn
