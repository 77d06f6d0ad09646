// The paged KV cache and attention through block tables (see attn/attention/paged_kv_cache.hpp).
#include "attn/attention/paged_kv_cache.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "attn/tensor/softmax.hpp"

namespace attn {

PagedKVCache paged_kv_make(std::size_t layers, std::size_t width, std::size_t n_blocks, std::size_t block_size) {
  if (layers == 0 || width == 0 || n_blocks == 0 || block_size == 0)
    throw std::invalid_argument("paged_kv_make: layers, width, n_blocks and block_size must be positive");
  PagedKVCache c;
  c.block_size = block_size;
  c.layers = layers;
  c.width = width;
  for (std::size_t l = 0; l < layers; ++l) {
    c.k.push_back(xt::zeros<float>({n_blocks * block_size, width}));
    c.v.push_back(xt::zeros<float>({n_blocks * block_size, width}));
  }
  for (std::size_t b = n_blocks; b-- > 0;) c.free_blocks.push_back(b);  // block 0 is handed out first
  return c;
}

std::size_t paged_kv_add_sequence(PagedKVCache& c) {
  c.tables.emplace_back();
  c.lengths.push_back(0);
  return c.tables.size() - 1;
}

namespace {
void check_seq(const char* fn, const PagedKVCache& c, std::size_t seq) {
  if (seq >= c.tables.size())
    throw std::out_of_range(std::string(fn) + ": no sequence " + std::to_string(seq) + " (have " +
                            std::to_string(c.tables.size()) + ")");
}
}  // namespace

std::size_t paged_kv_append_slot(PagedKVCache& c, std::size_t seq) {
  check_seq("paged_kv_append_slot", c, seq);
  const std::size_t j = c.lengths[seq];
  if (j % c.block_size == 0) {  // the last block is full (or there is none): take a free one
    if (c.free_blocks.empty())
      throw std::runtime_error("paged_kv_append_slot: the pool's " + std::to_string(c.n_blocks()) +
                               " blocks are all in use");
    c.tables[seq].push_back(c.free_blocks.back());
    c.free_blocks.pop_back();
  }
  c.lengths[seq] = j + 1;
  return paged_kv_row(c, seq, j);
}

std::size_t paged_kv_row(const PagedKVCache& c, std::size_t seq, std::size_t j) {
  check_seq("paged_kv_row", c, seq);
  if (j >= c.lengths[seq])
    throw std::out_of_range("paged_kv_row: token " + std::to_string(j) + " of a sequence of " +
                            std::to_string(c.lengths[seq]));
  return c.tables[seq][j / c.block_size] * c.block_size + j % c.block_size;
}

void paged_kv_free_sequence(PagedKVCache& c, std::size_t seq) {
  check_seq("paged_kv_free_sequence", c, seq);
  for (auto b : c.tables[seq]) c.free_blocks.push_back(b);
  c.tables[seq].clear();
  c.lengths[seq] = 0;
}

Mat paged_attention(const PagedKVCache& c, std::size_t layer, std::size_t seq, const Mat& q, std::size_t n_heads) {
  // q: (T, H·dh) -> out: (T, H·dh)
  const char* fn = "paged_attention";
  check_seq(fn, c, seq);
  if (layer >= c.layers) throw std::out_of_range(std::string(fn) + ": no layer " + std::to_string(layer));
  const std::size_t t = q.shape(0), len = c.lengths[seq];
  if (n_heads == 0 || q.shape(1) % n_heads != 0 || t > len)
    throw ShapeError(std::string(fn) + ": q " + shape_str(shape_of(q)) + " with " + std::to_string(n_heads) +
                     " heads on a sequence of " + std::to_string(len) + " cached tokens");
  const std::size_t dh = q.shape(1) / n_heads;
  if (c.width % dh != 0 || n_heads % (c.width / dh) != 0)
    throw ShapeError(std::string(fn) + ": cache width " + std::to_string(c.width) + " is not a divisor group of " +
                     std::to_string(n_heads) + " heads of " + std::to_string(dh));
  const std::size_t kv_heads = c.width / dh, group = n_heads / kv_heads;
  const float scale = 1.0f / std::sqrt(float(dh));
  const Mat& K = c.k[layer];
  const Mat& V = c.v[layer];
  std::vector<std::size_t> rows(len);  // logical position -> physical row, through the block table
  for (std::size_t j = 0; j < len; ++j) rows[j] = paged_kv_row(c, seq, j);
  Mat out = xt::zeros<float>({t, n_heads * dh});
  std::vector<float> s(len);
  for (std::size_t i = 0; i < t; ++i) {
    const std::size_t visible = len - t + i + 1;  // causal: keys 0 … position of query i
    for (std::size_t h = 0; h < n_heads; ++h) {
      const std::size_t g = h / group;
      const float* qi = q.data() + i * n_heads * dh + h * dh;
      for (std::size_t j = 0; j < visible; ++j) {  // s_j = q·k_j / √dh
        const float* kj = K.data() + rows[j] * c.width + g * dh;
        float dot = 0.0f;
        for (std::size_t e = 0; e < dh; ++e) dot += qi[e] * kj[e];
        s[j] = dot * scale;
      }
      softmax_row(s.data(), s.data(), nullptr, visible);
      float* o = out.data() + i * n_heads * dh + h * dh;  // o = Σ_j p_j v_j
      for (std::size_t j = 0; j < visible; ++j) {
        const float* vj = V.data() + rows[j] * c.width + g * dh;
        for (std::size_t e = 0; e < dh; ++e) o[e] += s[j] * vj[e];
      }
    }
  }
  return out;
}

std::size_t paged_kv_bytes_in_use(const PagedKVCache& c, std::size_t bytes_per_value) {
  return 2 * c.layers * c.blocks_in_use() * c.block_size * c.width * bytes_per_value;
}

std::size_t contiguous_kv_bytes(std::size_t layers, std::size_t width, std::size_t n_seqs, std::size_t max_len,
                                std::size_t bytes_per_value) {
  return 2 * layers * n_seqs * max_len * width * bytes_per_value;
}

}  // namespace attn
