// Chapter 09 exercise checks (solutions.cpp in ctest; the learner's exercises.cpp through
// `scripts/exercises check 09`). Each check compares with the library and names the usual mistake.
// Tolerance 1e-5 (float32 values of order 1).
#include <cmath>

#include "attn/attention/gqa.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/position/rope.hpp"
#include "attn/tensor/rng.hpp"
#include "exercise_check.hpp"
#include "../../chapters/09_modern_decoder/exercises.hpp"  // by path: every chapter has an exercises.hpp

using attn::Mat;
using attn::Vec;
using exercise_check::max_diff;

namespace {
double vec_diff(const Vec& a, const Vec& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a(i) - b(i))));
  return std::isnan(d) ? INFINITY : d;
}
// Reference: the library's RoPE (one head at a time) and grouped-query attention.
Vec rotate_heads(const Vec& x, std::size_t heads, std::size_t pos, const attn::RopeTables& tab) {
  const std::size_t dh = x.size() / heads;
  Mat m = xt::zeros<float>({heads, dh});
  for (std::size_t i = 0; i < x.size(); ++i) m.data()[i] = x(i);
  Vec out = xt::zeros<float>({x.size()});
  for (std::size_t h = 0; h < heads; ++h) {
    Mat row = xt::view(m, xt::range(h, h + 1), xt::all());
    const Mat r = attn::rope_rotate(row, tab, pos);
    for (std::size_t e = 0; e < dh; ++e) out(h * dh + e) = r(0, e);
  }
  return out;
}
Vec attend(const Vec& q, const Mat& kc, const Mat& vc, std::size_t len, std::size_t heads, std::size_t kv_heads) {
  const std::size_t dh = q.size() / heads;
  attn::Tensor3 q3 = xt::zeros<float>({heads, std::size_t(1), dh}), k3 = xt::zeros<float>({kv_heads, len, dh}),
                v3 = xt::zeros<float>({kv_heads, len, dh});
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t e = 0; e < dh; ++e) q3(h, 0, e) = q(h * dh + e);
  for (std::size_t g = 0; g < kv_heads; ++g)
    for (std::size_t j = 0; j < len; ++j)
      for (std::size_t e = 0; e < dh; ++e) {
        k3(g, j, e) = kc(j, g * dh + e);
        v3(g, j, e) = vc(j, g * dh + e);
      }
  const auto r = attn::grouped_query_attention(q3, k3, v3);
  Vec out = xt::zeros<float>({q.size()});
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t e = 0; e < dh; ++e) out(h * dh + e) = r.output(h, 0, e);
  return out;
}
}  // namespace

TEST_SUITE("ch09") {

TEST_CASE("09.1 rmsnorm") {
  attn::Rng rng(91);
  const Mat x = rng.normal_mat(4, 6, 2.0f) + 0.5f;
  attn::Norm p = attn::rmsnorm_init(6);
  for (std::size_t i = 0; i < 6; ++i) p.gamma(i) = 0.5f + 0.25f * float(i);
  LEARNER_CALL(y, ex09::rmsnorm(x, p.gamma, 1e-5f));
  REQUIRE_MESSAGE((y.shape(0) == 4 && y.shape(1) == 6), "rmsnorm must return x's shape (4, 6)");
  Mat want;
  Vec rstd;
  attn::rmsnorm_forward(want, rstd, x, p, 1e-5f);
  if (max_diff(y, want) > 1e-5) {
    Mat no_gamma;
    attn::rmsnorm_forward(no_gamma, rstd, x, attn::rmsnorm_init(6), 1e-5f);
    if (max_diff(y, no_gamma) < 1e-5) FAIL("you forgot γ: multiply each column j by gamma(j) at the end");
    Mat ln, dummy;
    Vec mean;
    attn::Norm lp = attn::layernorm_init(6);
    lp.gamma = p.gamma;
    attn::layernorm_forward(ln, mean, rstd, x, lp, 1e-5f);
    if (max_diff(y, ln) < 1e-4) FAIL("that is LayerNorm: RMSNorm does not subtract the row mean");
    double ratio = double(y(0, 0)) / double(want(0, 0));
    if (std::abs(ratio - std::sqrt(5.0 / 6.0)) < 1e-3) FAIL("divide the sum of squares by d (a mean), not d − 1");
    FAIL("values differ from x / √(mean(x²) + ε) · γ by " << max_diff(y, want));
  }
}

TEST_CASE("09.2 decode_step") {
  attn::Rng rng(92);
  const std::size_t H = 4, G = 2, dh = 8, pos = 5, cap = 9;
  const attn::RopeTables tab = attn::rope_tables(cap, dh);
  // The cache already holds positions 0 … pos − 1, keys rotated at their positions.
  Mat kc = xt::zeros<float>({cap, G * dh}), vc = xt::zeros<float>({cap, G * dh});
  for (std::size_t j = 0; j < pos; ++j) {
    const Vec kj = rotate_heads(rng.normal_vec(G * dh), G, j, tab), vj = rng.normal_vec(G * dh);
    for (std::size_t e = 0; e < G * dh; ++e) {
      kc(j, e) = kj(e);
      vc(j, e) = vj(e);
    }
  }
  const Vec q = rng.normal_vec(H * dh), k = rng.normal_vec(G * dh), v = rng.normal_vec(G * dh);
  Mat kl = kc, vl = vc;
  LEARNER_CALL(out, ex09::decode_step(kl, vl, pos, q, k, v, H, G));
  REQUIRE_MESSAGE(out.size() == H * dh, "decode_step returns the heads side by side: (H·dh,) = (32,)");
  Mat kw = kc, vw = vc;
  const Vec kr = rotate_heads(k, G, pos, tab);
  for (std::size_t e = 0; e < G * dh; ++e) {
    kw(pos, e) = kr(e);
    vw(pos, e) = v(e);
  }
  const Vec want = attend(rotate_heads(q, H, pos, tab), kw, vw, pos + 1, H, G);
  // The cache row first: it decides every later step.
  if (max_diff(vl, vw) > 1e-6) FAIL("row pos of v_cache must hold v (and no other row may change)");
  if (max_diff(kl, kw) > 1e-5) {
    bool unrotated = true;
    for (std::size_t e = 0; e < G * dh; ++e) unrotated = unrotated && std::abs(kl(pos, e) - k(e)) < 1e-6f;
    if (unrotated) FAIL("the key went into the cache unrotated: rotate k by RoPE at pos before writing it");
    FAIL("row pos of k_cache must hold RoPE(k) at position pos; rows before it must not change");
  }
  if (vec_diff(out, want) > 1e-5) {
    if (vec_diff(out, attend(q, kw, vw, pos + 1, H, G)) < 1e-5) FAIL("rotate the query too, at the same position");
    if (vec_diff(out, attend(rotate_heads(q, H, pos, tab), kw, vw, pos, H, G)) < 1e-5)
      FAIL("the new token must see itself: attend over rows 0 … pos, pos + 1 keys");
    if (vec_diff(out, attend(rotate_heads(q, H, 0, tab), kw, vw, pos + 1, H, G)) < 1e-5)
      FAIL("the query sits at position pos, not 0");
    FAIL("the output differs from softmax(q·Kᵀ/√dh)·V with K/V head h / (H/G) by " << vec_diff(out, want));
  }
}

}  // TEST_SUITE
