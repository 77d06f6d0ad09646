// The parameter registry: every trainable tensor of a model, by name, with its gradient buffer.
// Optimisers, gradient clipping and checkpoints all work on a registry, so a model only has to
// say once what it is made of:
//   reg.add("encoder.embedding", emb, demb);  register_params(reg, "decoder.gru", gru, dgru);
// Entries keep raw pointers: do not resize a registered tensor afterwards.
//
// A layer names its parameters once, in a visitor beside it: visit_params(layer, prefix, f) calls
// f(name, tensor) for each, in checkpoint order, on a const or non-const layer of float or double
// (the gradient checks walk double models with it). register_params, parameter counts and
// checkpoints are all built on these visitors, so a name is written in one place.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
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

// is_layer<P, L>: P is L<T> or const L<T> for some T — what picks a layer's visit_params overload:
//   template <class P, class F, if_layer<P, LinearT> = 0> void visit_params(P& p, const std::string&, F&&);
template <class P, template <class> class L> struct is_layer : std::false_type {};
template <class T, template <class> class L> struct is_layer<L<T>, L> : std::true_type {};
template <class T, template <class> class L> struct is_layer<const L<T>, L> : std::true_type {};
template <class P, template <class> class L> using if_layer = std::enable_if_t<is_layer<P, L>::value, int>;

class ParamRegistry {
 public:
  // Register value and grad (same shape) under a unique name. Empty tensors (an absent bias) are
  // skipped. Throws std::invalid_argument on a duplicate name, ShapeError on differing shapes.
  template <std::size_t N>
  void add(const std::string& name, xt::xtensor<float, N>& value, xt::xtensor<float, N>& grad) {
    add_raw(name, shape_of(value), shape_of(grad), value.data(), grad.data());
  }

  // The same with raw pointers (what register_visited uses).
  void add_raw(const std::string& name, const Shape& value_shape, const Shape& grad_shape, float* value,
               float* grad);

  const std::vector<ParamEntry>& entries() const { return entries_; }
  const ParamEntry* find(const std::string& name) const;
  std::size_t total_size() const;  // number of trainable floats
  void zero_grad();                // every gradient to 0 (before each backward pass)

 private:
  std::vector<ParamEntry> entries_;
};

// Registers every tensor that visit(value, f) names, each with the tensor that visit(grad, f)
// names at the same place. visit: [&](auto& layer, auto&& f) { visit_params(layer, prefix, f); }
template <class M, class Visit>
void register_visited(ParamRegistry& reg, M& value, M& grad, Visit visit) {
  std::vector<std::pair<float*, Shape>> grads;
  visit(grad, [&](const std::string&, auto& t) { grads.emplace_back(t.data(), shape_of(t)); });
  std::size_t i = 0;
  visit(value, [&](const std::string& name, auto& t) {
    reg.add_raw(name, shape_of(t), grads.at(i).second, t.data(), grads.at(i).first);
    ++i;
  });
}

}  // namespace attn
