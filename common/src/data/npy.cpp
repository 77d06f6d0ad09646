// .npy reader and writer (see attn/data/npy.hpp). Format: magic "\x93NUMPY", version 1.0, a 2-byte
// little-endian header length, a Python-dict header padded with spaces to a multiple of 64
// bytes and ending in '\n', then the raw data.
#include "attn/data/npy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace attn {

namespace {
const char kMagic[] = "\x93NUMPY";

std::string shape_tuple(const Shape& shape) {
  if (shape.empty()) return "()";
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::size_t product(const Shape& s) {
  std::size_t n = 1;
  for (auto d : s) n *= d;
  return n;
}
}  // namespace

std::string npy_bytes(const float* data, const Shape& shape) {
  static_assert(sizeof(float) == 4, "float32 expected");
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", shape_tuple(shape));
  // magic(6) + version(2) + len(2) + header + '\n' must be a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>((header.size() >> 8) & 0xff));
  out += header;
  const std::size_t n = product(shape);
  out.append(reinterpret_cast<const char*>(data), n * sizeof(float));  // x86-64/ARM: little-endian
  return out;
}

void write_npy(const std::string& path, const float* data, const Shape& shape) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw NpyError(fmt::format("cannot open {} for writing: {}", path, std::strerror(errno)));
  const std::string bytes = npy_bytes(data, shape);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw NpyError(fmt::format("could not write {} (disk full?)", path));
}

namespace {
std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// One dimension of the 'shape' tuple: decimal digits only, at most 2^62 (xtensor's strides are
// signed 64-bit, and a product of dims is checked separately).
std::size_t parse_dim(const std::string& item, const std::string& tuple, const std::string& name) {
  const std::string t = trim(item);
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
    throw NpyError(fmt::format("{}: shape ({}) holds '{}', not a non-negative integer", name, tuple, t));
  if (t.size() > 19) throw NpyError(fmt::format("{}: shape ({}) has a dimension too large ({})", name, tuple, t));
  const unsigned long long v = std::stoull(t);
  if (v > (1ull << 62)) throw NpyError(fmt::format("{}: shape ({}) has a dimension too large ({})", name, tuple, t));
  return std::size_t(v);
}
}  // namespace

NpyArray parse_npy(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw NpyError(fmt::format("{}: not a .npy file (bad magic)", name));
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw NpyError(fmt::format("{}: truncated header", name));
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= std::size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    throw NpyError(fmt::format("{}: unsupported .npy version {}", name, major));
  }
  if (bytes.size() - offset < header_len) throw NpyError(fmt::format("{}: truncated header", name));
  const std::string header = bytes.substr(offset, header_len);
  if (header.find('{') == std::string::npos || header.find('}') == std::string::npos)
    throw NpyError(fmt::format("{}: the header is not a Python dict", name));
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")))
    throw NpyError(fmt::format("{}: header has no 'descr'", name));
  const std::string descr = m[1];
  if (!std::regex_search(header, m, std::regex("'fortran_order':\\s*(True|False)\\b")))
    throw NpyError(fmt::format("{}: header has no 'fortran_order' (True or False)", name));
  if (m[1] == "True")
    throw NpyError(fmt::format("{}: Fortran-order arrays are not supported; save with C order", name));
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw NpyError(fmt::format("{}: header has no 'shape'", name));
  std::size_t width = 0;
  if (descr == "<f4") width = 4;
  else if (descr == "<f8") width = 8;
  else if (descr == ">f4" || descr == ">f8")
    throw NpyError(fmt::format("{}: dtype '{}' is big-endian; little-endian '<f4' or '<f8' expected", name, descr));
  else throw NpyError(fmt::format("{}: dtype '{}' is not supported (float32 '<f4' or float64 '<f8' expected)", name, descr));
  NpyArray a;
  const std::string tuple = m[1].str();
  std::stringstream dims(tuple);
  std::string item;
  std::size_t items = 0, commas = std::size_t(std::count(tuple.begin(), tuple.end(), ','));
  while (std::getline(dims, item, ',')) {
    ++items;
    // Python's tuples may end in a comma ("(4,)"); an empty item is allowed only there.
    if (trim(item).empty() && items == commas + 1 && commas > 0) continue;
    a.shape.push_back(parse_dim(item, tuple, name));
    if (a.shape.size() > 32) throw NpyError(fmt::format("{}: shape ({}) has more than 32 dimensions", name, tuple));
  }
  // The element count, and the bytes it needs, must not wrap: (2^60, 16) is not 0 elements.
  std::size_t n = 1, nonzero = 1;
  bool any_zero = false;
  for (std::size_t d : a.shape) {
    if (d == 0) any_zero = true;
    else if (__builtin_mul_overflow(nonzero, d, &nonzero) || nonzero > (std::size_t(1) << 62) / width)
      throw NpyError(fmt::format("{}: shape {} has more elements than any file can hold", name, shape_str(a.shape)));
  }
  n = any_zero ? 0 : nonzero;
  const std::size_t data_at = offset + header_len, need = n * width, have = bytes.size() - data_at;
  if (have < need)
    throw NpyError(fmt::format("{}: truncated data: shape {} needs {} bytes, file has {}", name, shape_str(a.shape),
                               need, have));
  if (have > need)
    throw NpyError(fmt::format("{}: {} bytes after the data that shape {} needs ({} bytes)", name, have - need,
                               shape_str(a.shape), need));
  a.data.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (width == 4) {
      float v;
      std::memcpy(&v, bytes.data() + data_at + 4 * i, 4);
      a.data[i] = v;
    } else {
      std::memcpy(&a.data[i], bytes.data() + data_at + 8 * i, 8);
    }
  }
  return a;
}

NpyArray read_npy(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw NpyError(fmt::format("{}: not a regular file", path));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw NpyError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_npy(ss.str(), path);
}

namespace {
void expect_rank(const NpyArray& a, std::size_t rank, const std::string& name) {
  if (a.shape.size() != rank)
    throw NpyError(fmt::format("{}: expected a {}-d array, got shape {}", name, rank, shape_str(a.shape)));
}
}  // namespace

void expect_npy_shape(const NpyArray& a, const std::vector<std::size_t>& want, const std::string& name) {
  bool ok = a.shape.size() == want.size();
  std::vector<std::string> w;
  for (std::size_t i = 0; i < want.size(); ++i) {
    w.push_back(want[i] == kAnyDim ? "any" : std::to_string(want[i]));
    if (ok && want[i] != kAnyDim && a.shape[i] != want[i]) ok = false;
  }
  if (!ok)
    throw NpyError(fmt::format("{}: expected shape ({}{}), got {}", name, fmt::join(w, ", "), w.size() == 1 ? "," : "",
                               shape_str(a.shape)));
}

Vec npy_to_vec(const NpyArray& a, const std::string& name) {
  expect_rank(a, 1, name);
  Vec v = xt::zeros<float>({a.shape[0]});
  for (std::size_t i = 0; i < a.size(); ++i) v.data()[i] = float(a.data[i]);
  return v;
}

Mat npy_to_mat(const NpyArray& a, const std::string& name) {
  expect_rank(a, 2, name);
  Mat m = xt::zeros<float>({a.shape[0], a.shape[1]});
  for (std::size_t i = 0; i < a.size(); ++i) m.data()[i] = float(a.data[i]);
  return m;
}

Tensor3 npy_to_tensor3(const NpyArray& a, const std::string& name) {
  expect_rank(a, 3, name);
  Tensor3 t = xt::zeros<float>({a.shape[0], a.shape[1], a.shape[2]});
  for (std::size_t i = 0; i < a.size(); ++i) t.data()[i] = float(a.data[i]);
  return t;
}

}  // namespace attn
