// Grouped-query attention and the MHA / GQA / MQA counts (see attn/attention/gqa.hpp).
#include "attn/attention/gqa.hpp"

#include <string>

namespace attn {

Tensor3 repeat_kv(const Tensor3& kv, std::size_t n_heads) {
  // kv: (G, S, d) -> (H, S, d)
  const std::size_t G = kv.shape(0), S = kv.shape(1), d = kv.shape(2);
  if (G == 0 || n_heads % G != 0)
    throw ShapeError("repeat_kv: " + std::to_string(n_heads) + " query heads cannot share " + std::to_string(G) +
                     " K/V heads " + shape_str(shape_of(kv)) + " evenly (G must divide H)");
  const std::size_t group = n_heads / G;
  Tensor3 out = xt::zeros<float>({n_heads, S, d});
  for (std::size_t h = 0; h < n_heads; ++h)
    std::copy(kv.data() + (h / group) * S * d, kv.data() + (h / group + 1) * S * d, out.data() + h * S * d);
  return out;
}

AttentionResult3 grouped_query_attention(const Tensor3& q, const Tensor3& k, const Tensor3& v, const Mat& mask,
                                         float scale) {
  // q: (H, T, d_k), k: (G, S, d_k), v: (G, S, d_v)
  if (shape_of(k).at(0) != shape_of(v).at(0) || k.shape(1) != v.shape(1))
    shape_mismatch("grouped_query_attention", "k", shape_of(k), "v", shape_of(v), "need the same K/V heads and length");
  if (q.shape(2) != k.shape(2))
    shape_mismatch("grouped_query_attention", "q", shape_of(q), "k", shape_of(k), "need the same d_k");
  if (k.shape(0) == 0 || q.shape(0) % k.shape(0) != 0)
    shape_mismatch("grouped_query_attention", "q", shape_of(q), "k", shape_of(k),
                   "the number of K/V heads must divide the number of query heads");
  // Sharing is a read of the same K/V slice by several query heads; repeat_kv makes that explicit.
  return scaled_dot_product_attention(q, repeat_kv(k, q.shape(0)), repeat_kv(v, q.shape(0)), mask, scale);
}

AttentionParamCount attention_param_count(std::size_t d_model, std::size_t n_heads, std::size_t n_kv_heads,
                                          std::size_t d_head, bool bias) {
  const std::size_t b = bias ? 1 : 0;
  AttentionParamCount c;
  c.q = d_model * n_heads * d_head + b * n_heads * d_head;
  c.k = d_model * n_kv_heads * d_head + b * n_kv_heads * d_head;
  c.v = c.k;
  c.o = n_heads * d_head * d_model + b * d_model;
  return c;
}

std::size_t kv_cache_bytes_per_token(std::size_t n_layers, std::size_t n_kv_heads, std::size_t d_head,
                                     std::size_t bytes_per_value) {
  return 2 * n_layers * n_kv_heads * d_head * bytes_per_value;  // 2: one K and one V vector
}

}  // namespace attn
