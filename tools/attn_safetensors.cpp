// attn-safetensors: check a checkpoint's checksums, or record them in a file written without them.
//   attn-safetensors check FILE...   read and validate each file (checksums too, when it has them);
//                                    prints "ok", "ok (no checksum)" or the reason it is refused
//   attn-safetensors stamp FILE...   rewrite each file with its checksums (attn/data/safetensors.hpp),
//                                    only when the new file's data section is byte for byte the old
//                                    one's; the header keeps every tensor and metadata entry
//   attn-safetensors set FILE KEY=VALUE...   the same, with these __metadata__ entries added or
//                                    replaced (e.g. chapter 09's set_fnv1a64_<file> fingerprints)
// Exit status: 0 when every file passed, 1 when one did not, 2 on a usage error.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "attn/data/safetensors.hpp"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Everything after the 8-byte length and the header ("" when the bytes are too short).
std::string data_section(const std::string& bytes) {
  if (bytes.size() < 8) return "";
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[std::size_t(i)]);
  return n > bytes.size() - 8 ? "" : bytes.substr(8 + n);
}

bool has_checksum(const std::string& path) {
  const std::string bytes = read_all(path);
  return bytes.find(attn::kChecksumDataKey) != std::string::npos;
}

int check(const std::string& path) {
  attn::read_safetensors(path);
  std::printf("%s: ok%s\n", path.c_str(), has_checksum(path) ? "" : " (no checksum)");
  return 0;
}

int stamp(const std::string& path, const attn::Metadata& extra = {}) {
  const std::string before = read_all(path);
  attn::Metadata meta;
  const attn::TensorMap tensors = attn::read_safetensors(path, &meta);
  for (const auto& [key, value] : extra) meta[key] = value;
  const std::string after = attn::safetensors_bytes(tensors, meta, path);
  if (data_section(after) != data_section(before)) {
    std::fprintf(stderr, "%s: the rewritten data section would differ from the file's; left unchanged\n", path.c_str());
    return 1;
  }
  attn::write_safetensors(path, tensors, meta);
  std::printf("%s: %s\n", path.c_str(), attn::safetensors_data_checksum(data_section(after)).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc < 3 || (mode != "check" && mode != "stamp" && mode != "set")) {
    std::fprintf(stderr, "usage: attn-safetensors check|stamp FILE...\n"
                         "       attn-safetensors set FILE KEY=VALUE...\n");
    return 2;
  }
  if (mode == "set") {
    attn::Metadata extra;
    for (int i = 3; i < argc; ++i) {
      const std::string kv = argv[i];
      const std::size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "attn-safetensors set: '%s' is not KEY=VALUE\n", kv.c_str());
        return 2;
      }
      extra[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    try {
      return stamp(argv[2], extra);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
  }
  int status = 0;
  for (int i = 2; i < argc; ++i) {
    try {
      if ((mode == "check" ? check(argv[i]) : stamp(argv[i])) != 0) status = 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      status = 1;
    }
  }
  return status;
}
