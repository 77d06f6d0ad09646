// Chapter 09 exercises — your file. Replace each `throw` with your code, then run
//   scripts/exercises check 09
// Tensors are xtensor containers: m(i, j) an element, xt::zeros<float>({r, c}) a new matrix.
#include "exercises.hpp"

#include <cmath>

#include "attn/present/exercise.hpp"

namespace ex09 {

// Exercise 09.1 — rmsnorm
// Hint: one number per row: r = 1/√(Σ_j x_ij² / d + eps); then y_ij = x_ij · r · γ_j.
// Hint: divide the sum of squares by d (a mean), not by d − 1, and put eps inside the square root.
attn::Mat rmsnorm(const attn::Mat& x, const attn::Vec& gamma, float eps) {
  throw attn::NotImplemented("09.1 rmsnorm: scale each row by 1/√(mean of its squares + eps), then by γ");
}

// Exercise 09.2 — decode_step
// Hint: dh = q.size() / n_heads. The angle of pair i is pos·10000^(−2i/dh): i counts pairs inside
// ONE head, so it restarts at 0 for every head.
// Hint: the key gets the same rotation as the query (same pos) before it is written to the cache;
// the cached rows 0 … pos − 1 were rotated when they were written, so leave them alone.
// Hint: query head h reads columns [g·dh, (g+1)·dh) of the caches with g = h / (n_heads / n_kv_heads),
// and sees pos + 1 keys (itself included).
attn::Vec decode_step(attn::Mat& k_cache, attn::Mat& v_cache, std::size_t pos, const attn::Vec& q,
                      const attn::Vec& k, const attn::Vec& v, std::size_t n_heads, std::size_t n_kv_heads) {
  throw attn::NotImplemented("09.2 decode_step: rotate q and k at pos, append k and v, attend over rows 0 … pos");
}

}  // namespace ex09
