// Tiled exact attention, forward and backward (see attn/attention/tiled_attention.hpp). Tile products go to
// single-call OpenBLAS sgemm on raw row-major pointers; the softmax bookkeeping is plain loops.
#include "attn/attention/tiled_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"

#include "attention/qkv_check.hpp"

namespace attn {

using detail::check_qkv;
using detail::kNegInf;

namespace {

// Keys [0, visible) that query i may see (all S when not causal).
std::size_t visible_keys(std::size_t i, std::size_t n, std::size_t s, bool causal) {
  if (!causal) return s;
  const std::ptrdiff_t lim = std::ptrdiff_t(i) + std::ptrdiff_t(s) - std::ptrdiff_t(n) + 1;
  return std::size_t(std::clamp<std::ptrdiff_t>(lim, 0, std::ptrdiff_t(s)));
}

}  // namespace

std::size_t tiled_attention_workspace_floats(std::size_t tile_q, std::size_t tile_k, std::size_t d_v) {
  return tile_q * tile_k + tile_q * d_v + 2 * tile_q;
}

TiledAttentionResult tiled_attention_forward(const Mat& q, const Mat& k, const Mat& v, std::size_t tile_q,
                                             std::size_t tile_k, bool causal, float scale,
                                             std::vector<OnlineSoftmaxStep>* trace, std::size_t trace_row) {
  // q: (N, d), k: (S, d), v: (S, d_v) -> output: (N, d_v), logsumexp: (N,)
  const char* fn = "tiled_attention_forward";
  check_qkv(fn, q, k, v);
  const std::size_t n = q.shape(0), s = k.shape(0), d = q.shape(1), dv = v.shape(1);
  if (tile_q == 0 || tile_k == 0) throw ShapeError("tiled_attention_forward: tiles must be at least 1×1");
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  TiledAttentionResult r;
  r.output = xt::zeros<float>({n, dv});
  r.logsumexp = xt::zeros<float>({n});
  std::vector<float> st(tile_q * tile_k);                 // one tile of S, then P
  std::vector<OnlineSoftmaxState> state(tile_q);          // m, ℓ of the block's rows
  for (std::size_t i0 = 0; i0 < n; i0 += tile_q) {
    const std::size_t bq = std::min(tile_q, n - i0);
    float* o = r.output.data() + i0 * dv;                 // the block's rows of O accumulate in place
    std::fill(state.begin(), state.end(), OnlineSoftmaxState{});
    const std::size_t kend = visible_keys(i0 + bq - 1, n, s, causal);  // the block's last row sees most
    for (std::size_t j0 = 0; j0 < kend; j0 += tile_k) {
      const std::size_t bk = std::min(tile_k, s - j0);
      // S_tile = scale · Q_i K_jᵀ   (bq × bk)
      sgemm(Op::N, Op::T, int(bq), int(bk), int(d), scale, q.data() + i0 * d, int(d), k.data() + j0 * d, int(d),
            0.0f, st.data(), int(tile_k));
      for (std::size_t r0 = 0; r0 < bq; ++r0) {
        float* srow = st.data() + r0 * tile_k;
        const std::size_t vis = visible_keys(i0 + r0, n, s, causal);
        for (std::size_t j = 0; j < bk; ++j)
          if (j0 + j >= vis) srow[j] = kNegInf;           // causal mask inside the tile
        OnlineSoftmaxStep step{j0, j0 + bk, *std::max_element(srow, srow + bk), state[r0].m, 0, 0, state[r0].l, 0};
        // m' = max(m, rowmax S); P = exp(S − m'); ℓ' = α ℓ + Σ P; α = exp(m − m')
        const float alpha = online_softmax_update(state[r0], srow, bk, srow);
        for (std::size_t c = 0; c < dv; ++c) o[r0 * dv + c] *= alpha;  // rescale what P·V gave so far
        if (trace && i0 + r0 == trace_row) {
          step.alpha = alpha;
          step.m_after = state[r0].m;
          step.l_after = state[r0].l;
          trace->push_back(step);
        }
      }
      // O_i += P V_j   (bq × d_v)
      sgemm(Op::N, Op::N, int(bq), int(dv), int(bk), 1.0f, st.data(), int(tile_k), v.data() + j0 * dv, int(dv),
            1.0f, o, int(dv));
    }
    for (std::size_t r0 = 0; r0 < bq; ++r0) {             // O = O / ℓ,  L = m + log ℓ
      const float l = state[r0].l;
      for (std::size_t c = 0; c < dv; ++c) o[r0 * dv + c] = l > 0.0f ? o[r0 * dv + c] / l : 0.0f;
      r.logsumexp(i0 + r0) = l > 0.0f ? state[r0].m + std::log(l) : kNegInf;
    }
  }
  return r;
}

void tiled_attention_backward(Mat& dq, Mat& dk, Mat& dv, const Mat& dout, const Mat& q, const Mat& k,
                              const Mat& v, const Mat& out, const Vec& logsumexp, std::size_t tile_q,
                              std::size_t tile_k, bool causal, float scale) {
  const char* fn = "tiled_attention_backward";
  check_qkv(fn, q, k, v);
  const std::size_t n = q.shape(0), s = k.shape(0), d = q.shape(1), dvs = v.shape(1);
  expect_shape(fn, "dout", shape_of(dout), {n, dvs});
  expect_shape(fn, "out", shape_of(out), {n, dvs});
  expect_shape(fn, "logsumexp", shape_of(logsumexp), {n});
  expect_shape(fn, "dq", shape_of(dq), {n, d});
  expect_shape(fn, "dk", shape_of(dk), {s, d});
  expect_shape(fn, "dv", shape_of(dv), {s, dvs});
  if (tile_q == 0 || tile_k == 0) throw ShapeError("tiled_attention_backward: tiles must be at least 1×1");
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  // D_i = Σ_c dO_ic O_ic = Σ_j P_ij dP_ij: the softmax backward's row term, once per row.
  std::vector<float> drow(n);
  for (std::size_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (std::size_t c = 0; c < dvs; ++c) acc += dout(i, c) * out(i, c);
    drow[i] = acc;
  }
  std::vector<float> p(tile_q * tile_k), dp(tile_q * tile_k);
  for (std::size_t j0 = 0; j0 < s; j0 += tile_k) {
    const std::size_t bk = std::min(tile_k, s - j0);
    for (std::size_t i0 = 0; i0 < n; i0 += tile_q) {
      const std::size_t bq = std::min(tile_q, n - i0);
      if (visible_keys(i0 + bq - 1, n, s, causal) <= j0) continue;  // tile wholly masked
      // in the forward this was: S = scale·Q Kᵀ, P = exp(S − L) (the normalised softmax)
      sgemm(Op::N, Op::T, int(bq), int(bk), int(d), scale, q.data() + i0 * d, int(d), k.data() + j0 * d, int(d),
            0.0f, p.data(), int(tile_k));
      for (std::size_t r0 = 0; r0 < bq; ++r0) {
        const std::size_t vis = visible_keys(i0 + r0, n, s, causal);
        const float lse = logsumexp(i0 + r0);
        for (std::size_t j = 0; j < bk; ++j) {
          float& x = p[r0 * tile_k + j];
          x = (j0 + j < vis && lse != kNegInf) ? std::exp(x - lse) : 0.0f;
        }
      }
      // O = P V  =>  dV_j += Pᵀ dO_i,  dP = dO_i V_jᵀ
      sgemm(Op::T, Op::N, int(bk), int(dvs), int(bq), 1.0f, p.data(), int(tile_k), dout.data() + i0 * dvs, int(dvs),
            1.0f, dv.data() + j0 * dvs, int(dvs));
      sgemm(Op::N, Op::T, int(bq), int(bk), int(dvs), 1.0f, dout.data() + i0 * dvs, int(dvs), v.data() + j0 * dvs,
            int(dvs), 0.0f, dp.data(), int(tile_k));
      // P = softmax(S)  =>  dS = P ∘ (dP − D)
      for (std::size_t r0 = 0; r0 < bq; ++r0)
        for (std::size_t j = 0; j < bk; ++j)
          dp[r0 * tile_k + j] = p[r0 * tile_k + j] * (dp[r0 * tile_k + j] - drow[i0 + r0]);
      // S = scale·Q Kᵀ  =>  dQ_i += scale·dS K_j,  dK_j += scale·dSᵀ Q_i
      sgemm(Op::N, Op::N, int(bq), int(d), int(bk), scale, dp.data(), int(tile_k), k.data() + j0 * d, int(d), 1.0f,
            dq.data() + i0 * d, int(d));
      sgemm(Op::T, Op::N, int(bk), int(d), int(bq), scale, dp.data(), int(tile_k), q.data() + i0 * d, int(d), 1.0f,
            dk.data() + j0 * d, int(d));
    }
  }
}

void attention_backward(Mat& dq, Mat& dk, Mat& dv, const Mat& dout, const Mat& q, const Mat& k, const Mat& v,
                        bool causal, float scale) {
  const char* fn = "attention_backward";
  check_qkv(fn, q, k, v);
  const std::size_t n = q.shape(0), s = k.shape(0), d = q.shape(1), dvs = v.shape(1);
  expect_shape(fn, "dout", shape_of(dout), {n, dvs});
  expect_shape(fn, "dq", shape_of(dq), {n, d});
  expect_shape(fn, "dk", shape_of(dk), {s, d});
  expect_shape(fn, "dv", shape_of(dv), {s, dvs});
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  // forward: S = scale·Q Kᵀ (+ mask), P = softmax(S), O = P V
  Mat p = matmul(q, k, Op::N, Op::T, scale);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t vis = visible_keys(i, n, s, causal);
    softmax_row(p.data() + i * s, p.data() + i * s, nullptr, vis);
    for (std::size_t j = vis; j < s; ++j) p(i, j) = 0.0f;
  }
  gemm(dv, p, dout, Op::T, Op::N, 1.0f, 1.0f);     // dV += Pᵀ dO
  Mat dp = matmul(dout, v, Op::N, Op::T);          // dP = dO Vᵀ
  for (std::size_t i = 0; i < n; ++i) {            // dS = P ∘ (dP − Σ_j P_ij dP_ij)
    float dot = 0.0f;
    for (std::size_t j = 0; j < s; ++j) dot += p(i, j) * dp(i, j);
    for (std::size_t j = 0; j < s; ++j) dp(i, j) = p(i, j) * (dp(i, j) - dot);
  }
  gemm(dq, dp, k, Op::N, Op::N, scale, 1.0f);      // dQ += scale·dS K
  gemm(dk, dp, q, Op::T, Op::N, scale, 1.0f);      // dK += scale·dSᵀ Q
}

}  // namespace attn
