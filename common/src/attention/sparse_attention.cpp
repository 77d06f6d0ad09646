// Sparse attention patterns and their efficient computations (see attn/attention/sparse_attention.hpp).
#include "attn/attention/sparse_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/attention/online_softmax.hpp"
#include "attn/tensor/rng.hpp"

#include "attention/qkv_check.hpp"

namespace attn {

using detail::check_qkv;
using detail::kNegInf;

namespace {

// Builds a pattern row by row from a function that appends row i's keys (any order, duplicates ok).
template <class RowFn>
SparsePattern build_pattern(std::size_t rows, std::size_t cols, RowFn row_keys) {
  SparsePattern p;
  p.rows = rows;
  p.cols = cols;
  p.row_start.reserve(rows + 1);
  p.row_start.push_back(0);
  std::vector<std::uint32_t> row;
  for (std::size_t i = 0; i < rows; ++i) {
    row.clear();
    row_keys(i, row);
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    p.keys.insert(p.keys.end(), row.begin(), row.end());
    p.row_start.push_back(p.keys.size());
  }
  return p;
}

}  // namespace

SparsePattern sliding_window_pattern(std::size_t n, std::size_t w, bool causal) {
  return build_pattern(n, n, [&](std::size_t i, std::vector<std::uint32_t>& row) {
    if (w == 0) return;
    const std::size_t lo = i + 1 >= w ? i + 1 - w : 0;
    const std::size_t hi = causal ? i : std::min(n - 1, i + w - 1);
    for (std::size_t j = lo; j <= hi; ++j) row.push_back(std::uint32_t(j));
  });
}

SparsePattern dilated_window_pattern(std::size_t n, std::size_t w, std::size_t dilation, bool causal) {
  if (dilation == 0) dilation = 1;
  return build_pattern(n, n, [&](std::size_t i, std::vector<std::uint32_t>& row) {
    for (std::size_t t = 0; t < w; ++t) {
      if (t * dilation <= i) row.push_back(std::uint32_t(i - t * dilation));
      if (!causal && i + t * dilation < n) row.push_back(std::uint32_t(i + t * dilation));
    }
  });
}

SparsePattern longformer_pattern(std::size_t n, std::size_t w, const std::vector<std::size_t>& global_tokens) {
  std::vector<bool> is_global(n, false);
  for (std::size_t g : global_tokens)
    if (g < n) is_global[g] = true;
  return build_pattern(n, n, [&](std::size_t i, std::vector<std::uint32_t>& row) {
    if (is_global[i]) {  // a global token sees every key
      for (std::size_t j = 0; j < n; ++j) row.push_back(std::uint32_t(j));
      return;
    }
    if (w > 0)
      for (std::size_t j = i + 1 >= w ? i + 1 - w : 0; j <= std::min(n - 1, i + w - 1); ++j) row.push_back(std::uint32_t(j));
    for (std::size_t g : global_tokens)
      if (g < n) row.push_back(std::uint32_t(g));  // and every query sees the global tokens
  });
}

BlockSparsePattern bigbird_pattern(std::size_t n, std::size_t block, std::size_t window_blocks,
                                   std::size_t global_blocks, std::size_t random_blocks, std::uint64_t seed) {
  if (block == 0) throw ShapeError("bigbird_pattern: block must be at least 1");
  BlockSparsePattern p;
  p.n = n;
  p.block = block;
  p.num_blocks = (n + block - 1) / block;
  const std::size_t nb = p.num_blocks;
  Rng rng(seed);
  p.block_start.push_back(0);
  std::vector<bool> seen(nb);
  for (std::size_t bi = 0; bi < nb; ++bi) {
    std::fill(seen.begin(), seen.end(), false);
    if (bi < global_blocks) {
      std::fill(seen.begin(), seen.end(), true);  // a global block sees everything
    } else {
      for (std::size_t bj = bi >= window_blocks ? bi - window_blocks : 0; bj <= std::min(nb - 1, bi + window_blocks); ++bj)
        seen[bj] = true;
      for (std::size_t g = 0; g < std::min(global_blocks, nb); ++g) seen[g] = true;
      std::vector<std::uint32_t> others;
      for (std::size_t bj = 0; bj < nb; ++bj)
        if (!seen[bj]) others.push_back(std::uint32_t(bj));
      for (std::size_t r = 0; r < random_blocks && !others.empty(); ++r) {  // draw without replacement
        const std::size_t pick = rng.below(std::uint32_t(others.size()));
        seen[others[pick]] = true;
        others.erase(others.begin() + std::ptrdiff_t(pick));
      }
    }
    for (std::size_t bj = 0; bj < nb; ++bj)
      if (seen[bj]) p.blocks.push_back(std::uint32_t(bj));
    p.block_start.push_back(p.blocks.size());
  }
  return p;
}

SparsePattern to_token_pattern(const BlockSparsePattern& p) {
  return build_pattern(p.n, p.n, [&](std::size_t i, std::vector<std::uint32_t>& row) {
    const std::size_t bi = i / p.block;
    for (std::size_t t = p.block_start[bi]; t < p.block_start[bi + 1]; ++t)
      for (std::size_t j = p.blocks[t] * p.block; j < std::min(p.n, (p.blocks[t] + 1) * p.block); ++j)
        row.push_back(std::uint32_t(j));
  });
}

Mat pattern_mask(const SparsePattern& p) {
  Mat m = xt::full_like(Mat(xt::zeros<float>({p.rows, p.cols})), kNegInf);
  for (std::size_t i = 0; i < p.rows; ++i)
    for (std::size_t t = p.row_start[i]; t < p.row_start[i + 1]; ++t) m(i, p.keys[t]) = 0.0f;
  return m;
}

Mat sliding_window_mask(std::size_t n, std::size_t w, bool causal) { return pattern_mask(sliding_window_pattern(n, w, causal)); }

Mat sparse_attention(const Mat& q, const Mat& k, const Mat& v, const SparsePattern& p, float scale) {
  // q: (N, d), k: (S, d), v: (S, d_v) -> (N, d_v)
  const char* fn = "sparse_attention";
  check_qkv(fn, q, k, v);
  const std::size_t n = q.shape(0), d = q.shape(1), dv = v.shape(1);
  if (p.rows != n || p.cols != k.shape(0))
    shape_mismatch(fn, "q", shape_of(q), "pattern", {p.rows, p.cols}, "pattern must be (N, S)");
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  Mat out = xt::zeros<float>({n, dv});
  std::vector<float> w;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = p.row_start[i], e = p.row_start[i + 1];
    if (b == e) continue;  // sees nothing: zeros
    w.resize(e - b);
    const float* qi = q.data() + i * d;
    for (std::size_t t = b; t < e; ++t) {  // s_ij = scale · q_i · k_j, only for visible j
      const float* kj = k.data() + std::size_t(p.keys[t]) * d;
      float acc = 0.0f;
      for (std::size_t c = 0; c < d; ++c) acc += qi[c] * kj[c];
      w[t - b] = acc * scale;
    }
    softmax_row(w.data(), w.data(), nullptr, w.size());
    float* oi = out.data() + i * dv;
    for (std::size_t t = b; t < e; ++t) {
      const float a = w[t - b];
      const float* vj = v.data() + std::size_t(p.keys[t]) * dv;
      for (std::size_t c = 0; c < dv; ++c) oi[c] += a * vj[c];
    }
  }
  return out;
}

Mat sliding_window_attention(const Mat& q, const Mat& k, const Mat& v, std::size_t w, bool causal, float scale,
                             std::size_t block) {
  const char* fn = "sliding_window_attention";
  check_qkv(fn, q, k, v);
  const std::size_t n = q.shape(0), d = q.shape(1), dv = v.shape(1);
  if (k.shape(0) != n) shape_mismatch(fn, "q", shape_of(q), "k", shape_of(k), "need as many keys as queries");
  if (block == 0) block = 64;
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  Mat out = xt::zeros<float>({n, dv});
  if (w == 0) return out;
  const std::size_t span = block + (causal ? w - 1 : 2 * (w - 1));
  std::vector<float> s(block * span);
  for (std::size_t i0 = 0; i0 < n; i0 += block) {
    const std::size_t bq = std::min(block, n - i0);
    // The keys any row of the block may see: [lo, hi).
    const std::size_t lo = i0 + 1 >= w ? i0 + 1 - w : 0;
    const std::size_t hi = causal ? i0 + bq : std::min(n, i0 + bq + w - 1);
    const std::size_t nk = hi - lo;
    // S = scale · Q_block K[lo:hi]ᵀ   (bq × nk)
    sgemm(Op::N, Op::T, int(bq), int(nk), int(d), scale, q.data() + i0 * d, int(d), k.data() + lo * d, int(d), 0.0f,
          s.data(), int(nk));
    for (std::size_t r = 0; r < bq; ++r) {  // softmax over the row's own window only
      const std::size_t i = i0 + r;
      const std::size_t a = (i + 1 >= w ? i + 1 - w : 0) - lo;
      const std::size_t b = (causal ? i + 1 : std::min(n, i + w)) - lo;
      float* row = s.data() + r * nk;
      std::fill(row, row + a, 0.0f);
      softmax_row(row + a, row + a, nullptr, b - a);
      std::fill(row + b, row + nk, 0.0f);
    }
    // O_block = P V[lo:hi]
    sgemm(Op::N, Op::N, int(bq), int(dv), int(nk), 1.0f, s.data(), int(nk), v.data() + lo * dv, int(dv), 0.0f,
          out.data() + i0 * dv, int(dv));
  }
  return out;
}

Mat block_sparse_attention(const Mat& q, const Mat& k, const Mat& v, const BlockSparsePattern& p, float scale) {
  const char* fn = "block_sparse_attention";
  check_qkv(fn, q, k, v);
  const std::size_t n = q.shape(0), d = q.shape(1), dv = v.shape(1), b = p.block;
  if (p.n != n || k.shape(0) != n) shape_mismatch(fn, "q", shape_of(q), "pattern", {p.n, p.n}, "pattern must be (N, N)");
  if (scale <= 0.0f) scale = 1.0f / std::sqrt(float(d));
  Mat out = xt::zeros<float>({n, dv});
  std::vector<float> s(b * b);
  std::vector<OnlineSoftmaxState> st(b);
  for (std::size_t bi = 0; bi < p.num_blocks; ++bi) {
    const std::size_t i0 = bi * b, bq = std::min(b, n - i0);
    float* o = out.data() + i0 * dv;
    std::fill(st.begin(), st.end(), OnlineSoftmaxState{});
    for (std::size_t t = p.block_start[bi]; t < p.block_start[bi + 1]; ++t) {
      const std::size_t j0 = std::size_t(p.blocks[t]) * b, bk = std::min(b, n - j0);
      // S = scale · Q_I K_Jᵀ, then the online softmax: O_I = α O_I + P V_J
      sgemm(Op::N, Op::T, int(bq), int(bk), int(d), scale, q.data() + i0 * d, int(d), k.data() + j0 * d, int(d), 0.0f,
            s.data(), int(b));
      for (std::size_t r = 0; r < bq; ++r) {
        const float alpha = online_softmax_update(st[r], s.data() + r * b, bk, s.data() + r * b);
        for (std::size_t c = 0; c < dv; ++c) o[r * dv + c] *= alpha;
      }
      sgemm(Op::N, Op::N, int(bq), int(dv), int(bk), 1.0f, s.data(), int(b), v.data() + j0 * dv, int(dv), 1.0f, o, int(dv));
    }
    for (std::size_t r = 0; r < bq; ++r)
      for (std::size_t c = 0; c < dv; ++c) o[r * dv + c] = st[r].l > 0.0f ? o[r * dv + c] / st[r].l : 0.0f;
  }
  return out;
}

std::size_t sparse_attention_workspace_bytes(const SparsePattern& p) {
  // The index list (what the pattern costs to hold) plus one row of weights.
  std::size_t widest = 0;
  for (std::size_t i = 0; i < p.rows; ++i) widest = std::max(widest, p.row_start[i + 1] - p.row_start[i]);
  return p.keys.size() * sizeof(std::uint32_t) + p.row_start.size() * sizeof(std::size_t) + widest * sizeof(float);
}

std::size_t sliding_window_workspace_bytes(std::size_t w, bool causal, std::size_t block) {
  if (w == 0) return 0;
  return block * (block + (causal ? w - 1 : 2 * (w - 1))) * sizeof(float);
}

std::size_t block_sparse_workspace_bytes(const BlockSparsePattern& p) {
  return p.block * p.block * sizeof(float) + p.block * sizeof(OnlineSoftmaxState) +
         p.blocks.size() * sizeof(std::uint32_t) + p.block_start.size() * sizeof(std::size_t);
}

}  // namespace attn
