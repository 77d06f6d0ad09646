// Soft lookup and row permutation (see attn/studies/lookup.hpp).
#include "attn/studies/lookup.hpp"

#include <stdexcept>

#include "attn/tensor/softmax.hpp"

namespace attn {

SoftLookup soft_lookup(const Vec& query, const Mat& keys, const Mat& values, float tau) {
  // query: (d,), keys: (S, d), values: (S, d_v) -> output: (d_v,)
  if (query.size() != keys.shape(1)) shape_mismatch("soft_lookup", "query", shape_of(query), "keys", shape_of(keys), "need the same d");
  if (keys.shape(0) != values.shape(0)) shape_mismatch("soft_lookup", "keys", shape_of(keys), "values", shape_of(values), "need the same rows");
  if (!(tau > 0.0f)) throw std::invalid_argument("soft_lookup: temperature must be > 0");
  const std::size_t s = keys.shape(0), d = keys.shape(1), dv = values.shape(1);
  SoftLookup r;
  Vec scores = xt::zeros<float>({s});
  float best_score = 0.0f;
  for (std::size_t j = 0; j < s; ++j) {
    float dot = 0.0f;
    for (std::size_t i = 0; i < d; ++i) dot += query(i) * keys(j, i);
    if (j == 0 || dot > best_score) best_score = dot, r.best = j;
    scores(j) = dot / tau;
  }
  r.weights = xt::zeros<float>({s});
  softmax_row(r.weights.data(), scores.data(), nullptr, s);
  r.output = xt::zeros<float>({dv});
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t c = 0; c < dv; ++c) r.output(c) += r.weights(j) * values(j, c);
  return r;
}

Mat permute_rows(const Mat& x, const std::vector<std::size_t>& perm) {
  if (perm.size() != x.shape(0))
    throw ShapeError("permute_rows: permutation has " + std::to_string(perm.size()) + " entries, x has " +
                     std::to_string(x.shape(0)) + " rows");
  Mat out = xt::zeros<float>(x.shape());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] >= x.shape(0)) throw std::out_of_range("permute_rows: index out of range");
    xt::view(out, i, xt::all()) = xt::view(x, perm[i], xt::all());
  }
  return out;
}

}  // namespace attn
