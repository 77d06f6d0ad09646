// Multi-head attention trace, GQA/MQA and the Transformer cost tables (chapter 04).
// Map: split/merge heads · h = 1 equals chapter 03's single-head attention · trace == the training
// layer's multi_head_forward (MHA, GQA, MQA) · GQA with G = H == MHA · MQA == GQA with one K/V head
// · parameter and KV-cache counts by hand · the original Transformer's 65M parameters (Table 3).
// Tolerance: float32 products of ≤ 16-term sums of O(1) values: 1e-5.
#include <doctest/doctest.h>

#include "attn/data/data_files.hpp"
#include "attn/attention/gqa.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/attention/mha_trace.hpp"
#include "attn/attention/multi_head.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/studies/transformer_cost.hpp"

using namespace attn;

namespace {
MultiHead random_mha(Rng& rng, std::size_t d_model, std::size_t H, std::size_t G, bool bias) {
  MultiHead p = multi_head_init(d_model, H, G, rng, bias);
  if (bias) {  // nonzero biases, so a forgotten bias shows
    p.b_q = rng.normal_vec(p.b_q.size(), 0.1f);
    p.b_k = rng.normal_vec(p.b_k.size(), 0.1f);
    p.b_v = rng.normal_vec(p.b_v.size(), 0.1f);
    p.b_o = rng.normal_vec(p.b_o.size(), 0.1f);
  }
  return p;
}
}  // namespace

TEST_CASE("split_heads / merge_heads: column blocks, inverse of each other, bad widths") {
  Rng rng(1);
  const Mat x = rng.normal_mat(5, 12);
  const Tensor3 h = split_heads(x, 3);
  CHECK(shape_of(h) == Shape{3, 5, 4});
  CHECK(h(2, 1, 3) == x(1, 2 * 4 + 3));
  CHECK(max_abs_diff(merge_heads(h), x) == 0.0);
  CHECK_THROWS_AS(split_heads(x, 5), ShapeError);
  CHECK_THROWS_AS(split_heads(x, 0), ShapeError);
}

TEST_CASE("multi-head trace with h = 1 equals chapter 03's single-head self-attention") {
  Rng rng(2);
  const std::size_t d = 8, T = 5;
  const Mat x = rng.normal_mat(T, d);
  MultiHead p = multi_head_init(d, 1, 1, rng, /*bias=*/false);
  p.w_o = xt::eye<float>(d);  // W_O = I: the output is the single head's output
  const SelfAttentionWeights w{p.w_q, p.w_k, p.w_v};
  for (bool causal : {false, true}) {
    const Mat mask = causal ? causal_mask(T) : Mat{};
    const MhaTrace t = multi_head_trace(x, p, mask);
    const SelfAttentionTrace s = self_attention(x, w, mask);
    CHECK(max_abs_diff(t.output, s.attn.output) < 1e-6);
    CHECK(max_abs_diff(slice_of(t.weights, 0), s.attn.weights) < 1e-6);
  }
}

TEST_CASE("multi-head trace equals the training layer's multi_head_forward (MHA, GQA, MQA, biases, mask)") {
  struct Case { std::size_t d, H, G, T; bool bias, causal; };
  for (const Case c : {Case{16, 4, 4, 5, true, false}, Case{16, 4, 2, 7, true, true}, Case{12, 6, 1, 3, false, true},
                       Case{8, 1, 1, 1, true, false}}) {
    Rng rng(40 + c.H * 3 + c.G);
    const MultiHead p = random_mha(rng, c.d, c.H, c.G, c.bias);
    const Mat x = rng.normal_mat(c.T, c.d);
    const Mat mask = c.causal ? causal_mask(c.T) : Mat{};
    const MhaTrace t = multi_head_trace(x, p, mask);
    Tensor3 x3 = xt::zeros<float>({std::size_t(1), c.T, c.d});
    std::copy(x.begin(), x.end(), x3.begin());
    Tensor3 out;
    MultiHeadCacheT<float> cache;
    multi_head_forward(out, cache, x3, x3, p, mask);
    CHECK_MESSAGE(max_abs_diff(t.output, slice_of(out, 0)) < 1e-5, "H " << c.H << " G " << c.G);
    CHECK(max_abs_diff(t.concat, slice_of(cache.concat, 0)) < 1e-5);
    CHECK(shape_of(t.q_heads) == Shape{c.H, c.T, c.d / c.H});
    CHECK(shape_of(t.k_heads) == Shape{c.G, c.T, c.d / c.H});
    CHECK(shape_of(t.weights) == Shape{c.H, c.T, c.T});
  }
}

TEST_CASE("GQA with groups = heads equals MHA; MQA equals GQA with one K/V head") {
  Rng rng(9);
  const std::size_t H = 4, T = 6, S = 9, dh = 5;
  const Tensor3 q = rng.normal_tensor3(H, T, dh), k = rng.normal_tensor3(H, S, dh), v = rng.normal_tensor3(H, S, 3);
  const AttentionResult3 mha = scaled_dot_product_attention(q, k, v);
  CHECK(max_abs_diff(grouped_query_attention(q, k, v).output, mha.output) == 0.0);
  // MQA: one K/V head shared by all four query heads == each query head attending to that head.
  const Tensor3 k1 = rng.normal_tensor3(1, S, dh), v1 = rng.normal_tensor3(1, S, 3);
  const AttentionResult3 mqa = grouped_query_attention(q, k1, v1, causal_mask(T, S));
  for (std::size_t h = 0; h < H; ++h) {
    const AttentionResult one = scaled_dot_product_attention(slice_of(q, h), slice_of(k1, 0), slice_of(v1, 0), causal_mask(T, S));
    CHECK(max_abs_diff(slice_of(mqa.output, h), one.output) == 0.0);
  }
  // GQA G = 2: heads 0, 1 read K/V head 0; heads 2, 3 read K/V head 1.
  const Tensor3 k2 = rng.normal_tensor3(2, S, dh), v2 = rng.normal_tensor3(2, S, 3);
  const Tensor3 rep = repeat_kv(k2, 4);
  CHECK(max_abs_diff(slice_of(rep, 1), slice_of(k2, 0)) == 0.0);
  CHECK(max_abs_diff(slice_of(rep, 2), slice_of(k2, 1)) == 0.0);
  const AttentionResult3 gqa = grouped_query_attention(q, k2, v2);
  CHECK(max_abs_diff(slice_of(gqa.output, 3), scaled_dot_product_attention(slice_of(q, 3), slice_of(k2, 1), slice_of(v2, 1)).output) == 0.0);
  CHECK_THROWS_AS(grouped_query_attention(q, rng.normal_tensor3(3, S, dh), rng.normal_tensor3(3, S, 3)), ShapeError);
  CHECK_THROWS_AS(grouped_query_attention(q, k2, rng.normal_tensor3(2, S + 1, 3)), ShapeError);
  CHECK_THROWS_AS(repeat_kv(k2, 3), ShapeError);
}

TEST_CASE("parameter and KV-cache counts: MHA / GQA / MQA at LLaMA-2-70B-like sizes, by hand") {
  // d_model 8192, 64 query heads × 128, 80 layers; GQA with 8 K/V heads (Touvron et al. 2023, LLaMA 2).
  const AttentionParamCount mha = attention_param_count(8192, 64, 64, 128);
  CHECK(mha.q == 8192u * 8192u);
  CHECK(mha.total() == 4u * 8192u * 8192u);
  const AttentionParamCount gqa = attention_param_count(8192, 64, 8, 128);
  CHECK(gqa.k == 8192u * 1024u);
  CHECK(gqa.total() == 2u * 8192u * 8192u + 2u * 8192u * 1024u);
  CHECK(attention_param_count(16, 4, 4, 4, true).total() == 4u * 16u * 16u + 4u * 16u);
  CHECK(kv_cache_bytes_per_token(80, 64, 128) == 2u * 80u * 64u * 128u * 2u);  // 2.5 MiB per token
  CHECK(kv_cache_bytes_per_token(80, 8, 128) == 327680u);                      // 320 KiB: 8× smaller
  CHECK(kv_cache_bytes_per_token(80, 1, 128, 4) == 81920u);
}

TEST_CASE("original Transformer: 65M parameters (Table 3) and the attention share as T grows") {
  const TransformerConfig cfg;
  const TransformerParams p = transformer_params(cfg);
  CHECK(p.encoder == doctest::Approx(6.0 * 3152384.0));   // 4d² + 4d + 2d·d_ff + d_ff + d + 4d
  CHECK(p.decoder == doctest::Approx(6.0 * 4204032.0));
  CHECK(p.total() / 1e6 == doctest::Approx(63.1).epsilon(0.01));  // the paper rounds to 65M
  const LayerCost e = encoder_layer_cost(cfg, 512);
  CHECK(e.projection_flops == doctest::Approx(8.0 * 512 * 512 * 512));
  CHECK(e.score_flops == doctest::Approx(4.0 * 512 * 512 * 512));
  CHECK(e.ffn_flops == doctest::Approx(4.0 * 512 * 512 * 2048));
  // Scores grow like T², the feed-forward like T: they break even at T = d_ff = 2048.
  const LayerCost at = encoder_layer_cost(cfg, 2048);
  CHECK(at.score_flops == doctest::Approx(at.ffn_flops));
  CHECK(encoder_layer_cost(cfg, 64).attention_share() < encoder_layer_cost(cfg, 4096).attention_share());
  const LayerCost dec = decoder_layer_cost(cfg, 10, 10);
  CHECK(dec.attention_params == doctest::Approx(2 * (4.0 * 512 * 512 + 4 * 512)));
}

TEST_CASE("side_by_side: blocks under titles, padded by display width (CJK counts double)") {
  const std::string s = side_by_side({"ab\ncd\n", "猫\nx\ny\n"}, {"h1", "head 2"}, 2, "");
  CHECK(s == "h1  head 2\nab  猫\ncd  x\n    y\n");
}

TEST_CASE("side_by_side with max_width: blocks that do not fit start a new row") {
  const std::string s = side_by_side({"aaaa", "bbbb", "cccc"}, {"1", "2", "3"}, 2, "", 10);
  CHECK(s == "1     2\naaaa  bbbb\n\n3\ncccc\n");
  CHECK(side_by_side({"aaaa", "bbbb"}, {}, 2, "", 0) == "aaaa  bbbb\n");  // 0: no limit
}

TEST_CASE("find_data_file: finds shipped data beside the build folder or through $ATTN_DATA_DIR") {
  const auto f = find_data_file("golden/mha/X.npy");
  REQUIRE(f.has_value());
  CHECK(f->find("golden/mha/X.npy") != std::string::npos);
  CHECK_FALSE(find_data_file("no/such/file.npy").has_value());
  CHECK_FALSE(data_dir().empty());
}

TEST_CASE("multi-head: to_double keeps the head counts and every weight, zeros_like every shape") {
  Rng rng(3);
  const MultiHead p = multi_head_init(8, 4, 2, rng, /*bias=*/true);
  const MultiHeadD d = to_double(p);
  CHECK(d.n_heads == 4);
  CHECK(d.n_kv_heads == 2);
  CHECK(d.w_k.shape() == p.w_k.shape());
  CHECK(d.w_q(1, 2) == double(p.w_q(1, 2)));
  CHECK(d.w_o(7, 0) == double(p.w_o(7, 0)));
  CHECK(d.b_v.size() == p.b_v.size());
  const MultiHead z = zeros_like(p);
  CHECK(z.n_heads == 4);
  CHECK(z.w_v.shape() == p.w_v.shape());
  CHECK(z.b_o.size() == p.b_o.size());
  CHECK(xt::amax(xt::abs(z.w_q))() == 0.0f);
  CHECK(xt::amax(xt::abs(z.b_q))() == 0.0f);
}
