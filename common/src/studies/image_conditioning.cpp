// Text-to-image cross-attention at toy size (see attn/studies/image_conditioning.hpp).
#include "attn/studies/image_conditioning.hpp"

#include <cmath>
#include <stdexcept>

#include <xtensor/xmanipulation.hpp>

#include "attn/attention/alignment.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/rng.hpp"

namespace attn {
namespace {

// The scene, one character per position: s sky, m moon, t tree, h house, g grass.
const char* const kScene[8] = {
    "sssssmms",
    "sssssmms",
    "ttssssss",
    "ttshhhhs",
    "ttghhhhg",
    "ttghhhhg",
    "gggggggg",
    "gggggggg",
};

// Solves A·X = B for a symmetric positive definite A (n, n) and B (n, m), in double (Cholesky).
MatD solve_spd(const MatD& a, const MatD& b) {
  const std::size_t n = a.shape(0), m = b.shape(1);
  MatD l = xt::zeros<double>({n, n});
  for (std::size_t j = 0; j < n; ++j) {
    double d = a(j, j);
    for (std::size_t k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
    if (!(d > 0.0)) throw std::runtime_error("image_conditioning_example: Gram matrix is not positive definite");
    l(j, j) = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a(i, j);
      for (std::size_t k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
      l(i, j) = s / l(j, j);
    }
  }
  MatD x = b;
  for (std::size_t c = 0; c < m; ++c) {
    for (std::size_t i = 0; i < n; ++i) {  // L·z = b
      for (std::size_t k = 0; k < i; ++k) x(i, c) -= l(i, k) * x(k, c);
      x(i, c) /= l(i, i);
    }
    for (std::size_t i = n; i-- > 0;) {  // Lᵀ·x = z
      for (std::size_t k = i + 1; k < n; ++k) x(i, c) -= l(k, i) * x(k, c);
      x(i, c) /= l(i, i);
    }
  }
  return x;
}

// a·b (b_t = false) or a·bᵀ (b_t = true), in double.
MatD mul(const MatD& a, const MatD& b, bool b_t = false) {
  const std::size_t n = a.shape(0), inner = a.shape(1), m = b_t ? b.shape(0) : b.shape(1);
  MatD c = xt::zeros<double>({n, m});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t t = 0; t < inner; ++t) c(i, j) += a(i, t) * (b_t ? b(j, t) : b(t, j));
  return c;
}

}  // namespace

ImageConditioning image_conditioning_example(std::uint64_t seed, const ImageConditioningConfig& cfg) {
  ImageConditioning ex;
  ex.words = {"sky", "moon", "tree", "house", "grass"};
  const std::size_t n_words = ex.words.size(), n_pos = ex.side * ex.side;
  if (cfg.d_latent < n_words || cfg.d_k < n_words)
    throw std::invalid_argument("image_conditioning_example: d_latent and d_k must be at least the number of words (5)");
  for (std::size_t r = 0; r < ex.side; ++r)
    for (std::size_t c = 0; c < ex.side; ++c) {
      const std::string letters = "smthg";
      ex.layout.push_back(int(letters.find(kScene[r][c])));
    }

  Rng rng(seed, /*stream=*/77);
  ex.text = word_vectors(ex.words, cfg.d_text, seed);             // (5, d_text)
  ex.w = init_cross_attention(rng, cfg.d_latent, cfg.d_text, cfg.d_k, cfg.d_v);
  ex.regions = rng.normal_mat(n_words, cfg.d_latent);              // c_w: (5, d_latent)

  // Clean queries that score gain·√d_k on their own key and 0 on the others:
  //   Q_t·Kᵀ = gain·√d_k·I  with  Q_t = gain·√d_k·(K·Kᵀ)⁻¹·K        (5, d_k)
  // and W_Q mapping each region vector onto its clean query, of least norm:
  //   C·W_Q = Q_t  with  W_Q = Cᵀ·(C·Cᵀ)⁻¹·Q_t                        (d_latent, d_k)
  const MatD k = gemm_reference(ex.text, ex.w.w_k);
  const MatD q_clean = solve_spd(mul(k, k, true), k) * (double(cfg.gain) * std::sqrt(double(cfg.d_k)));
  const MatD c = xt::cast<double>(ex.regions);
  const MatD w_q = mul(xt::transpose(c), solve_spd(mul(c, c, true), q_clean));
  ex.w.w_q = xt::cast<float>(w_q);

  // The latent grid: each position is its region's vector plus noise.
  ex.latent = Mat::from_shape({n_pos, cfg.d_latent});
  for (std::size_t p = 0; p < n_pos; ++p)
    for (std::size_t ch = 0; ch < cfg.d_latent; ++ch)
      ex.latent(p, ch) = ex.regions(std::size_t(ex.layout[p]), ch) + cfg.noise * rng.normal();

  ex.trace = cross_attention(ex.latent, ex.text, ex.w);  // weights: (64, 5)
  ex.reads = argmax_alignment(ex.trace.attn.weights);
  ex.hits = alignment_hits(ex.reads, ex.layout).hits;
  for (std::size_t p = 0; p < n_pos; ++p) ex.mean_own_weight += ex.trace.attn.weights(p, std::size_t(ex.layout[p]));
  ex.mean_own_weight /= double(n_pos);
  return ex;
}

std::vector<std::string> grid_letters(const std::vector<int>& cells, const Labels& words, std::size_t side) {
  if (cells.size() != side * side)
    throw ShapeError("grid_letters: " + std::to_string(cells.size()) + " cells do not fill a " + std::to_string(side) + "×" +
                     std::to_string(side) + " grid");
  std::vector<std::string> rows(side);
  for (std::size_t p = 0; p < cells.size(); ++p) {
    const std::size_t w = std::size_t(cells[p]);
    if (w >= words.size() || words[w].empty()) throw std::out_of_range("grid_letters: no word numbered " + std::to_string(w));
    rows[p / side] += words[w].substr(0, 1);
  }
  return rows;
}

}  // namespace attn
