// Linear attention, parallel and recurrent (see attn/attention/linear_attention.hpp).
#include "attn/attention/linear_attention.hpp"

#include <cmath>

#include "attn/tensor/blas.hpp"

#include "attention/qkv_check.hpp"

namespace attn {

using detail::check_qkv;

Mat elu_plus_one(const Mat& x) {
  Mat y(x.shape());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float a = x.data()[i];
    y.data()[i] = a > 0.0f ? a + 1.0f : std::exp(a);
  }
  return y;
}

Mat linear_attention(const Mat& q, const Mat& k, const Mat& v) {
  // q: (N, d), k: (S, d), v: (S, d_v) -> (N, d_v)
  check_qkv("linear_attention", q, k, v);
  const Mat fq = elu_plus_one(q), fk = elu_plus_one(k);
  const Mat kv = matmul(fk, v, Op::T, Op::N);  // Σ_j φ(k_j) v_jᵀ: (d, d_v), the whole sequence in d×d_v
  Mat z = xt::zeros<float>({std::size_t(1), fk.shape(1)});
  for (std::size_t j = 0; j < fk.shape(0); ++j)
    for (std::size_t c = 0; c < fk.shape(1); ++c) z(0, c) += fk(j, c);  // Σ_j φ(k_j): (d)
  Mat out = matmul(fq, kv);                    // φ(Q) (φ(K)ᵀ V): (N, d_v)
  Mat den = matmul(fq, z, Op::N, Op::T);       // φ(Q) z: (N, 1)
  for (std::size_t i = 0; i < out.shape(0); ++i)
    for (std::size_t c = 0; c < out.shape(1); ++c) out(i, c) /= den(i, 0);
  return out;
}

Mat linear_attention_causal(const Mat& q, const Mat& k, const Mat& v) {
  check_qkv("linear_attention_causal", q, k, v);
  if (q.shape(0) != k.shape(0)) shape_mismatch("linear_attention_causal", "q", shape_of(q), "k", shape_of(k), "need as many keys as queries");
  const std::size_t n = q.shape(0), d = q.shape(1), dv = v.shape(1);
  const Mat fq = elu_plus_one(q), fk = elu_plus_one(k);
  Mat state = xt::zeros<float>({d, dv});  // S_t
  std::vector<float> z(d, 0.0f);          // z_t
  Mat out = xt::zeros<float>({n, dv});
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t a = 0; a < d; ++a) {  // S_t = S_{t−1} + φ(k_t) v_tᵀ,  z_t = z_{t−1} + φ(k_t)
      z[a] += fk(t, a);
      for (std::size_t c = 0; c < dv; ++c) state(a, c) += fk(t, a) * v(t, c);
    }
    float den = 0.0f;                      // out_t = φ(q_t)ᵀ S_t / φ(q_t)ᵀ z_t
    for (std::size_t a = 0; a < d; ++a) den += fq(t, a) * z[a];
    for (std::size_t a = 0; a < d; ++a)
      for (std::size_t c = 0; c < dv; ++c) out(t, c) += fq(t, a) * state(a, c);
    for (std::size_t c = 0; c < dv; ++c) out(t, c) /= den;
  }
  return out;
}

Mat linear_attention_quadratic(const Mat& q, const Mat& k, const Mat& v, bool causal) {
  check_qkv("linear_attention_quadratic", q, k, v);
  Mat a = matmul(elu_plus_one(q), elu_plus_one(k), Op::N, Op::T);  // (N, S), all entries > 0
  for (std::size_t i = 0; i < a.shape(0); ++i) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < a.shape(1); ++j) {
      if (causal && j > i) a(i, j) = 0.0f;
      sum += a(i, j);
    }
    for (std::size_t j = 0; j < a.shape(1); ++j) a(i, j) /= sum;
  }
  return matmul(a, v);
}

}  // namespace attn
