// Chapter 04's checks (see attn/studies/multi_head_study.hpp).
#include "attn/studies/multi_head_study.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "attn/attention/attention.hpp"
#include "attn/attention/gqa.hpp"
#include "attn/attention/mha_trace.hpp"
#include "attn/data/npy.hpp"
#include "attn/tensor/tensor_ops.hpp"

namespace attn {

HeadDiversity head_diversity(const Tensor3& weights) {
  HeadDiversity h;
  h.heads = weights.shape(0);
  for (std::size_t a = 0; a < h.heads; ++a)
    for (std::size_t b = a + 1; b < h.heads; ++b)
      h.most_different = std::max(h.most_different, max_abs_diff(slice_of(weights, a), slice_of(weights, b)));
  h.differ = judge_at_least(h.heads > 1 ? h.most_different : NAN, 0.05);
  return h;
}

NearUniformRows near_uniform_rows(const Tensor3& weights, double tol) {
  NearUniformRows r;
  const std::size_t h = weights.shape(0), n = weights.shape(1), m = weights.shape(2);
  r.rows = h * n, r.tol = tol, r.uniform = m == 0 ? NAN : 1.0 / double(m);
  for (std::size_t a = 0; a < h; ++a)
    for (std::size_t i = 0; i < n; ++i) {
      bool near = m > 0;
      for (std::size_t j = 0; j < m; ++j) {
        near = near && std::abs(double(weights(a, i, j)) - r.uniform) <= tol;
        r.largest = std::max(r.largest, double(weights(a, i, j)));
      }
      r.near += near ? 1 : 0;
      if (near) r.which.emplace_back(a, i);
    }
  return r;
}

TwoTargets two_targets(double gain) {
  TwoTargets t;
  t.words = {"red", "ball", "the"};
  t.gain = gain;
  const float g = float(gain);
  const Mat v = xt::eye<float>(3);  // each word's value is its own one-hot row
  const Mat q1 = {{g, g}}, k1 = {{g, 0.0f}, {0.0f, g}, {0.0f, 0.0f}};
  const Mat w1 = scaled_dot_product_attention(q1, k1, v).weights;
  const Mat q = {{g}}, k_red = {{g}, {0.0f}, {0.0f}}, k_ball = {{0.0f}, {g}, {0.0f}};
  const Mat h0 = scaled_dot_product_attention(q, k_red, v).weights;
  const Mat h1 = scaled_dot_product_attention(q, k_ball, v).weights;
  t.two.assign(2, {});
  for (std::size_t j = 0; j < 3; ++j) {
    t.one_head.push_back(double(w1(0, j)));
    t.two[0].push_back(double(h0(0, j)));
    t.two[1].push_back(double(h1(0, j)));
  }
  t.one_head_best = std::max(t.one_head[0], t.one_head[1]);
  t.two_heads_own = std::min(t.two[0][0], t.two[1][1]);
  t.keeps_both = judge_at_least(t.two_heads_own, kTwoTargetsBound);
  return t;
}

HeadCost head_cost(std::size_t n, std::size_t d_model, std::size_t heads) {
  HeadCost c;
  const double N = double(n), d = double(d_model);
  c.heads = heads;
  c.params = 4.0 * d * d;
  c.projection_flops = 8.0 * N * d * d;
  c.score_flops = 4.0 * N * N * d;  // h heads × (2·n²·d_k for QKᵀ + 2·n²·d_k for AV), h·d_k = d
  c.score_entries = double(heads) * N * N;
  return c;
}

Agreement judge_agreement(double max_diff, double bound) { return {max_diff, judge_at_most(max_diff, bound)}; }

Agreement trace_vs_layer(const Mat& x, const MultiHead& p) {
  const std::size_t n = x.shape(0), d = x.shape(1);
  Tensor3 x3 = xt::zeros<float>({std::size_t(1), n, d});
  std::copy(x.begin(), x.end(), x3.begin());
  Tensor3 out;
  MultiHeadCacheT<float> cache;
  multi_head_forward(out, cache, x3, x3, p);
  return judge_agreement(max_abs_diff(multi_head_trace(x, p).output, slice_of(out, 0)), 1e-5);
}

Agreement gqa_vs_repeated_mha(const Mat& x, const MultiHead& gqa) {
  MultiHead as_mha = gqa;  // GQA with its K/V heads copied out per query head is plain MHA
  as_mha.n_kv_heads = gqa.n_heads;
  as_mha.w_k = merge_heads(repeat_kv(split_heads(gqa.w_k, gqa.n_kv_heads), gqa.n_heads));
  as_mha.w_v = merge_heads(repeat_kv(split_heads(gqa.w_v, gqa.n_kv_heads), gqa.n_heads));
  return judge_agreement(max_abs_diff(multi_head_trace(x, gqa).output, multi_head_trace(x, as_mha).output),
                         kGqaRepeatTol);
}

MultiHead mean_pool_kv(const MultiHead& mha, std::size_t g) {
  const std::size_t h = mha.n_heads;
  if (g == 0 || h % g != 0) throw ShapeError(fmt::format("mean_pool_kv: {} K/V heads do not divide {} heads", g, h));
  if (mha.n_kv_heads != h) throw ShapeError(fmt::format("mean_pool_kv: needs MHA, got {} K/V heads", mha.n_kv_heads));
  const std::size_t group = h / g, d_k = mha.d_head();
  // w: (rows, h·d_k) -> (rows, g·d_k): column j·d_k + c is the mean over group j's heads i of
  // column i·d_k + c.
  auto pool = [&](const Mat& w) {
    Mat out = xt::zeros<float>({w.shape(0), g * d_k});
    for (std::size_t r = 0; r < w.shape(0); ++r)
      for (std::size_t i = 0; i < h; ++i)
        for (std::size_t c = 0; c < d_k; ++c) out(r, (i / group) * d_k + c) += w(r, i * d_k + c) / float(group);
    return out;
  };
  auto pool_bias = [&](const Vec& b) {
    Mat row = xt::zeros<float>({std::size_t(1), b.size()});
    std::copy(b.begin(), b.end(), row.begin());
    const Mat pooled = pool(row);
    return Vec(xt::view(pooled, 0, xt::all()));
  };
  MultiHead gqa = mha;
  gqa.n_kv_heads = g;
  if (g == h) return gqa;
  gqa.w_k = pool(mha.w_k);
  gqa.w_v = pool(mha.w_v);
  if (mha.b_k.size() > 0) gqa.b_k = pool_bias(mha.b_k);
  if (mha.b_v.size() > 0) gqa.b_v = pool_bias(mha.b_v);
  return gqa;
}

GqaPoolingCost gqa_pooling_cost(const Mat& x, const MultiHead& mha, std::size_t g) {
  const Mat full = multi_head_trace(x, mha).output;
  GqaPoolingCost c;
  c.heads = mha.n_heads;
  c.kv_heads = g;
  const Mat pooled = multi_head_trace(x, mean_pool_kv(mha, g)).output;
  c.max_diff = max_abs_diff(pooled, full);
  double diff2 = 0.0, full2 = 0.0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    const double d = double(pooled.flat(i)) - double(full.flat(i));
    diff2 += d * d, full2 += double(full.flat(i)) * double(full.flat(i));
  }
  c.frobenius_diff = std::sqrt(diff2);
  c.frobenius_output = std::sqrt(full2);
  return c;
}

Verdict pooling_beats_zeros(const GqaPoolingCost& c) {
  Verdict v = judge_greater(1.0, c.relative(), 0.0);
  v.measured = c.relative(), v.bound = 1.0;
  return v;
}

Verdict pooling_keeps_most(const GqaPoolingCost& c) { return judge_at_most(c.relative(), 0.5); }

Agreement pytorch_parity(const std::string& dir) {
  auto golden = [&](const char* n, std::vector<std::size_t> shape) {
    const std::string path = dir + "/" + n + ".npy";
    NpyArray a = read_npy(path);
    expect_npy_shape(a, shape, path);
    return a;
  };
  auto gm = [&](const char* n, std::size_t rows) { return npy_to_mat(golden(n, {rows, 16}), n); };
  auto gv = [&](const char* n) { return npy_to_vec(golden(n, {16}), n); };
  const Mat gx = gm("X", kAnyDim);
  if (gx.shape(0) == 0) throw NpyError(dir + "/X.npy: holds no tokens (shape (0, 16))");
  MultiHead g;
  g.n_heads = g.n_kv_heads = 4;
  g.w_q = gm("W_Q", 16), g.w_k = gm("W_K", 16), g.w_v = gm("W_V", 16), g.w_o = gm("W_O", 16);
  g.b_q = gv("b_Q"), g.b_k = gv("b_K"), g.b_v = gv("b_V"), g.b_o = gv("b_O");
  return judge_agreement(max_abs_diff(multi_head_trace(gx, g).output, gm("output", gx.shape(0))), 1e-5);
}

AttentionCrossings attention_crossings(const TransformerConfig& cfg, const std::vector<std::size_t>& lengths) {
  AttentionCrossings c;
  for (std::size_t len : lengths) {
    const LayerCost l = encoder_layer_cost(cfg, len);
    if (c.half_the_work == 0 && l.attention_share() >= 0.5) c.half_the_work = len;
    if (c.scores_match_ffn == 0 && l.score_flops >= l.ffn_flops) c.scores_match_ffn = len;
  }
  return c;
}

}  // namespace attn
