// Chapter 10 — worked solutions in plain loops. (The library's versions are in
// common/src/attention/attention_stats.cpp.)
#include <cmath>

#include "exercises.hpp"

namespace ex10 {

attn::Vec attention_entropy(const attn::Mat& p) {
  attn::Vec h = xt::zeros<float>({p.shape(0)});
  for (std::size_t i = 0; i < p.shape(0); ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < p.shape(1); ++j)
      if (p(i, j) > 0.0f) s -= double(p(i, j)) * std::log(double(p(i, j)));
    h(i) = float(s);
  }
  return h;
}

double prefix_matching_score(const attn::Mat& p, const std::vector<int>& tokens) {
  double total = 0.0;
  std::size_t rows = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    double row = 0.0;
    bool seen = false;
    for (std::size_t j = 0; j < i; ++j)
      if (tokens[j] == tokens[i]) {
        row += p(i, j + 1);
        seen = true;
      }
    if (seen) {
      total += row;
      ++rows;
    }
  }
  return rows ? total / double(rows) : 0.0;
}

}  // namespace ex10
