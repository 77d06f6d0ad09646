// .npy reader and writer (see attn/data/npy.hpp). Format: magic "\x93NUMPY", version 1.0, a 2-byte
// little-endian header length, a Python-dict header padded with spaces to a multiple of 64
// bytes and ending in '\n', then the raw data.
#include "attn/data/npy.hpp"

#include <cstdint>
#include <cstring>
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
  if (bytes.size() < offset + header_len) throw NpyError(fmt::format("{}: truncated header", name));
  const std::string header = bytes.substr(offset, header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'")))
    throw NpyError(fmt::format("{}: header has no 'descr'", name));
  const std::string descr = m[1];
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True")))
    throw NpyError(fmt::format("{}: Fortran-order arrays are not supported; save with C order", name));
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw NpyError(fmt::format("{}: header has no 'shape'", name));
  NpyArray a;
  std::stringstream dims(m[1].str());
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    a.shape.push_back(std::stoull(item));
  }
  std::size_t width = 0;
  if (descr == "<f4") width = 4;
  else if (descr == "<f8") width = 8;
  else throw NpyError(fmt::format("{}: dtype '{}' is not supported (float32 '<f4' or float64 '<f8' expected)", name, descr));
  const std::size_t n = product(a.shape), data_at = offset + header_len;
  if (bytes.size() < data_at + n * width)
    throw NpyError(fmt::format("{}: truncated data: shape {} needs {} bytes, file has {}", name, shape_str(a.shape),
                               n * width, bytes.size() - data_at));
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
