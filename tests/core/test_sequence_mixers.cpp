// Chapter 12's trainable layers (attn/nn/sequence_mixers.hpp) and the MQAR models
// (attn/models/recall_model.hpp, attn/data/mqar.hpp). Map: short conv, selective SSM, causal
// linear attention — finite-difference checks in double (relative error < 1e-6, see
// test_layers_grad.cpp for why) on odd sizes (B = 2, T = 5, C = 6, N = 3) · each layer's float
// forward against the core's form of the same map (ssd_scan, linear_attention_causal) · the whole
// model's gradient for every mixer and a hybrid · a planted backward bug the check must catch ·
// MQAR batches · state bytes.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attn/attention/linear_attention.hpp"
#include "attn/attention/ssd.hpp"
#include "attn/data/mqar.hpp"
#include "attn/models/recall_model.hpp"
#include "attn/nn/gradcheck.hpp"
#include "attn/nn/sequence_mixers.hpp"

using namespace attn;

namespace {
constexpr double kMixTol = 1e-6;
Tensor3D mix_rand3(Rng& rng, std::size_t a, std::size_t b, std::size_t c, double scale = 1.0) {
  Tensor3D t({a, b, c});
  for (auto& x : t) x = rng.normal() * scale;
  return t;
}
template <class C> double mix_weighted_sum(const C& out, const C& g) {
  double s = 0;
  for (std::size_t i = 0; i < out.size(); ++i) s += out.data()[i] * g.data()[i];
  return s;
}
template <class C> C mix_zeros_of(const C& c) { return xt::zeros<double>(c.shape()); }
#define MIX_GRADCHECK(loss, x, gx)                                                               \
  do {                                                                                       \
    auto r_ = check_gradient(loss, x, gx);                                                   \
    INFO("d" #x ": rel " << r_.rel_error << ", worst at " << r_.worst_index << " of " << r_.count); \
    CHECK(r_.count > 0);                                                                     \
    CHECK(r_.rel_error < kMixTol);                                                              \
  } while (0)
}  // namespace

TEST_CASE("short conv mixer: s_t = w_0 u_t + w_1 u_{t−1}; gradients of u and w") {
  Rng rng(1);
  ShortConvT<double> p{xt::cast<double>(short_conv_init(6, 3, rng).w)};
  Tensor3D u = mix_rand3(rng, 2, 5, 6), g = mix_rand3(rng, 2, 5, 6);
  auto loss = [&] { Tensor3D s; short_conv_forward(s, u, p); return mix_weighted_sum(s, g); };
  Tensor3D s;
  short_conv_forward(s, u, p);
  CHECK(s(1, 0, 2) == doctest::Approx(p.w(0, 2) * u(1, 0, 2)));  // nothing before the start
  CHECK(s(1, 3, 4) == doctest::Approx(p.w(0, 4) * u(1, 3, 4) + p.w(1, 4) * u(1, 2, 4) + p.w(2, 4) * u(1, 1, 4)));
  Tensor3D du = mix_zeros_of(u);
  ShortConvT<double> dp = zeros_like(p);
  short_conv_backward(du, dp, g, u, p);
  MIX_GRADCHECK(loss, u, du);
  MIX_GRADCHECK(loss, p.w, dp.w);
}

TEST_CASE("selective SSM mixer: gradients of u and every parameter") {
  Rng rng(2);
  const SelectiveSsm pf = selective_ssm_init(6, 2, 3, rng);
  SelectiveSsmD p;
  p.heads = 2;
  p.state_n = 3;
  p.in_x.w = xt::cast<double>(pf.in_x.w);
  p.in_b.w = xt::cast<double>(pf.in_b.w);
  p.in_c.w = xt::cast<double>(pf.in_c.w);
  p.in_dt.w = xt::cast<double>(pf.in_dt.w);
  p.in_dt.b = xt::cast<double>(pf.in_dt.b) + 1.0;  // Δ of order 1: the decay matters
  p.a_log = xt::cast<double>(pf.a_log);
  p.d_skip = {0.7, -0.4};
  p.out.w = xt::cast<double>(pf.out.w);
  Tensor3D u = mix_rand3(rng, 2, 5, 6), g = mix_rand3(rng, 2, 5, 6);
  auto loss = [&] { Tensor3D o; SelectiveSsmCacheT<double> c; selective_ssm_forward(o, c, u, p); return mix_weighted_sum(o, g); };
  Tensor3D out;
  SelectiveSsmCacheT<double> cache;
  selective_ssm_forward(out, cache, u, p);
  Tensor3D du = mix_zeros_of(u);
  SelectiveSsmD dp = zeros_like(p);
  selective_ssm_backward(du, dp, g, cache, u, p);
  MIX_GRADCHECK(loss, u, du);
  MIX_GRADCHECK(loss, p.in_x.w, dp.in_x.w);
  MIX_GRADCHECK(loss, p.in_b.w, dp.in_b.w);
  MIX_GRADCHECK(loss, p.in_c.w, dp.in_c.w);
  MIX_GRADCHECK(loss, p.in_dt.w, dp.in_dt.w);
  MIX_GRADCHECK(loss, p.in_dt.b, dp.in_dt.b);
  MIX_GRADCHECK(loss, p.a_log, dp.a_log);
  MIX_GRADCHECK(loss, p.d_skip, dp.d_skip);
  MIX_GRADCHECK(loss, p.out.w, dp.out.w);
}

TEST_CASE("selective SSM mixer: each head is ssd_scan on (Δ·x, B, C, log a) plus D·x") {
  Rng rng(3);
  SelectiveSsm p = selective_ssm_init(8, 2, 3, rng);
  p.d_skip = {0.5f, -1.0f};
  const Tensor3 u = rng.normal_tensor3(1, 7, 8);
  Tensor3 out;
  SelectiveSsmCacheT<float> c;
  selective_ssm_forward(out, c, u, p);
  for (std::size_t h = 0; h < 2; ++h) {
    Mat x = xt::zeros<float>({std::size_t(7), std::size_t(4)}), b = xt::view(c.b, 0, xt::all(), xt::all()),
        cc = xt::view(c.c, 0, xt::all(), xt::all());
    Vec la = xt::view(c.log_a, 0, xt::all(), h);
    for (std::size_t t = 0; t < 7; ++t)
      for (std::size_t j = 0; j < 4; ++j) x(t, j) = c.x(0, t, h * 4 + j) * c.dt(0, t, h);
    const Mat y = ssd_scan(x, b, cc, la);
    for (std::size_t t = 0; t < 7; ++t)
      for (std::size_t j = 0; j < 4; ++j)
        CHECK(c.y(0, t, h * 4 + j) == doctest::Approx(y(t, j) + p.d_skip(h) * c.x(0, t, h * 4 + j)).epsilon(1e-4));
  }
  for (std::size_t i = 0; i < c.log_a.size(); ++i) CHECK(c.log_a.data()[i] < 0.0f);  // every decay in (0, 1)
}

// The referee must be able to fail: the same scan (one head, N = P = 1) with its backward written
// right and with the bug such a backward invites — the gradient carried from h_t to h_{t−1}
// without the decay a_t. The finite-difference check passes the first and catches the second.
namespace {
struct TinyScan {
  std::vector<double> a, b, c, x, g;  // decay, input, output, value, and dL/dy_t (L = Σ g_t y_t)
  double loss() const {
    double h = 0, l = 0;
    for (std::size_t t = 0; t < x.size(); ++t) {
      h = a[t] * h + b[t] * x[t];  // h_t = a_t·h_{t−1} + B_t x_t
      l += g[t] * c[t] * h;        // y_t = C_t h_t
    }
    return l;
  }
  // dL/dx; carry_decay = false plants the bug.
  std::vector<double> grad_x(bool carry_decay) const {
    std::vector<double> dx(x.size());
    double carried = 0;  // dL/dh_t arriving from h_{t+1}
    for (std::size_t t = x.size(); t-- > 0;) {
      const double dh = carried + g[t] * c[t];
      dx[t] = dh * b[t];
      carried = carry_decay ? a[t] * dh : dh;
    }
    return dx;
  }
};
}  // namespace

TEST_CASE("gradient check catches a planted bug: a scan backward that drops the decay") {
  Rng rng(9);
  TinyScan s;
  for (std::size_t t = 0; t < 6; ++t) {
    s.a.push_back(0.3 + 0.5 * rng.uniform(0.0f, 1.0f));
    s.b.push_back(rng.normal());
    s.c.push_back(rng.normal());
    s.x.push_back(rng.normal());
    s.g.push_back(rng.normal());
  }
  auto loss = [&] { return s.loss(); };
  const std::vector<double> right = s.grad_x(true), planted = s.grad_x(false);
  const auto ok = check_gradient(loss, s.x.data(), right.data(), s.x.size());
  const auto bad = check_gradient(loss, s.x.data(), planted.data(), s.x.size());
  INFO("right: rel " << ok.rel_error << ", planted: rel " << bad.rel_error);
  CHECK(ok.rel_error < kMixTol);
  CHECK(bad.rel_error > 1e-2);  // not a rounding difference: the check names the bug
  CHECK(bad.worst_index < s.x.size() - 1);  // the last token has nothing to carry: it is right
}

TEST_CASE("causal linear attention mixer: gradients; each head is chapter 06's linear_attention_causal") {
  Rng rng(4);
  const LinearAttentionLayer pf = linear_attention_layer_init(6, 2, rng);
  LinearAttentionLayerD p{2, {xt::cast<double>(pf.q.w), {}}, {xt::cast<double>(pf.k.w), {}},
                          {xt::cast<double>(pf.v.w), {}}, {xt::cast<double>(pf.out.w), {}}};
  Tensor3D u = mix_rand3(rng, 2, 5, 6), g = mix_rand3(rng, 2, 5, 6);
  auto loss = [&] { Tensor3D o; LinearAttentionCacheT<double> c; linear_attention_layer_forward(o, c, u, p); return mix_weighted_sum(o, g); };
  Tensor3D out;
  LinearAttentionCacheT<double> cache;
  linear_attention_layer_forward(out, cache, u, p);
  Tensor3D du = mix_zeros_of(u);
  LinearAttentionLayerD dp = zeros_like(p);
  linear_attention_layer_backward(du, dp, g, cache, u, p);
  MIX_GRADCHECK(loss, u, du);
  MIX_GRADCHECK(loss, p.q.w, dp.q.w);
  MIX_GRADCHECK(loss, p.k.w, dp.k.w);
  MIX_GRADCHECK(loss, p.v.w, dp.v.w);
  MIX_GRADCHECK(loss, p.out.w, dp.out.w);
  // float forward, head by head, against the recurrent form of chapter 06
  const Tensor3 uf = rng.normal_tensor3(1, 6, 6);
  Tensor3 of;
  LinearAttentionCacheT<float> cf;
  linear_attention_layer_forward(of, cf, uf, pf);
  for (std::size_t h = 0; h < 2; ++h) {
    auto cols = [&](const Tensor3& t) {
      Mat m = Mat::from_shape({std::size_t(6), std::size_t(3)});
      for (std::size_t r = 0; r < 6; ++r)
        for (std::size_t e = 0; e < 3; ++e) m(r, e) = t(0, r, h * 3 + e);
      return m;
    };
    const Mat want = linear_attention_causal(cols(cf.q), cols(cf.k), cols(cf.v));
    const Mat got = cols(cf.concat);
    CHECK(xt::allclose(got, want, 1e-4, 1e-5));
  }
}

TEST_CASE("recall model: whole-model gradient for every mixer and a hybrid") {
  for (auto layers : {std::vector<MixerKind>{MixerKind::attention, MixerKind::attention},
                      std::vector<MixerKind>{MixerKind::sliding_window, MixerKind::sliding_window},
                      std::vector<MixerKind>{MixerKind::linear_attention, MixerKind::linear_attention},
                      std::vector<MixerKind>{MixerKind::ssm, MixerKind::ssm},
                      std::vector<MixerKind>{MixerKind::ssm, MixerKind::attention}}) {
    CAPTURE(mixer_id(layers[0]));
    CAPTURE(mixer_id(layers[1]));
    RecallModelConfig cfg;
    cfg.vocab = 12;
    cfg.d_model = 6;
    cfg.d_k = 3;
    cfg.state_n = 3;
    cfg.window = 3;
    cfg.layers = layers;
    Rng rng(6);
    RecallModelD m = to_double(recall_model_init(cfg, rng));
    const MqarBatch batch = mqar_batch(2, 3, cfg.vocab, rng);
    auto loss = [&] { return recall_model_step(m, batch).loss; };
    RecallModelD g = zeros_like(m);
    recall_model_step(m, batch, &g);
    std::vector<double*> values, grads;
    std::vector<std::size_t> sizes;
    std::vector<std::string> names;
    visit_recall_params(m, [&](const std::string& n, auto& t) { values.push_back(t.data()); sizes.push_back(t.size()); names.push_back(n); });
    visit_recall_params(g, [&](const std::string&, auto& t) { grads.push_back(t.data()); });
    REQUIRE(values.size() == grads.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      CAPTURE(names[i]);
      const auto r = check_gradient(loss, values[i], static_cast<const double*>(grads[i]), sizes[i]);
      CHECK(r.rel_error < kMixTol);
    }
  }
}

TEST_CASE("mqar batch: pairs, then every key once more; targets only at the queries") {
  Rng rng(7);
  const MqarBatch b = mqar_batch(3, 5, 40, rng);
  REQUIRE(b.seq_len == 15);
  for (std::size_t s = 0; s < 3; ++s) {
    const int* tok = &b.tokens[s * 15];
    const int* tgt = &b.targets[s * 15];
    for (std::size_t i = 0; i < 10; ++i) CHECK(tgt[i] == -1);
    for (std::size_t i = 0; i < 5; ++i) {
      CHECK(tok[2 * i] < 20);        // keys from the lower half
      CHECK(tok[2 * i + 1] >= 20);   // values from the upper half
      for (std::size_t j = 0; j < i; ++j) CHECK(tok[2 * i] != tok[2 * j]);  // distinct keys
    }
    for (std::size_t q = 10; q < 15; ++q) {  // each query's target is the value after its key
      int found = -2;
      for (std::size_t i = 0; i < 5; ++i)
        if (tok[2 * i] == tok[q]) found = tok[2 * i + 1];
      CHECK(tgt[q] == found);
    }
  }
  CHECK_THROWS_AS(mqar_batch(1, 21, 40, rng), std::invalid_argument);
  CHECK_THROWS_AS(mqar_batch(1, 0, 40, rng), std::invalid_argument);
}

TEST_CASE("recall state bytes: the KV cache grows with the context, the recurrent state does not") {
  RecallModelConfig cfg;
  cfg.d_model = 32;
  cfg.d_k = 16;
  cfg.state_n = 16;
  cfg.window = 8;
  cfg.conv_taps = 2;
  cfg.layers = {MixerKind::attention, MixerKind::attention};
  CHECK(recall_state_bytes(cfg, 10) == 4 * (2 * 32 + 2 * 2 * 10 * 32));
  cfg.layers = {MixerKind::sliding_window, MixerKind::sliding_window};
  CHECK(recall_state_bytes(cfg, 100) == recall_state_bytes(cfg, 8));
  cfg.layers = {MixerKind::ssm, MixerKind::ssm};
  CHECK(recall_state_bytes(cfg, 1000) == 4 * (2 * 32 + 2 * 2 * 16 * 16));
  cfg.layers = {MixerKind::linear_attention, MixerKind::linear_attention};
  CHECK(recall_state_bytes(cfg, 1000) == 4 * (2 * 32 + 2 * 2 * (16 * 16 + 16)));
}

TEST_CASE("selective SSM step: token by token with a fixed state equals the whole-sequence forward") {
  Rng rng(8);
  const SelectiveSsm p = selective_ssm_init(8, 2, 3, rng);
  const Tensor3 u = rng.normal_tensor3(1, 6, 8);
  Tensor3 out;
  SelectiveSsmCacheT<float> c;
  selective_ssm_forward(out, c, u, p);
  Tensor3 state = xt::zeros<float>({std::size_t(2), std::size_t(3), std::size_t(4)});
  for (std::size_t t = 0; t < 6; ++t) {
    const Vec ut = xt::view(u, 0, t, xt::all());
    const Vec o = selective_ssm_step(p, state, ut);
    for (std::size_t j = 0; j < 8; ++j) CHECK(o(j) == doctest::Approx(out(0, t, j)).epsilon(1e-4));
  }
}
