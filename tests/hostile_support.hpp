// Helpers shared by the hostile-input tests (tests/chapters/test_hostile_*.cpp, test_bad_input.cpp,
// tests/core/test_hostile_files.cpp, test_non_finite.cpp, test_bad_input.cpp): scratch folders in
// the temporary folder, files read and written byte for byte, copies of the shipped data, checkpoint
// files rebuilt from their parts or poisoned value by value, and what counts as a crash. Everything
// here works on copies: never on the checkout's data/ nor on the machine's /dev.
//   const fs::path d = hostile::fresh_dir("npy-order");
//   hostile::copy_data_folder("ch05", d / "data");
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "attn/data/safetensors.hpp"

namespace hostile {

namespace fs = std::filesystem;

// temp/attn-<name>-<pid>, emptied; created unless `create` is false.
inline fs::path fresh_dir(const std::string& name, bool create = true) {
  const fs::path p = fs::temp_directory_path() / ("attn-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  if (create) fs::create_directories(p);
  return p;
}

// The whole content of a file, byte for byte ("" when it cannot be read).
inline std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
inline void write_bytes(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// The file type of p itself (S_IFREG, S_IFLNK, ...; 0 when absent), links not followed.
inline mode_t type_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}
inline bool is_link(const fs::path& p) { return type_of(p) == S_IFLNK; }

// Every regular file of dir (not below it), by name and bytes: to check that nothing changed.
inline std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = read_bytes(e.path());
  return out;
}

// A copy of the shipped data/<folder> (its regular files) under root/<folder>.
inline void copy_data_folder(const std::string& folder, const fs::path& root) {
  fs::create_directories(root / folder);
  for (const auto& e : fs::directory_iterator(fs::path(ATTN_DATA_DIR) / folder))
    if (e.is_regular_file())
      fs::copy_file(e.path(), root / folder / e.path().filename(), fs::copy_options::overwrite_existing);
}

// root/<rel> after a copy of the shipped folder that holds it ("ch09/tokenizer.json": data/ch09).
inline fs::path copy_of_shipped(const std::string& rel, const fs::path& root) {
  const fs::path r = rel;
  copy_data_folder(r.parent_path().string(), root);
  return root / r;
}

// A safetensors file from a header text and the data bytes (the header padded to 8 bytes).
inline std::string safetensors_bytes(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char((std::uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header + data;
}
struct SafetensorsParts {
  std::string header, data;
};
// The header text and the data bytes of a safetensors file (its length as stored, unchecked).
inline SafetensorsParts split_safetensors(const std::string& bytes) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::uint8_t(bytes[std::size_t(i)]);
  return {bytes.substr(8, n), bytes.substr(8 + n)};
}

// The checkpoint `from` rewritten to `to` with every value replaced by f(value); the metadata as
// read unless `meta` is given.
inline void rewrite_checkpoint(const fs::path& from, const fs::path& to, float (*f)(float),
                               const attn::Metadata* meta = nullptr) {
  attn::Metadata m;
  attn::TensorMap t = attn::read_safetensors(from.string(), &m);
  for (auto& [name, tensor] : t)
    for (float& x : tensor.data) x = f(x);
  if (to.has_parent_path()) fs::create_directories(to.parent_path());
  attn::write_safetensors(to.string(), t, meta ? *meta : m);
}

// A run that died of a signal, an uncaught exception or a heap check instead of saying what is wrong.
inline bool crashed(int status, const std::string& err) {
  return status >= 128 || err.find("terminate called") != std::string::npos ||
         err.find("double free") != std::string::npos || err.find("Aborted") != std::string::npos;
}

}  // namespace hostile
