// Luong (multiplicative) attention: dot / general / concat scores, global / local-m / local-p
// windows, forward and backward (see attn/attention/luong_attention.hpp).
#include "attn/attention/luong_attention.hpp"

#include <cmath>
#include <limits>

#include "tensor/layer_kernels.hpp"

namespace attn {

using namespace detail;

const char* luong_score_name(LuongScore s) {
  switch (s) {
    case LuongScore::Dot: return "dot";
    case LuongScore::General: return "general";
    case LuongScore::Concat: return "concat";
  }
  return "?";
}

const char* luong_window_name(LuongWindow w) {
  switch (w) {
    case LuongWindow::Global: return "global";
    case LuongWindow::LocalM: return "local-m";
    case LuongWindow::LocalP: return "local-p";
  }
  return "?";
}

Luong luong_init(const LuongConfig& cfg, std::size_t dec_hidden, std::size_t enc_hidden, std::size_t attn_size,
                 Rng& rng) {
  Luong p;
  const float bd = 1.0f / std::sqrt(float(dec_hidden)), ba = 1.0f / std::sqrt(float(attn_size));
  if (cfg.score == LuongScore::General) p.w_a = rng.uniform_mat(dec_hidden, enc_hidden, -bd, bd);
  if (cfg.score == LuongScore::Concat) {
    const float bc = 1.0f / std::sqrt(float(dec_hidden + enc_hidden));
    p.w_c = rng.uniform_mat(dec_hidden + enc_hidden, attn_size, -bc, bc);
    p.v_c = Vec::from_shape({attn_size});
    for (auto& v : p.v_c) v = rng.uniform(-ba, ba);
  }
  if (cfg.window == LuongWindow::LocalP) {
    p.w_p = rng.uniform_mat(dec_hidden, attn_size, -bd, bd);
    p.v_p = Vec::from_shape({attn_size});
    for (auto& v : p.v_p) v = rng.uniform(-ba, ba);
  }
  return p;
}

template <class T>
LuongT<T> zeros_like(const LuongT<T>& p) {
  return LuongT<T>{xt::zeros<T>(p.w_a.shape()), xt::zeros<T>(p.w_c.shape()), xt::zeros<T>(p.v_c.shape()),
                   xt::zeros<T>(p.w_p.shape()), xt::zeros<T>(p.v_p.shape())};
}

void register_params(ParamRegistry& reg, const std::string& prefix, Luong& p, Luong& grad) {
  register_visited(reg, p, grad, [&](auto& layer, auto&& f) { visit_params(layer, prefix, f); });
}

namespace {
// The source half of W_c: rows Hd … Hd + He − 1 of W_c (Hd + He, A), i.e. W_c[Hd:].
template <class T> const T* w_c_source_half(const LuongT<T>& p, std::size_t he) {
  return p.w_c.data() + (p.w_c.shape(0) - he) * p.w_c.shape(1);
}
}  // namespace

template <class T>
void luong_keys_forward(Tensor3T<T>& keys, const Tensor3T<T>& enc, const LuongT<T>& p, LuongScore score) {
  // enc: (B, S, He) -> keys: (B, S, A) h̄_s·W_c[Hd:]  (concat only; other scores: keys empty)
  if (score != LuongScore::Concat) {
    keys = Tensor3T<T>();
    return;
  }
  const char* fn = "luong_keys_forward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2), a = p.w_c.shape(1);
  if (p.w_c.shape(0) <= he)
    shape_mismatch(fn, "w_c", shape_of(p.w_c), "enc", shape_of(enc), "W_c needs Hd + He rows");
  ensure_shape(keys, {b, s, a});
  gemm_raw(Op::N, Op::N, b * s, a, he, T(1), enc.data(), he, w_c_source_half(p, he), a, T(0), keys.data(), a);
}

template <class T>
void luong_keys_backward(Tensor3T<T>& denc, LuongT<T>& dp, const Tensor3T<T>& dkeys, const Tensor3T<T>& enc,
                         const LuongT<T>& p) {
  // forward: keys = H·W_c[Hd:]  ->  dW_c[Hd:] += Hᵀ·dkeys,  dH += dkeys·W_c[Hd:]ᵀ
  const char* fn = "luong_keys_backward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2), a = p.w_c.shape(1);
  expect_shape(fn, "dkeys", shape_of(dkeys), {b, s, a});
  expect_same_shape(fn, "denc", denc, "enc", enc);
  expect_same_shape(fn, "dp.w_c", dp.w_c, "w_c", p.w_c);
  T* dw_source = dp.w_c.data() + (dp.w_c.shape(0) - he) * a;
  gemm_raw(Op::T, Op::N, he, a, b * s, T(1), enc.data(), he, dkeys.data(), a, T(1), dw_source, a);
  gemm_raw(Op::N, Op::T, b * s, he, a, T(1), dkeys.data(), a, w_c_source_half(p, he), a, T(1), denc.data(), he);
}

template <class T>
MatT<T> luong_concat_scores_reference(const MatT<T>& h_t, const Tensor3T<T>& enc, const LuongT<T>& p) {
  // The score as the paper writes it, one concatenated vector at a time: v_cᵀ tanh([h_t; h̄_s]·W_c).
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2), hd = h_t.shape(1);
  const std::size_t a = p.w_c.shape(1);
  expect_shape("luong_concat_scores_reference", "w_c", shape_of(p.w_c), {hd + he, a});
  MatT<T> scores = xt::zeros<T>({b, s});
  std::vector<T> x(hd + he);
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t j = 0; j < s; ++j) {
      for (std::size_t c = 0; c < hd; ++c) x[c] = h_t(i, c);       // [h_t;
      for (std::size_t c = 0; c < he; ++c) x[hd + c] = enc(i, j, c);  //  h̄_s]
      T e = 0;
      for (std::size_t k = 0; k < a; ++k) {
        T pre = 0;
        for (std::size_t r = 0; r < hd + he; ++r) pre += x[r] * p.w_c(r, k);
        e += p.v_c(k) * std::tanh(pre);
      }
      scores(i, j) = e;
    }
  return scores;
}

template <class T>
void luong_scores_forward(MatT<T>& scores, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                          const Tensor3T<T>& keys, const LuongT<T>& p, LuongScore score) {
  // h_t: (B, Hd), enc: (B, S, He), keys (concat): (B, S, A) -> scores: (B, S)
  const char* fn = "luong_scores_forward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2), hd = h_t.shape(1);
  expect_shape(fn, "h_t", shape_of(h_t), {b, 0});
  ensure_shape(scores, {b, s});
  if (score == LuongScore::Dot) {
    if (hd != he) shape_mismatch(fn, "h_t", shape_of(h_t), "enc", shape_of(enc), "need the same size for the dot score");
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j) {
        T e = 0;
        for (std::size_t c = 0; c < he; ++c) e += h_t(i, c) * enc(i, j, c);  // h_tᵀ h̄_s
        scores(i, j) = e;
      }
  } else if (score == LuongScore::General) {
    expect_shape(fn, "w_a", shape_of(p.w_a), {hd, he});
    ensure_shape(step.query, {b, he});
    gemm_t(step.query, h_t, p.w_a, Op::N, Op::N, T(1), T(0));  // h_t·W_a  (B, He)
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j) {
        T e = 0;
        for (std::size_t c = 0; c < he; ++c) e += step.query(i, c) * enc(i, j, c);  // (h_t·W_a)·h̄_s
        scores(i, j) = e;
      }
  } else {
    const std::size_t a = p.w_c.shape(1);
    expect_shape(fn, "w_c", shape_of(p.w_c), {hd + he, 0});
    expect_shape(fn, "v_c", shape_of(p.v_c), {a});
    expect_shape(fn, "keys", shape_of(keys), {b, s, a});
    ensure_shape(step.query, {b, a});
    ensure_shape(step.act, {b, s, a});
    // [h_t; h̄_s]·W_c = h_t·W_c[:Hd] + h̄_s·W_c[Hd:]; the second half is `keys`, once per sentence
    gemm_raw(Op::N, Op::N, b, a, hd, T(1), h_t.data(), hd, p.w_c.data(), a, T(0), step.query.data(), a);
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j) {
        T e = 0;
        for (std::size_t k = 0; k < a; ++k) {
          const T h = std::tanh(step.query(i, k) + keys(i, j, k));
          step.act(i, j, k) = h;
          e += p.v_c(k) * h;  // v_cᵀ tanh(…)
        }
        scores(i, j) = e;
      }
  }
}

template <class T>
void luong_scores_forward(MatT<T>& scores, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                          const LuongT<T>& p, LuongScore score) {
  Tensor3T<T> keys;
  luong_keys_forward(keys, enc, p, score);
  luong_scores_forward(scores, step, h_t, enc, keys, p, score);
}

namespace {
template <class T> T gauss_sigma(const LuongConfig& cfg) { return T(cfg.half_width) / T(2); }  // σ = D/2, eq. 10
}  // namespace

template <class T>
void luong_forward(MatT<T>& context, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                   const Tensor3T<T>& keys, const LuongT<T>& p, const LuongConfig& cfg, std::size_t t) {
  // h_t: (B, Hd), enc: (B, S, He), keys (concat): (B, S, A) -> context: (B, He)
  const char* fn = "luong_forward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2), hd = h_t.shape(1);
  luong_scores_forward(step.scores, step, h_t, enc, keys, p, cfg.score);
  ensure_shape(step.align, {b, s});
  ensure_shape(step.alpha, {b, s});
  ensure_shape(step.p, {b});
  ensure_shape(context, {b, he});
  if (cfg.window == LuongWindow::LocalP) {
    const std::size_t pa = p.w_p.shape(1);
    expect_shape(fn, "w_p", shape_of(p.w_p), {hd, 0});
    expect_shape(fn, "v_p", shape_of(p.v_p), {pa});
    ensure_shape(step.p_act, {b, pa});
    gemm_t(step.p_act, h_t, p.w_p, Op::N, Op::N, T(1), T(0));
    for (std::size_t i = 0; i < b; ++i) {
      T u = 0;
      for (std::size_t k = 0; k < pa; ++k) {
        step.p_act(i, k) = std::tanh(step.p_act(i, k));  // tanh(h_t·W_p)
        u += p.v_p(k) * step.p_act(i, k);
      }
      step.p(i) = T(s) * sigmoid_t(u);  // p_t = S·σ(v_pᵀ tanh(W_p h_t)), eq. 9
    }
  } else {
    for (std::size_t i = 0; i < b; ++i) step.p(i) = T(std::min(t, s - 1));  // local-m: p_t = t
  }
  const T neg_inf = -std::numeric_limits<T>::infinity(), sigma = gauss_sigma<T>(cfg);
  std::vector<T> mask(s, T(0));
  for (std::size_t i = 0; i < b; ++i) {
    if (cfg.window != LuongWindow::Global)
      for (std::size_t j = 0; j < s; ++j) mask[j] = std::abs(T(j) - step.p(i)) <= T(cfg.half_width) ? T(0) : neg_inf;
    softmax_row(&step.align(i, 0), &step.scores(i, 0), mask.data(), s);  // align over the window
    for (std::size_t j = 0; j < s; ++j) {
      const T dist = T(j) - step.p(i);
      const T g = cfg.window == LuongWindow::LocalP ? std::exp(-dist * dist / (T(2) * sigma * sigma)) : T(1);
      step.alpha(i, j) = step.align(i, j) * g;  // local-p: align × Gaussian centred at p_t
    }
    for (std::size_t c = 0; c < he; ++c) context(i, c) = 0;
    for (std::size_t j = 0; j < s; ++j)
      for (std::size_t c = 0; c < he; ++c) context(i, c) += step.alpha(i, j) * enc(i, j, c);  // c_t = Σ α h̄_s
  }
}

template <class T>
void luong_forward(MatT<T>& context, LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc,
                   const LuongT<T>& p, const LuongConfig& cfg, std::size_t t) {
  Tensor3T<T> keys;
  luong_keys_forward(keys, enc, p, cfg.score);
  luong_forward(context, step, h_t, enc, keys, p, cfg, t);
}

template <class T>
void luong_backward(MatT<T>& dh_t, Tensor3T<T>& denc, Tensor3T<T>& dkeys, LuongT<T>& dp, const MatT<T>& dcontext,
                    const LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc, const LuongT<T>& p,
                    const LuongConfig& cfg) {
  // dcontext: (B, He) -> dh_t: (B, Hd), denc: (B, S, He), dkeys (concat): (B, S, A), dp
  const char* fn = "luong_backward";
  const std::size_t b = enc.shape(0), s = enc.shape(1), he = enc.shape(2), hd = h_t.shape(1);
  expect_shape(fn, "dcontext", shape_of(dcontext), {b, he});
  expect_shape(fn, "dh_t", shape_of(dh_t), {b, hd});
  expect_same_shape(fn, "denc", denc, "enc", enc);
  const T sigma = gauss_sigma<T>(cfg);
  MatT<T> dscores = xt::zeros<T>({b, s});
  std::vector<T> dalign(s);
  VecT<T> dpos = xt::zeros<T>({b});
  for (std::size_t i = 0; i < b; ++i) {
    for (std::size_t j = 0; j < s; ++j) {
      // forward: c = Σ_j α_j h̄_j
      T dalpha = 0;
      for (std::size_t c = 0; c < he; ++c) {
        dalpha += dcontext(i, c) * enc(i, j, c);
        denc(i, j, c) += step.alpha(i, j) * dcontext(i, c);
      }
      if (cfg.window == LuongWindow::LocalP) {
        // forward: α_j = align_j · g_j,  g_j = exp(−(j − p)²/(2σ²))  ->  ∂g_j/∂p = g_j (j − p)/σ²
        const T dist = T(j) - step.p(i);
        const T g = std::exp(-dist * dist / (T(2) * sigma * sigma));
        dalign[j] = dalpha * g;
        dpos(i) += dalpha * step.align(i, j) * g * dist / (sigma * sigma);
      } else {
        dalign[j] = dalpha;
      }
    }
    // forward: align = softmax(scores + window mask); masked entries have align 0, so no gradient
    softmax_row_backward(&dscores(i, 0), &step.align(i, 0), dalign.data(), s);
  }
  if (cfg.window == LuongWindow::LocalP) {
    // forward: p = S·σ(u),  u = v_pᵀ tanh(h_t·W_p)
    const std::size_t pa = p.w_p.shape(1);
    MatT<T> dpre = xt::zeros<T>({b, pa});
    for (std::size_t i = 0; i < b; ++i) {
      const T sig = step.p(i) / T(s);
      const T du = dpos(i) * T(s) * sig * (T(1) - sig);
      for (std::size_t k = 0; k < pa; ++k) {
        const T h = step.p_act(i, k);
        dp.v_p(k) += du * h;
        dpre(i, k) = du * p.v_p(k) * (T(1) - h * h);
      }
    }
    gemm_t(dp.w_p, h_t, dpre, Op::T, Op::N, T(1), T(1));  // dW_p += h_tᵀ·dpre
    gemm_t(dh_t, dpre, p.w_p, Op::N, Op::T, T(1), T(1));  // dh_t += dpre·W_pᵀ
  }
  if (cfg.score == LuongScore::Dot) {
    // forward: score_j = h_t·h̄_j
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j)
        for (std::size_t c = 0; c < he; ++c) {
          dh_t(i, c) += dscores(i, j) * enc(i, j, c);
          denc(i, j, c) += dscores(i, j) * h_t(i, c);
        }
  } else if (cfg.score == LuongScore::General) {
    // forward: score_j = query·h̄_j,  query = h_t·W_a
    MatT<T> dquery = xt::zeros<T>({b, he});
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j)
        for (std::size_t c = 0; c < he; ++c) {
          dquery(i, c) += dscores(i, j) * enc(i, j, c);
          denc(i, j, c) += dscores(i, j) * step.query(i, c);
        }
    gemm_t(dp.w_a, h_t, dquery, Op::T, Op::N, T(1), T(1));  // dW_a += h_tᵀ·dquery
    gemm_t(dh_t, dquery, p.w_a, Op::N, Op::T, T(1), T(1));  // dh_t += dquery·W_aᵀ
  } else {
    // forward: score_j = v_cᵀ act_j,  act_j = tanh(h_t·W_c[:Hd] + keys_j),  keys_j = h̄_j·W_c[Hd:]
    const std::size_t a = p.w_c.shape(1);
    expect_shape(fn, "dkeys", shape_of(dkeys), {b, s, a});
    MatT<T> dquery = xt::zeros<T>({b, a});
    for (std::size_t i = 0; i < b; ++i)
      for (std::size_t j = 0; j < s; ++j)
        for (std::size_t k = 0; k < a; ++k) {
          const T h = step.act(i, j, k);
          dp.v_c(k) += dscores(i, j) * h;
          const T g = dscores(i, j) * p.v_c(k) * (T(1) - h * h);
          dkeys(i, j, k) += g;
          dquery(i, k) += g;
        }
    gemm_raw(Op::T, Op::N, hd, a, b, T(1), h_t.data(), hd, dquery.data(), a, T(1), dp.w_c.data(), a);  // dW_c[:Hd] += h_tᵀ·dquery
    gemm_raw(Op::N, Op::T, b, hd, a, T(1), dquery.data(), a, p.w_c.data(), a, T(1), dh_t.data(), hd);  // dh_t += dquery·W_c[:Hd]ᵀ
  }
}

template <class T>
void luong_backward(MatT<T>& dh_t, Tensor3T<T>& denc, LuongT<T>& dp, const MatT<T>& dcontext,
                    const LuongStepT<T>& step, const MatT<T>& h_t, const Tensor3T<T>& enc, const LuongT<T>& p,
                    const LuongConfig& cfg) {
  Tensor3T<T> dkeys;
  if (cfg.score == LuongScore::Concat) dkeys = xt::zeros<T>({enc.shape(0), enc.shape(1), p.w_c.shape(1)});
  luong_backward(dh_t, denc, dkeys, dp, dcontext, step, h_t, enc, p, cfg);
  if (cfg.score == LuongScore::Concat) luong_keys_backward(denc, dp, dkeys, enc, p);  // forward: keys = H·W_c[Hd:]
}

#define ATTN_INSTANTIATE_LUONG(T)                                                                              \
  template LuongT<T> zeros_like(const LuongT<T>&);                                                             \
  template void luong_keys_forward(Tensor3T<T>&, const Tensor3T<T>&, const LuongT<T>&, LuongScore);            \
  template void luong_keys_backward(Tensor3T<T>&, LuongT<T>&, const Tensor3T<T>&, const Tensor3T<T>&,          \
                                    const LuongT<T>&);                                                         \
  template MatT<T> luong_concat_scores_reference(const MatT<T>&, const Tensor3T<T>&, const LuongT<T>&);        \
  template void luong_scores_forward(MatT<T>&, LuongStepT<T>&, const MatT<T>&, const Tensor3T<T>&,             \
                                     const Tensor3T<T>&, const LuongT<T>&, LuongScore);                        \
  template void luong_forward(MatT<T>&, LuongStepT<T>&, const MatT<T>&, const Tensor3T<T>&, const Tensor3T<T>&, \
                              const LuongT<T>&, const LuongConfig&, std::size_t);                              \
  template void luong_backward(MatT<T>&, Tensor3T<T>&, Tensor3T<T>&, LuongT<T>&, const MatT<T>&,               \
                               const LuongStepT<T>&, const MatT<T>&, const Tensor3T<T>&, const LuongT<T>&,     \
                               const LuongConfig&);                                                            \
  template void luong_scores_forward(MatT<T>&, LuongStepT<T>&, const MatT<T>&, const Tensor3T<T>&,             \
                                     const LuongT<T>&, LuongScore);                                            \
  template void luong_forward(MatT<T>&, LuongStepT<T>&, const MatT<T>&, const Tensor3T<T>&, const LuongT<T>&,  \
                              const LuongConfig&, std::size_t);                                                \
  template void luong_backward(MatT<T>&, Tensor3T<T>&, LuongT<T>&, const MatT<T>&, const LuongStepT<T>&,       \
                               const MatT<T>&, const Tensor3T<T>&, const LuongT<T>&, const LuongConfig&);
ATTN_INSTANTIATE_LUONG(float)
ATTN_INSTANTIATE_LUONG(double)

}  // namespace attn
