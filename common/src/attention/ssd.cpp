// The selective state-space layer three ways, and the delta rule (see attn/attention/ssd.hpp).
#include "attn/attention/ssd.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/tensor/blas.hpp"

namespace attn {

namespace {

// x (T, P), b (T, N), c (T, N), log_a (T,): every form checks the same contract.
void check_ssd(const char* fn, const Mat& x, const Mat& b, const Mat& c, const Vec& log_a) {
  const std::size_t t = x.shape(0);
  if (b.shape(0) != t) shape_mismatch(fn, "b", shape_of(b), "x", shape_of(x), "need one row per token");
  expect_shape(fn, "c", shape_of(c), {t, b.shape(1)});
  expect_shape(fn, "log_a", shape_of(log_a), {t});
  for (float la : log_a)
    if (!(la <= 0.0f)) throw std::invalid_argument(std::string(fn) + ": log_a must be ≤ 0 (a decay a = exp(log_a) ≤ 1), got " + std::to_string(la));
}

// Rows [t0, t0 + q) of m, as a matrix of their own.
Mat block_rows(const Mat& m, std::size_t t0, std::size_t q) {
  Mat out = Mat::from_shape({q, m.shape(1)});
  std::copy(&m(t0, 0), &m(t0, 0) + q * m.shape(1), out.begin());
  return out;
}

}  // namespace

Mat ssd_decay_mask(const Vec& log_a) {
  const std::size_t n = log_a.size();
  Mat l = xt::zeros<float>({n, n});
  for (std::size_t t = 0; t < n; ++t) {
    double seg = 0.0;  // log_a_{s+1} + … + log_a_t, grown as s walks down from t
    for (std::size_t s = t + 1; s-- > 0;) {
      l(t, s) = float(std::exp(seg));
      seg += log_a(s);
    }
  }
  return l;
}

Vec ssd_scan_step(Mat& state, float a, const Vec& b, const Vec& c, const Vec& x) {
  const std::size_t n = state.shape(0), p = state.shape(1);
  if (b.size() != n || c.size() != n || x.size() != p)
    shape_mismatch("ssd_scan_step", "state", shape_of(state), "b/c/x", {b.size(), c.size(), x.size()},
                   "b and c need N = state rows, x needs P = state columns");
  Vec y = xt::zeros<float>({p});
  for (std::size_t i = 0; i < n; ++i) {
    float* h = &state(i, 0);
    const float bi = b(i), ci = c(i);
    for (std::size_t j = 0; j < p; ++j) {
      h[j] = a * h[j] + bi * x(j);  // h_t = a_t·h_{t−1} + B_t x_tᵀ
      y(j) += ci * h[j];            // y_t = h_tᵀ C_t
    }
  }
  return y;
}

Mat ssd_scan(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a, Mat* final_state) {
  check_ssd("ssd_scan", x, b, c, log_a);
  const std::size_t t_len = x.shape(0), n = b.shape(1), p = x.shape(1);
  Mat h = xt::zeros<float>({n, p});
  Mat y = xt::zeros<float>({t_len, p});
  for (std::size_t t = 0; t < t_len; ++t) {
    const float a = std::exp(log_a(t));
    float* yt = &y(t, 0);
    for (std::size_t i = 0; i < n; ++i) {
      float* hi = &h(i, 0);
      const float bi = b(t, i), ci = c(t, i);
      const float* xt_row = &x(t, 0);
      for (std::size_t j = 0; j < p; ++j) {
        hi[j] = a * hi[j] + bi * xt_row[j];
        yt[j] += ci * hi[j];
      }
    }
  }
  if (final_state) *final_state = h;
  return y;
}

Mat ssd_quadratic(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a) {
  check_ssd("ssd_quadratic", x, b, c, log_a);
  Mat m = matmul(c, b, Op::N, Op::T);  // C Bᵀ: (T, T), "scores" of query t against key s
  m *= ssd_decay_mask(log_a);          // L ∘ C Bᵀ: the causal decay mask replaces the softmax
  return matmul(m, x);                 // (T, T)·(T, P)
}

Mat ssd_chunked(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a, std::size_t chunk) {
  check_ssd("ssd_chunked", x, b, c, log_a);
  if (chunk == 0) throw std::invalid_argument("ssd_chunked: chunk must be ≥ 1");
  const std::size_t t_len = x.shape(0), n = b.shape(1), p = x.shape(1);
  Mat y = xt::zeros<float>({t_len, p});
  Mat h = xt::zeros<float>({n, p});  // H_{c−1}: the state entering the block
  for (std::size_t t0 = 0; t0 < t_len; t0 += chunk) {
    const std::size_t q = std::min(chunk, t_len - t0);
    const Mat xb = block_rows(x, t0, q), bb = block_rows(b, t0, q), cb = block_rows(c, t0, q);
    Vec lab = Vec::from_shape({q});
    std::copy(&log_a(t0), &log_a(t0) + q, lab.begin());
    // cum_r = log_a_{t0} + … + log_a_{t0+r}: decay from the block start (before t0) to row r
    std::vector<double> cum(q);
    double run = 0.0;
    for (std::size_t r = 0; r < q; ++r) cum[r] = run += lab(r);
    // 1. inside the block: Y_diag = (L ∘ C Bᵀ) X
    Mat yb = ssd_quadratic(xb, bb, cb, lab);
    // 4. from earlier blocks: y_r += exp(cum_r) · C_rᵀ H_{c−1}
    if (t0 > 0) {
      Mat ch = matmul(cb, h);  // (q, N)·(N, P)
      for (std::size_t r = 0; r < q; ++r) {
        const float dec = float(std::exp(cum[r]));
        for (std::size_t j = 0; j < p; ++j) yb(r, j) += dec * ch(r, j);
      }
    }
    std::copy(yb.begin(), yb.end(), &y(t0, 0));
    // 2. the block's own state at its end: Σ_r exp(cum_{q−1} − cum_r) B_r x_rᵀ
    Mat bw = bb;
    for (std::size_t r = 0; r < q; ++r) {
      const float dec = float(std::exp(cum[q - 1] - cum[r]));
      for (std::size_t i = 0; i < n; ++i) bw(r, i) *= dec;
    }
    // 3. across blocks: H_c = exp(cum_{q−1})·H_{c−1} + Bwᵀ X
    gemm(h, bw, xb, Op::T, Op::N, 1.0f, float(std::exp(cum[q - 1])));
  }
  return y;
}

MatD ssd_reference(const Mat& x, const Mat& b, const Mat& c, const Vec& log_a) {
  check_ssd("ssd_reference", x, b, c, log_a);
  const std::size_t t_len = x.shape(0), n = b.shape(1), p = x.shape(1);
  std::vector<double> h(n * p, 0.0);
  MatD y = xt::zeros<double>({t_len, p});
  for (std::size_t t = 0; t < t_len; ++t) {
    const double a = std::exp(double(log_a(t)));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < p; ++j) {
        double& hij = h[i * p + j];
        hij = a * hij + double(b(t, i)) * double(x(t, j));
        y(t, j) += double(c(t, i)) * hij;
      }
  }
  return y;
}

Mat delta_rule_scan(const Mat& q, const Mat& k, const Mat& v, const Vec& beta) {
  const std::size_t t_len = q.shape(0), n = q.shape(1), p = v.shape(1);
  expect_shape("delta_rule_scan", "k", shape_of(k), {t_len, n});
  expect_shape("delta_rule_scan", "v", shape_of(v), {t_len, 0});
  expect_shape("delta_rule_scan", "beta", shape_of(beta), {t_len});
  Mat s = xt::zeros<float>({n, p});
  Mat y = xt::zeros<float>({t_len, p});
  std::vector<float> err(p);
  for (std::size_t t = 0; t < t_len; ++t) {
    // err = v_t − S_{t−1}ᵀ k_t: what the state would read at k_t, subtracted from what it should hold
    for (std::size_t j = 0; j < p; ++j) {
      float read = 0.0f;
      for (std::size_t i = 0; i < n; ++i) read += s(i, j) * k(t, i);
      err[j] = v(t, j) - read;
    }
    for (std::size_t i = 0; i < n; ++i)  // S_t = S_{t−1} + β_t k_t errᵀ
      for (std::size_t j = 0; j < p; ++j) s(i, j) += beta(t) * k(t, i) * err[j];
    for (std::size_t j = 0; j < p; ++j) {  // y_t = S_tᵀ q_t
      float out = 0.0f;
      for (std::size_t i = 0; i < n; ++i) out += s(i, j) * q(t, i);
      y(t, j) = out;
    }
  }
  return y;
}

}  // namespace attn
