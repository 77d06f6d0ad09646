// Chapter 06's variants against exact attention (attn/attention/sparse_attention.hpp, linear_attention.hpp,
// kv_cache.hpp). Map: 1. window patterns (shape, window >= n == full causal); 2. efficient
// computations == masked exact attention (window, dilated, Longformer, BigBird); 3. BigBird with
// every block global == full attention; 4. linear attention parallel == quadratic, recurrent ==
// causal quadratic; 5. KV-cached decoding == recomputation token for token; cache bytes.
// Tolerance 1e-5 absolute: outputs are convex combinations of N(0,1) values computed in float32
// over <= 200 terms (errors ~1e-6); the double reference has none of its own.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/attention/attention.hpp"
#include "attn/attention/gqa.hpp"
#include "attn/attention/kv_cache.hpp"
#include "attn/attention/linear_attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/attention/sparse_attention.hpp"

using namespace attn;

namespace {
double max_abs(const Mat& a, const MatD& b) {
  REQUIRE(a.size() == b.size());
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(double(a.data()[i]) - b.data()[i]));
  return e;
}
double max_abs(const Mat& a, const Mat& b) { return max_abs(a, MatD(xt::cast<double>(b))); }
}  // namespace

TEST_CASE("sliding-window patterns: the rows see exactly their window") {
  SparsePattern p = sliding_window_pattern(6, 3, true);
  Mat m = pattern_mask(p);
  CHECK(p.nnz() == 1 + 2 + 3 + 3 + 3 + 3);
  CHECK(m(5, 3) == 0.0f);
  CHECK(std::isinf(m(5, 2)));
  CHECK(std::isinf(m(2, 3)));  // causal: never the future
  SparsePattern nc = sliding_window_pattern(6, 2, false);
  CHECK(nc.nnz() == 2 + 3 + 3 + 3 + 3 + 2);
  SparsePattern dil = dilated_window_pattern(10, 3, 2, true);  // 9 sees 9, 7, 5
  CHECK(pattern_mask(dil)(9, 5) == 0.0f);
  CHECK(std::isinf(pattern_mask(dil)(9, 8)));
  CHECK(dil.row_start[10] - dil.row_start[9] == 3);
}

TEST_CASE("a window of at least n is full causal attention") {
  const std::size_t n = 37;
  for (std::size_t w : {n, n + 5}) {
    CHECK(xt::all(xt::equal(sliding_window_mask(n, w, true), causal_mask(n))));
    Rng rng(1);
    Mat q = rng.normal_mat(n, 8), k = rng.normal_mat(n, 8), v = rng.normal_mat(n, 4);
    MatD ref = attention_reference(q, k, v, causal_mask(n));
    CHECK(max_abs(sliding_window_attention(q, k, v, w, true), ref) < 1e-5);
    CHECK(max_abs(sparse_attention(q, k, v, sliding_window_pattern(n, w, true)), ref) < 1e-5);
  }
}

TEST_CASE("efficient sparse computations equal masked exact attention") {
  Rng rng(2);
  for (std::size_t n : {1u, 7u, 33u, 129u}) {
    Mat q = rng.normal_mat(n, 16), k = rng.normal_mat(n, 16), v = rng.normal_mat(n, 5);
    CAPTURE(n);
    for (std::size_t w : {1u, 4u, 17u})
      for (bool causal : {false, true})
        for (std::size_t block : {1u, 7u, 64u}) {
          CAPTURE(w); CAPTURE(causal); CAPTURE(block);
          const MatD ref = attention_reference(q, k, v, sliding_window_mask(n, w, causal));
          CHECK(max_abs(sliding_window_attention(q, k, v, w, causal, 0.0f, block), ref) < 1e-5);
          CHECK(max_abs(sparse_attention(q, k, v, sliding_window_pattern(n, w, causal)), ref) < 1e-5);
        }
    const SparsePattern dil = dilated_window_pattern(n, 4, 3, true);
    CHECK(max_abs(sparse_attention(q, k, v, dil), attention_reference(q, k, v, pattern_mask(dil))) < 1e-5);
    const SparsePattern lf = longformer_pattern(n, 3, {0, n / 2});
    CHECK(max_abs(sparse_attention(q, k, v, lf), attention_reference(q, k, v, pattern_mask(lf))) < 1e-5);
    for (std::size_t block : {1u, 4u, 16u}) {
      const BlockSparsePattern bb = bigbird_pattern(n, block, 1, 1, 2, 42);
      CAPTURE(block);
      CHECK(max_abs(block_sparse_attention(q, k, v, bb), attention_reference(q, k, v, pattern_mask(to_token_pattern(bb)))) < 1e-5);
    }
  }
}

TEST_CASE("Longformer's global tokens see everything and are seen by everyone") {
  const Mat m = pattern_mask(longformer_pattern(20, 2, {0, 11}));
  CHECK(xt::all(xt::equal(xt::view(m, 0), 0.0f)));
  CHECK(xt::all(xt::equal(xt::view(m, 11), 0.0f)));
  CHECK(xt::all(xt::equal(xt::view(m, xt::all(), 11), 0.0f)));
  CHECK(std::isinf(m(5, 8)));
}

TEST_CASE("BigBird: every block global equals full attention; the pattern is deterministic and O(n)") {
  Rng rng(3);
  const std::size_t n = 50;
  Mat q = rng.normal_mat(n, 8), k = rng.normal_mat(n, 8), v = rng.normal_mat(n, 8);
  const BlockSparsePattern all = bigbird_pattern(n, 8, 0, 7, 0, 1);  // 7 blocks of 8 (last one 2)
  CHECK(to_token_pattern(all).nnz() == n * n);
  CHECK(max_abs(block_sparse_attention(q, k, v, all), attention_reference(q, k, v)) < 1e-5);
  // Same seed, same random blocks.
  CHECK(bigbird_pattern(200, 8, 1, 1, 2, 9).blocks == bigbird_pattern(200, 8, 1, 1, 2, 9).blocks);
  // Blocks per row are bounded (3 window + 1 global + 2 random) except the global block's row.
  const BlockSparsePattern bb = bigbird_pattern(4096, 64, 1, 1, 2, 9);
  for (std::size_t bi = 1; bi < bb.num_blocks; ++bi) CHECK(bb.block_start[bi + 1] - bb.block_start[bi] <= 6);
}

TEST_CASE("linear attention: parallel == quadratic form, recurrent == causal quadratic form") {
  Rng rng(4);
  for (std::size_t n : {1u, 7u, 64u}) {
    Mat q = rng.normal_mat(n, 6), k = rng.normal_mat(n, 6), v = rng.normal_mat(n, 3);
    CAPTURE(n);
    CHECK(max_abs(linear_attention(q, k, v), linear_attention_quadratic(q, k, v, false)) < 1e-5);
    CHECK(max_abs(linear_attention_causal(q, k, v), linear_attention_quadratic(q, k, v, true)) < 1e-5);
    // The last causal row saw every key: it equals the non-causal form's last row.
    Mat full = linear_attention(q, k, v), causal = linear_attention_causal(q, k, v);
    for (std::size_t c = 0; c < 3; ++c) CHECK(causal(n - 1, c) == doctest::Approx(full(n - 1, c)).epsilon(1e-5));
  }
  Mat x = {{-1.0f, 0.0f, 2.0f}};
  Mat phi = elu_plus_one(x);
  CHECK(phi(0, 0) == doctest::Approx(std::exp(-1.0f)));
  CHECK(phi(0, 1) == 1.0f);
  CHECK(phi(0, 2) == 3.0f);
}

TEST_CASE("KV-cached decoding equals recomputation token for token, for MHA, GQA and MQA") {
  for (std::size_t kv_heads : {4u, 2u, 1u}) {
    Rng rng(5);
    const DecoderAttention layer = decoder_attention_init(32, 4, kv_heads, 8, rng);
    // Teacher-forced: step by step with a cache == the whole sequence with a causal mask.
    Mat x = rng.normal_mat(11, 32);
    Mat full = decoder_attention_forward(layer, x);
    KVCache cache = kv_cache_make(layer, 11);
    for (std::size_t t = 0; t < 11; ++t) {
      Mat xt_row = xt::view(x, xt::range(t, t + 1), xt::all());
      Mat y = decoder_attention_step(layer, cache, xt_row);
      CAPTURE(kv_heads); CAPTURE(t);
      CHECK(max_abs(y, Mat(xt::view(full, xt::range(t, t + 1), xt::all()))) < 1e-5);
    }
    CHECK_THROWS_AS(decoder_attention_step(layer, cache, Mat(xt::view(x, xt::range(0, 1), xt::all()))), ShapeError);
    // Generation feeds outputs back: the two paths must produce the same tokens.
    Mat x0 = rng.normal_mat(1, 32);
    CHECK(max_abs(generate(layer, x0, 20, true), generate(layer, x0, 20, false)) < 1e-4);
  }
}

TEST_CASE("KV cache bytes per token: MHA vs GQA vs MQA") {
  // LLaMA-2-7B-like: 32 layers, 32 heads of 128, fp16: 2·32·32·128·2 = 512 KiB per token.
  CHECK(kv_cache_bytes_per_token(32, 32, 128, 2) == 524288);
  CHECK(kv_cache_bytes_per_token(32, 8, 128, 2) == 131072);  // GQA with 8 KV heads: 4x less
  CHECK(kv_cache_bytes_per_token(32, 1, 128, 2) == 16384);   // MQA
  Rng rng(1);
  CHECK_THROWS_AS(decoder_attention_init(16, 4, 3, 4, rng), ShapeError);
}
