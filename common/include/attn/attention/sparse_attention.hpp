// Sparse attention: each query sees a chosen subset of keys, so the cost is O(Σ visible keys · d)
// instead of O(N·S·d). The complexity depends on the pattern (one article says O(n log n·d) for
// "sparse attention" in general, which is not so): a window of w keys or BigBird's w + g + r
// blocks is O(n); Child et al.'s strided pattern is O(n√n); Reformer's LSH buckets O(n log n).
//   sliding window (Mistral 7B, W = 4096; LLaMA 3 does NOT use one: full causal attention + GQA)
//   dilated window (gaps of `dilation` between the keys: a wider view for the same cost)
//   BigBird (Zaheer et al. 2020): window blocks + global blocks + random blocks
//   Longformer (Beltagy et al. 2020): a window + a few global tokens that see and are seen by all
// Each pattern is a builder (SparsePattern: the visible keys of every row, or a mask for
// drawing and for checking) and an efficient computation that never materialises N × S.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

// Token-level pattern, compressed rows: row i sees keys[row_start[i] .. row_start[i + 1]), sorted.
struct SparsePattern {
  std::size_t rows = 0, cols = 0;          // N queries, S keys
  std::vector<std::size_t> row_start;      // N + 1 offsets
  std::vector<std::uint32_t> keys;         // nnz key indices
  std::size_t nnz() const { return keys.size(); }
  double density() const { return rows && cols ? double(nnz()) / (double(rows) * double(cols)) : 0.0; }
};

// Block-level pattern (BigBird): query block I sees key blocks blocks[block_start[I] .. [I + 1]).
struct BlockSparsePattern {
  std::size_t n = 0, block = 0, num_blocks = 0;
  std::vector<std::size_t> block_start;    // num_blocks + 1 offsets
  std::vector<std::uint32_t> blocks;       // key block indices, sorted
};

// Causal: query i sees keys (i − w, i] (itself and the w − 1 before it; Mistral's W).
// Not causal: keys [i − w + 1, i + w − 1]. w >= n gives full (causal) attention.
SparsePattern sliding_window_pattern(std::size_t n, std::size_t w, bool causal);
// Keys i − t·dilation for t = 0 … w − 1 (and i + t·dilation when not causal): w keys each side
// spread over a span of (w − 1)·dilation + 1. dilation = 1 is the sliding window.
SparsePattern dilated_window_pattern(std::size_t n, std::size_t w, std::size_t dilation, bool causal);
// Longformer: the non-causal sliding window of w plus `global_tokens` (indices) that see every key
// and that every query sees.
SparsePattern longformer_pattern(std::size_t n, std::size_t w, const std::vector<std::size_t>& global_tokens);
// BigBird with blocks of `block` tokens: query block I sees key blocks I − window_blocks …
// I + window_blocks, the first `global_blocks` blocks (which also see everything), and
// `random_blocks` other blocks drawn with `seed` (deterministic). Non-causal, as in the paper.
BlockSparsePattern bigbird_pattern(std::size_t n, std::size_t block, std::size_t window_blocks,
                                   std::size_t global_blocks, std::size_t random_blocks, std::uint64_t seed);
SparsePattern to_token_pattern(const BlockSparsePattern& p);

// (N, S) additive mask of a pattern: 0 where visible, −∞ elsewhere (for heatmaps and references).
Mat pattern_mask(const SparsePattern& p);
// Masks for drawing, as the builders above: sliding_window_mask(n, w, causal) etc.
Mat sliding_window_mask(std::size_t n, std::size_t w, bool causal);

// q: (N, d), k: (S, d), v: (S, d_v) -> (N, d_v): softmax over each row's visible keys only.
// O(nnz·d) time, O(S) extra memory (one row of weights). scale <= 0: 1/√d.
Mat sparse_attention(const Mat& q, const Mat& k, const Mat& v, const SparsePattern& p, float scale = 0.0f);

// The sliding window computed in query blocks of `block` rows: each block multiplies against only
// the (block + w − 1 [+ w − 1]) keys around it with one sgemm: O(N·(w + block)·d) time and
// O(block·(block + 2w)) extra memory, no index list. Same result as sparse_attention with
// sliding_window_pattern(n, w, causal).
Mat sliding_window_attention(const Mat& q, const Mat& k, const Mat& v, std::size_t w, bool causal,
                             float scale = 0.0f, std::size_t block = 64);

// BigBird computed block by block: one sgemm per visible (query block, key block) pair and an
// online softmax across them. O(nnz_blocks·block²·d) time, O(block²) extra memory.
Mat block_sparse_attention(const Mat& q, const Mat& k, const Mat& v, const BlockSparsePattern& p, float scale = 0.0f);

// Bytes of the extra memory each computation above allocates (for chapter 06's memory column).
std::size_t sparse_attention_workspace_bytes(const SparsePattern& p);
std::size_t sliding_window_workspace_bytes(std::size_t w, bool causal, std::size_t block = 64);
std::size_t block_sparse_workspace_bytes(const BlockSparsePattern& p);

}  // namespace attn
