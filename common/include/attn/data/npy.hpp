// NumPy .npy files (format version 1.0): what --export writes and what the golden tests read.
// Writing: float32, C order, little-endian. Reading: float32 or float64 (returned as double),
// C order; anything else — Fortran order, another dtype, a shape that is not a tuple of
// non-negative integers or whose element count overflows, a truncated file or bytes left over —
// throws NpyError naming the file and what is wrong.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  Shape shape;
  std::vector<double> data;  // C order
  std::size_t size() const { return data.size(); }
};

// The bytes of a .npy file holding float32 values in C order with the given shape.
std::string npy_bytes(const float* data, const Shape& shape);
void write_npy(const std::string& path, const float* data, const Shape& shape);

NpyArray read_npy(const std::string& path);
NpyArray parse_npy(const std::string& bytes, const std::string& name_for_errors);

// Converters that check the rank (and throw NpyError naming the file otherwise).
Vec npy_to_vec(const NpyArray& a, const std::string& name);
Mat npy_to_mat(const NpyArray& a, const std::string& name);
Tensor3 npy_to_tensor3(const NpyArray& a, const std::string& name);

// Throws NpyError naming the file unless a's shape is want (kAnyDim matches any size), e.g.
// expect_npy_shape(x, {kAnyDim, 16}, "golden/mha/X.npy").
constexpr std::size_t kAnyDim = std::size_t(-1);
void expect_npy_shape(const NpyArray& a, const std::vector<std::size_t>& want, const std::string& name);

}  // namespace attn
