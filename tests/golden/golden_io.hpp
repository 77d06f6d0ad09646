// Reading the golden files (data/golden/<group>/<name>.npy, written by gen_golden.py) and
// comparing our float32 results with PyTorch's float64 expectations.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "attn/data/npy.hpp"

namespace golden_io {

inline attn::NpyArray load(const std::string& group, const std::string& name) {
  return attn::read_npy(std::string(ATTN_DATA_DIR) + "/golden/" + group + "/" + name + ".npy");
}
inline attn::Mat mat(const std::string& group, const std::string& name) { return attn::npy_to_mat(load(group, name), name); }
inline attn::Vec vec(const std::string& group, const std::string& name) { return attn::npy_to_vec(load(group, name), name); }
inline attn::Tensor3 tensor3(const std::string& group, const std::string& name) {
  return attn::npy_to_tensor3(load(group, name), name);
}

// max |ours − want| after checking that the shapes agree (a shape mismatch fails the test).
template <class C>
double max_err(const C& ours, const attn::NpyArray& want) {
  REQUIRE(attn::shape_of(ours) == want.shape);
  double e = 0.0;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const double d = std::abs(double(ours.data()[i]) - want.data[i]);
    if (std::isnan(d)) return INFINITY;
    e = std::max(e, d);
  }
  return e;
}

}  // namespace golden_io
