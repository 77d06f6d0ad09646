// Shape strings and shape-contract errors (see attn/tensor/tensor.hpp).
#include "attn/tensor/tensor.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace attn {

std::string shape_str(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

void expect_shape(const char* fn, const char* what, const Shape& got, const Shape& expected) {
  bool ok = got.size() == expected.size();
  for (std::size_t i = 0; ok && i < got.size(); ++i) ok = expected[i] == 0 || got[i] == expected[i];
  if (ok) return;
  std::vector<std::string> want;
  for (auto e : expected) want.push_back(e == 0 ? "*" : std::to_string(e));
  throw ShapeError(fmt::format("{}: {} has shape {}, expected ({})", fn, what, shape_str(got),
                               fmt::join(want, ", ")));
}

void shape_mismatch(const char* fn, const char* a, const Shape& sa, const char* b, const Shape& sb,
                    const std::string& reason) {
  throw ShapeError(fmt::format("{}: {} {} and {} {} {}", fn, a, shape_str(sa), b, shape_str(sb), reason));
}

}  // namespace attn
