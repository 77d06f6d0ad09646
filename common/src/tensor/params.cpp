// Parameter registry (see attn/tensor/params.hpp).
#include "attn/tensor/params.hpp"

#include <algorithm>
#include <stdexcept>

namespace attn {

void ParamRegistry::add_raw(const std::string& name, const Shape& value_shape, const Shape& grad_shape,
                            float* value, float* grad) {
  if (value_shape != grad_shape)
    shape_mismatch("ParamRegistry::add", ("'" + name + "' value").c_str(), value_shape, "grad", grad_shape,
                   "must match");
  if (find(name)) throw std::invalid_argument("ParamRegistry::add: duplicate parameter name '" + name + "'");
  std::size_t size = 1;
  for (auto d : value_shape) size *= d;
  if (size == 0) return;  // an absent (empty) tensor, e.g. no bias
  entries_.push_back(ParamEntry{name, value_shape, size, value, grad});
}

const ParamEntry* ParamRegistry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::size_t ParamRegistry::total_size() const {
  std::size_t n = 0;
  for (const auto& e : entries_) n += e.size;
  return n;
}

void ParamRegistry::zero_grad() {
  for (auto& e : entries_) std::fill(e.grad, e.grad + e.size, 0.0f);
}

}  // namespace attn
