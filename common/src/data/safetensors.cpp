// safetensors reader and writer with full validation (see attn/data/safetensors.hpp).
#include "attn/data/safetensors.hpp"

#include "attn/data/data_files.hpp"
#include "attn/data/json_fields.hpp"
#include "attn/data/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <nlohmann/json.hpp>

namespace attn {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // 100 MiB, the safetensors library's own limit

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw SafetensorsError("checkpoint " + shown_path(path) + ": " + what);  // which file, then what is wrong
}

bool host_is_little_endian() {
  const std::uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

std::size_t numel(const Shape& s) {
  std::size_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string stamp(std::string_view bytes) { return std::string(kChecksumScheme) + fnv1a64_hex(bytes); }

// The header's fingerprint covers the header as JSON with the two checksum entries taken out (and
// __metadata__ with them when nothing else is left), written compactly with keys sorted: the same
// text for the same header whatever order or spacing a writer used.
std::string canonical_header(nlohmann::json header) {
  if (header.contains("__metadata__") && header["__metadata__"].is_object()) {
    auto& meta = header["__metadata__"];
    meta.erase(std::string(kChecksumDataKey));
    meta.erase(std::string(kChecksumHeaderKey));
    if (meta.empty()) header.erase("__metadata__");
  }
  return header.dump();
}

}  // namespace

std::string safetensors_data_checksum(std::string_view data) { return stamp(data); }

std::string safetensors_bytes(const TensorMap& tensors, const Metadata& metadata, const std::string& path) {
  if (!host_is_little_endian()) fail(path, "writing needs a little-endian host");
  for (const char* key : {kChecksumDataKey, kChecksumHeaderKey})
    if (metadata.count(key)) fail(path, std::string("the __metadata__ key '") + key + "' is reserved for the checksum");
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail(path, "'__metadata__' is reserved and cannot name a tensor");
    if (numel(t.shape) != t.data.size())
      fail(path, "tensor '" + name + "' has " + std::to_string(t.data.size()) + " values for shape " +
                     shape_str(t.shape));
    const std::uint64_t bytes = t.data.size() * sizeof(float);
    header[name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string data;
  data.reserve(offset);
  for (const auto& [name, t] : tensors)
    data.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  // Both fingerprints go into __metadata__ (first the data's, then the rest of the header's), so a
  // reader can tell a file changed after it was written: one flipped byte, or halves of two files.
  const std::string header_sum = stamp(canonical_header(nlohmann::json::parse(header.dump())));
  header["__metadata__"][kChecksumDataKey] = stamp(data);
  header["__metadata__"][kChecksumHeaderKey] = header_sum;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // pad so that the data starts 8-byte aligned
  const std::uint64_t n = text.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));  // little-endian

  std::string bytes(reinterpret_cast<const char*>(len), 8);
  bytes += text;
  bytes += data;
  return bytes;
}

void write_safetensors(const std::string& path, const TensorMap& tensors, const Metadata& metadata) {
  const std::string bytes = safetensors_bytes(tensors, metadata, path);
  try {
    write_file_atomically(path, bytes);  // never over a device or folder; readers see the old or the new file
  } catch (const OutputFileError& e) {
    throw SafetensorsError(e.what());
  }
}

void require_checkpoint_file(const std::string& path, const std::string& hint) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) throw SafetensorsError(path + ": checkpoint not found" + hint);
    throw SafetensorsError(path + ": cannot read the checkpoint: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw SafetensorsError(path + " is a folder, not a checkpoint file");
  if (!S_ISREG(st.st_mode))
    throw SafetensorsError(path + " is not a regular file (a device, FIFO or socket), not a checkpoint file");
}

bool looks_like_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[9];
  if (!in || !in.read(reinterpret_cast<char*>(head), 9)) return false;
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | head[i];
  in.seekg(0, std::ios::end);
  const std::uint64_t size = std::uint64_t(in.tellg());
  return n >= 2 && n <= kMaxHeaderBytes && n <= size - 8 && head[8] == '{';
}

namespace {

// A file without the checksum entries (written before they existed, or by another program such as
// Python's safetensors) is read unchecked; one that has them must match them.
void verify_checksums(const std::string& path, const Metadata& meta, const nlohmann::json& header,
                      std::string_view data) {
  const auto check = [&](const char* key, const std::string& have, const char* part) {
    const auto it = meta.find(key);
    if (it == meta.end()) return;
    const std::string& want = it->second;
    const std::string scheme = kChecksumScheme;
    const bool well_formed = want.size() == scheme.size() + 16 && want.compare(0, scheme.size(), scheme) == 0 &&
                             want.find_first_not_of("0123456789abcdef", scheme.size()) == std::string::npos;
    if (!well_formed)
      fail(path, "changed or is corrupt: its __metadata__ '" + std::string(key) + "' is '" + want + "', not " +
                     scheme + " and 16 hex digits");
    if (have != want)
      fail(path, "changed or is corrupt: checksum " + have + " of its " + part + ", expected " + want +
                     " (recorded in its __metadata__ when it was written). A file changed after it was written, or "
                     "while this program read it, is refused: restore it, or write it again");
  };
  check(kChecksumHeaderKey, stamp(canonical_header(header)), "header");
  check(kChecksumDataKey, stamp(data), "data");
}

}  // namespace

TensorMap read_safetensors(const std::string& path, Metadata* metadata) {
  if (!host_is_little_endian()) fail(path, "reading needs a little-endian host");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the file");
  in.seekg(0, std::ios::end);
  const std::uint64_t file_size = std::uint64_t(in.tellg());
  in.seekg(0);
  if (file_size < 8)
    fail(path, "truncated: " + std::to_string(file_size) + " bytes, less than the 8-byte header length");
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  if (n > kMaxHeaderBytes)
    fail(path, "absurd header length " + std::to_string(n) + " bytes (limit " + std::to_string(kMaxHeaderBytes) +
                   "): not a safetensors file?");
  if (n > file_size - 8)
    fail(path, "truncated: the header length is " + std::to_string(n) + " bytes but only " +
                   std::to_string(file_size - 8) + " follow");
  std::string text(n, '\0');
  in.read(text.data(), std::streamsize(n));
  if (!in) fail(path, "changed while it was read: the header could not be read whole (the file got shorter)");
  nlohmann::json header;
  try {
    // A name given twice would silently keep the last one: each object's keys are checked.
    std::string twice;
    header = json_parse_unique_keys(text, &twice);
    if (!twice.empty()) fail(path, "the header names '" + twice + "' twice");
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail(path, "the header is not a JSON object");
  const std::uint64_t data_size = file_size - 8 - n;

  struct Span {
    std::string name;
    std::uint64_t begin, end;
    Shape shape;
  };
  std::vector<Span> spans;
  Metadata meta;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const auto& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail(path, "__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) fail(path, "__metadata__ value '" + m.key() + "' is not a string");
        meta[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "'";
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      fail(path, where + " needs dtype, shape and data_offsets");
    if (!v["dtype"].is_string()) fail(path, where + ": dtype is not a string");
    const std::string dtype = v["dtype"].get<std::string>();
    if (dtype != "F32") fail(path, where + " has dtype " + dtype + "; only F32 is supported");
    Span s{name, 0, 0, {}};
    if (!v["shape"].is_array()) fail(path, where + ": shape is not an array");
    std::uint64_t count = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) fail(path, where + ": shape holds a value that is not a non-negative integer");
      const std::uint64_t dim = d.get<std::uint64_t>();
      if (dim != 0 && count > data_size / dim + 1) fail(path, where + ": shape is larger than the whole file");
      count *= dim;
      s.shape.push_back(std::size_t(dim));
    }
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      fail(path, where + ": data_offsets must be two non-negative integers");
    s.begin = off[0].get<std::uint64_t>();
    s.end = off[1].get<std::uint64_t>();
    const std::string range = "[" + std::to_string(s.begin) + ", " + std::to_string(s.end) + "]";
    if (s.end < s.begin) fail(path, where + ": data_offsets " + range + " end before they begin");
    if (s.end > data_size)
      fail(path, where + ": data_offsets " + range + " run past the end of the data (" + std::to_string(data_size) +
                     " bytes; truncated file?)");
    // The loop's bound lets one huge dimension through, and count·4 would wrap (2^62 → 0 bytes).
    if (count > std::numeric_limits<std::uint64_t>::max() / sizeof(float))
      fail(path, where + ": shape " + shape_str(s.shape) + " is larger than the whole file");
    if (s.end - s.begin != count * sizeof(float))
      fail(path, where + ": shape " + shape_str(s.shape) + " needs " + std::to_string(count * sizeof(float)) +
                     " bytes but data_offsets " + range + " span " + std::to_string(s.end - s.begin));
    spans.push_back(std::move(s));
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
  std::uint64_t covered = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].begin < covered)
      fail(path, "tensors '" + spans[i - 1].name + "' and '" + spans[i].name + "' have overlapping data_offsets");
    if (spans[i].begin > covered)
      fail(path, "bytes [" + std::to_string(covered) + ", " + std::to_string(spans[i].begin) +
                     ") before tensor '" + spans[i].name + "' belong to no tensor");
    covered = spans[i].end;
  }
  if (covered != data_size)
    fail(path, "the last " + std::to_string(data_size - covered) + " data bytes belong to no tensor");

  // The data section in one read, right after the header: the checksums below then compare the very
  // bytes every tensor is copied from with what the writer recorded.
  std::string data(data_size, '\0');
  in.read(data.data(), std::streamsize(data_size));
  if (!in) fail(path, "changed while it was read: the data could not be read whole (the file got shorter)");
  if (in.peek() != std::char_traits<char>::eof())
    fail(path, "changed while it was read: the file grew past the " + std::to_string(file_size) + " bytes it had");
  verify_checksums(path, meta, header, data);

  TensorMap out;
  for (const auto& s : spans) {
    TensorF32 t;
    t.shape = s.shape;
    t.data.resize((s.end - s.begin) / sizeof(float));
    std::memcpy(t.data.data(), data.data() + s.begin, std::size_t(s.end - s.begin));
    // NaN or ±inf weights would run and print confident nonsense: every reader refuses them here.
    for (std::size_t i = 0; i < t.data.size(); ++i)
      if (!std::isfinite(t.data[i]))
        fail(path, "tensor '" + s.name + "' holds a non-finite value (" + std::to_string(t.data[i]) + ") at index " +
                       std::to_string(i) + ": the checkpoint is corrupt");
    out.emplace(s.name, std::move(t));
  }
  if (metadata)
    for (auto& [key, value] : meta)
      if (key != kChecksumDataKey && key != kChecksumHeaderKey) (*metadata)[key] = value;
  return out;
}

TensorMap checkpoint_tensors(const ParamRegistry& reg) {
  TensorMap tensors;
  for (const auto& e : reg.entries()) tensors[e.name] = TensorF32{e.shape, std::vector<float>(e.value, e.value + e.size)};
  return tensors;
}

void save_checkpoint(const std::string& path, const ParamRegistry& reg, const Metadata& metadata) {
  write_safetensors(path, checkpoint_tensors(reg), metadata);
}

void load_tensors(const std::string& path, const std::vector<TensorSlot>& slots, bool allow_extra, Metadata* metadata,
                  const Metadata& expect) {
  Metadata meta;
  TensorMap tensors = read_safetensors(path, &meta);
  if (metadata) *metadata = meta;
  // Validate everything before touching a single parameter.
  for (const auto& [key, want] : expect) {
    auto it = meta.find(key);
    if (it == meta.end())
      fail(path, "has no '" + key + "' in its __metadata__; expected '" + want + "' (not this chapter's checkpoint?)");
    if (it->second != want)
      fail(path, "holds " + key + " '" + it->second + "', expected '" + want + "' (a checkpoint of another model?)");
  }
  for (const auto& e : slots) {
    auto it = tensors.find(e.name);
    if (it == tensors.end()) fail(path, "tensor '" + e.name + "' is missing (the model needs " + shape_str(e.shape) + ")");
    if (it->second.shape != e.shape)
      fail(path, "tensor '" + e.name + "' has shape " + shape_str(it->second.shape) + " but the model needs " +
                     shape_str(e.shape));
  }
  if (!allow_extra)
    for (const auto& entry : tensors) {
      const std::string& name = entry.first;  // a plain reference: C++17 lambdas cannot capture bindings
      const bool wanted = std::any_of(slots.begin(), slots.end(), [&](const TensorSlot& e) { return e.name == name; });
      if (!wanted) fail(path, "tensor '" + name + "' is not a parameter of this model");
    }
  for (const auto& e : slots) {
    const auto& t = tensors.at(e.name);
    std::copy(t.data.begin(), t.data.end(), e.data);
  }
}

void load_checkpoint(const std::string& path, ParamRegistry& reg, bool allow_extra, Metadata* metadata,
                     const Metadata& expect) {
  std::vector<TensorSlot> slots;
  for (const auto& e : reg.entries()) slots.push_back({e.name, e.shape, e.value});
  load_tensors(path, slots, allow_extra, metadata, expect);
}

}  // namespace attn
