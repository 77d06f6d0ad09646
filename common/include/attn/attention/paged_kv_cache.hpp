// A paged KV cache (Kwon et al. 2023, vLLM's PagedAttention): the keys and values of many
// sequences live in one pool of fixed-size blocks of `block_size` token slots. Each sequence has a
// block table (logical block i -> physical block), and takes a new block only when its last one is
// full, so at most block_size − 1 slots per sequence are wasted — against a contiguous cache that
// reserves the maximum length for every sequence up front.
//   token j of a sequence lives in physical block table[j / block_size], slot j % block_size.
// Every layer has its own pool, indexed by the same block numbers.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

struct PagedKVCache {
  std::size_t block_size = 16, layers = 0, width = 0;  // width = kv_heads · head_dim
  std::vector<Mat> k, v;                               // per layer: (n_blocks · block_size, width)
  std::vector<std::size_t> free_blocks;                // physical blocks not in use (a stack)
  std::vector<std::vector<std::size_t>> tables;         // per sequence: its physical blocks in order
  std::vector<std::size_t> lengths;                     // per sequence: tokens stored
  std::size_t n_blocks() const { return k.empty() ? 0 : k[0].shape(0) / block_size; }
  std::size_t blocks_in_use() const { return n_blocks() - free_blocks.size(); }
};

// A pool of n_blocks blocks for `layers` layers of K/V rows of `width` floats.
PagedKVCache paged_kv_make(std::size_t layers, std::size_t width, std::size_t n_blocks, std::size_t block_size);
// A new, empty sequence; returns its id.
std::size_t paged_kv_add_sequence(PagedKVCache& c);
// Makes room for one more token of seq (a new block when its last is full) and returns the
// physical row where that token's K and V go (in every layer); the length grows by one.
// std::runtime_error when the pool has no free block.
std::size_t paged_kv_append_slot(PagedKVCache& c, std::size_t seq);
// The physical row of token j of seq (j < length).
std::size_t paged_kv_row(const PagedKVCache& c, std::size_t seq, std::size_t j);
// Returns the sequence's blocks to the pool.
void paged_kv_free_sequence(PagedKVCache& c, std::size_t seq);

// Causal grouped-query attention of T queries (the last T positions of seq, already appended)
// reading K and V through the block table: q: (T, H·dh) -> out: (T, H·dh). Query i sits at
// position len − T + i and sees keys 0 … len − T + i.
Mat paged_attention(const PagedKVCache& c, std::size_t layer, std::size_t seq, const Mat& q, std::size_t n_heads);

// Bytes the K and V of the pool hold in use (blocks in use) and what a contiguous cache reserving
// max_len tokens for each of n_seqs sequences would hold, at bytes_per_value.
std::size_t paged_kv_bytes_in_use(const PagedKVCache& c, std::size_t bytes_per_value = 4);
std::size_t contiguous_kv_bytes(std::size_t layers, std::size_t width, std::size_t n_seqs, std::size_t max_len,
                                std::size_t bytes_per_value = 4);

}  // namespace attn
