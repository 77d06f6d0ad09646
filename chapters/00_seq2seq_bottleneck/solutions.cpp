// Chapter 00 — worked solutions in plain loops. (The library's GRU, common/src/nn/gru.cpp, does the
// same for a whole batch with two matrix products per step.)
#include <cmath>

#include "exercises.hpp"

namespace ex00 {

attn::Vec gru_step(const attn::Vec& x, const attn::Vec& h, const attn::Mat& wx, const attn::Mat& wh,
                   const attn::Vec& bx, const attn::Vec& bh) {
  const std::size_t d = x.size(), hid = h.size();
  attn::Vec a = bx, b = bh;  // a = x·Wx + bx, b = h·Wh + bh, both (3H,)
  for (std::size_t k = 0; k < 3 * hid; ++k) {
    for (std::size_t i = 0; i < d; ++i) a(k) += x(i) * wx(i, k);
    for (std::size_t i = 0; i < hid; ++i) b(k) += h(i) * wh(i, k);
  }
  auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  attn::Vec out = xt::zeros<float>({hid});
  for (std::size_t j = 0; j < hid; ++j) {
    const float r = sigmoid(a(j) + b(j));
    const float z = sigmoid(a(hid + j) + b(hid + j));
    const float n = std::tanh(a(2 * hid + j) + r * b(2 * hid + j));
    out(j) = (1.0f - z) * n + z * h(j);
  }
  return out;
}

double token_accuracy(const std::vector<std::string>& hyp, const std::vector<std::string>& ref) {
  if (ref.empty()) return hyp.empty() ? 1.0 : 0.0;
  std::size_t hits = 0;
  for (std::size_t i = 0; i < ref.size() && i < hyp.size(); ++i) hits += hyp[i] == ref[i];
  return double(hits) / double(ref.size());
}

}  // namespace ex00
