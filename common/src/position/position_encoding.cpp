// One switch over the positional encodings (see attn/position/position_encoding.hpp).
#include "attn/position/position_encoding.hpp"

#include "attn/position/alibi.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"

namespace attn {

const char* position_encoding_name(PositionEncoding e) {
  switch (e) {
    case PositionEncoding::None: return "none";
    case PositionEncoding::Sinusoidal: return "sinusoidal";
    case PositionEncoding::Learned: return "learned";
    case PositionEncoding::Rope: return "rope";
    case PositionEncoding::Alibi: return "alibi";
  }
  return "?";
}

const std::vector<PositionEncoding>& all_position_encodings() {
  static const std::vector<PositionEncoding> all = {PositionEncoding::None, PositionEncoding::Sinusoidal,
                                                    PositionEncoding::Learned, PositionEncoding::Rope,
                                                    PositionEncoding::Alibi};
  return all;
}

Mat positioned_self_attention(const Mat& x, const SelfAttentionWeights& w, PositionEncoding enc,
                              const Mat& learned_table, float alibi_slope, const Mat& mask) {
  // x: (T, d_model) -> (T, d_v)
  const std::size_t T = x.shape(0), d = x.shape(1);
  Mat xp = x;
  if (enc == PositionEncoding::Sinusoidal) xp += sinusoidal_table(T, d);
  if (enc == PositionEncoding::Learned) learned_position_forward(xp, x, learned_table);
  Mat q = matmul(xp, w.w_q), k = matmul(xp, w.w_k);
  const Mat v = matmul(xp, w.w_v);
  Mat bias = mask.size() > 0 ? mask : Mat(xt::zeros<float>({T, T}));
  if (enc == PositionEncoding::Rope) {
    const RopeTables tab = rope_tables(T, q.shape(1));
    rope_forward(q, q, tab);
    rope_forward(k, k, tab);
  }
  if (enc == PositionEncoding::Alibi) {
    Vec slope = {alibi_slope};
    Tensor3 b;
    alibi_bias_forward(b, slope, T, T);
    bias += xt::view(b, 0, xt::all(), xt::all());
  }
  return scaled_dot_product_attention(q, k, v, bias).output;
}

}  // namespace attn
