// Numbers that describe attention weights (see attn/attention/attention_stats.hpp).
#include "attn/attention/attention_stats.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>

#include <xtensor-blas/xlinalg.hpp>

namespace attn {

namespace {
// The key position of query row i: queries are the last T_q of the T_k positions.
std::size_t query_pos(std::size_t i, std::size_t t_q, std::size_t t_k) { return i + t_k - std::min(t_q, t_k); }
}  // namespace

Vec attention_entropy(const Mat& p) {
  Vec h = xt::zeros<float>({p.shape(0)});
  for (std::size_t i = 0; i < p.shape(0); ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < p.shape(1); ++j) {
      const double w = p(i, j);
      if (w > 0.0) s -= w * std::log(w);  // 0·log 0 = 0: masked keys add nothing
    }
    h(i) = float(s);
  }
  return h;
}

std::vector<std::size_t> visible_keys(std::size_t t_q, std::size_t t_k, bool causal) {
  std::vector<std::size_t> n(t_q, t_k);
  if (!causal) return n;
  for (std::size_t i = 0; i < t_q; ++i) {
    const std::ptrdiff_t v = std::ptrdiff_t(i) + 1 + std::ptrdiff_t(t_k) - std::ptrdiff_t(t_q);
    n[i] = std::size_t(std::clamp<std::ptrdiff_t>(v, 0, std::ptrdiff_t(t_k)));
  }
  return n;
}

double mean_entropy(const Mat& p) {
  if (p.shape(0) == 0) return 0.0;
  const Vec h = attention_entropy(p);
  double s = 0.0;
  for (float x : h) s += x;
  return s / double(h.size());
}

double uniformity(const Mat& p, bool causal) {
  const Vec h = attention_entropy(p);
  const std::vector<std::size_t> n = visible_keys(p.shape(0), p.shape(1), causal);
  double s = 0.0;
  std::size_t rows = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (n[i] < 2) continue;  // one visible key: the row cannot be anything but "uniform"
    s += double(h(i)) / std::log(double(n[i]));
    ++rows;
  }
  return rows ? s / double(rows) : 0.0;
}

bool near_uniform(const Mat& p, bool causal, double tolerance) { return uniformity(p, causal) >= 1.0 - tolerance; }

double mean_attention_distance(const Mat& p) {
  const std::size_t tq = p.shape(0), tk = p.shape(1);
  if (tq == 0) return 0.0;
  double s = 0.0;
  for (std::size_t i = 0; i < tq; ++i) {
    const double pos = double(query_pos(i, tq, tk));
    for (std::size_t j = 0; j < tk; ++j) s += double(p(i, j)) * std::abs(pos - double(j));
  }
  return s / double(tq);
}

double previous_token_score(const Mat& p) {
  const std::size_t tq = p.shape(0), tk = p.shape(1);
  double s = 0.0;
  std::size_t rows = 0;
  for (std::size_t i = 0; i < tq; ++i) {
    const std::size_t pos = query_pos(i, tq, tk);
    if (pos == 0) continue;
    s += p(i, pos - 1);
    ++rows;
  }
  return rows ? s / double(rows) : 0.0;
}

double prefix_matching_score(const Mat& p, const std::vector<int>& tokens) {
  const std::size_t tq = p.shape(0), tk = p.shape(1);
  expect_shape("prefix_matching_score", "p", shape_of(p), {0, tokens.size()});
  double s = 0.0;
  std::size_t rows = 0;
  for (std::size_t i = 0; i < tq; ++i) {
    const std::size_t pos = query_pos(i, tq, tk);
    double row = 0.0;
    bool found = false;
    for (std::size_t j = 0; j < pos; ++j)
      if (tokens[j] == tokens[pos]) {  // an earlier copy at j: its successor j + 1 (≤ pos) is the target
        row += p(i, j + 1);
        found = true;
      }
    if (found) {
      s += row;
      ++rows;
    }
  }
  return rows ? s / double(rows) : 0.0;
}

std::size_t prefix_matching_rows(std::size_t t_q, const std::vector<int>& tokens) {
  const std::size_t tk = tokens.size();
  std::size_t rows = 0;
  for (std::size_t i = 0; i < t_q; ++i) {
    const std::size_t pos = query_pos(i, t_q, tk);
    for (std::size_t j = 0; j < pos; ++j)
      if (tokens[j] == tokens[pos]) {
        ++rows;
        break;
      }
  }
  return rows;
}

double copying_score(const Mat& m) {
  expect_shape("copying_score", "m", shape_of(m), {m.shape(0), m.shape(0)});
  if (m.size() == 0) return 0.0;
  // LAPACK's geev on a NaN or infinity corrupts the heap (a double free) instead of failing.
  for (std::size_t i = 0; i < m.shape(0); ++i)
    for (std::size_t j = 0; j < m.shape(1); ++j)
      if (!std::isfinite(m(i, j)))
        throw std::domain_error("copying_score: the matrix holds " + std::to_string(m(i, j)) + " at (" +
                                std::to_string(i) + ", " + std::to_string(j) +
                                "): its weights are non-finite or too large (1e38?) for float");
  xt::xtensor<double, 2> md = xt::cast<double>(m);
  const auto eig = xt::linalg::eig(md);  // (eigenvalues, eigenvectors) via LAPACK geev
  const auto& lambda = std::get<0>(eig);
  double re = 0.0, mag = 0.0;
  for (const auto& l : lambda) {
    re += l.real();
    mag += std::abs(l);
  }
  return mag > 0.0 ? re / mag : 0.0;
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    throw ShapeError("kendall_tau: a has " + std::to_string(a.size()) + " values, b " + std::to_string(b.size()));
  // τ_b = (concordant − discordant) / √((n0 − ties_a)(n0 − ties_b)), pairs tied in both count in neither.
  double conc = 0.0, disc = 0.0, ties_a = 0.0, ties_b = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0.0 && db == 0.0) continue;
      if (da == 0.0) ties_a += 1.0;
      else if (db == 0.0) ties_b += 1.0;
      else if ((da > 0.0) == (db > 0.0)) conc += 1.0;
      else disc += 1.0;
    }
  const double den = std::sqrt((conc + disc + ties_a) * (conc + disc + ties_b));
  return den > 0.0 ? (conc - disc) / den : 0.0;
}

double total_variation(const Vec& p, const Vec& q) {
  expect_same_shape("total_variation", "p", p, "q", q);
  double s = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) s += std::abs(double(p(i)) - double(q(i)));
  return 0.5 * s;
}

double mean_total_variation(const Mat& p, const Mat& q) {
  expect_same_shape("mean_total_variation", "p", p, "q", q);
  if (p.shape(0) == 0) return 0.0;
  double s = 0.0;
  for (std::size_t i = 0; i < p.shape(0); ++i)
    for (std::size_t j = 0; j < p.shape(1); ++j) s += std::abs(double(p(i, j)) - double(q(i, j)));
  return 0.5 * s / double(p.shape(0));
}

}  // namespace attn

namespace attn {

Tensor4 stack_layers(const std::vector<Tensor3>& layers) {
  if (layers.empty()) return Tensor4::from_shape({0, 0, 0, 0});
  const Shape s = shape_of(layers[0]);
  Tensor4 out = Tensor4::from_shape({layers.size(), s[0], s[1], s[2]});
  for (std::size_t l = 0; l < layers.size(); ++l) {
    expect_shape("stack_layers", "layer", shape_of(layers[l]), s);
    std::copy(layers[l].begin(), layers[l].end(), out.begin() + std::ptrdiff_t(l * layers[0].size()));
  }
  return out;
}

}  // namespace attn
