// The parameter registry: every trainable tensor of a model, by name, with its gradient buffer.
// Optimisers, gradient clipping and checkpoints all work on a registry, so a model only has to
// say once what it is made of:
//   reg.add("encoder.embedding", emb, demb);  register_params(reg, "decoder.gru", gru, dgru);
// Entries keep raw pointers: do not resize a registered tensor afterwards.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

struct ParamEntry {
  std::string name;   // e.g. "decoder.gru.wh"
  Shape shape;        // e.g. (64, 192)
  std::size_t size;   // number of floats
  float* value;       // the parameter
  float* grad;        // its gradient (same shape), accumulated by backward passes
};

class ParamRegistry {
 public:
  // Register value and grad (same shape) under a unique name. Empty tensors (an absent bias) are
  // skipped. Throws std::invalid_argument on a duplicate name, ShapeError on differing shapes.
  template <std::size_t N>
  void add(const std::string& name, xt::xtensor<float, N>& value, xt::xtensor<float, N>& grad) {
    add_raw(name, shape_of(value), shape_of(grad), value.data(), grad.data());
  }

  const std::vector<ParamEntry>& entries() const { return entries_; }
  const ParamEntry* find(const std::string& name) const;
  std::size_t total_size() const;  // number of trainable floats
  void zero_grad();                // every gradient to 0 (before each backward pass)

 private:
  void add_raw(const std::string& name, const Shape& value_shape, const Shape& grad_shape, float* value,
               float* grad);
  std::vector<ParamEntry> entries_;
};

}  // namespace attn
