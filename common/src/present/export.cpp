// --export: .npy files plus manifest.json, swapped in as a whole folder (see attn/present/export.hpp).
#include "attn/present/export.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"

namespace fs = std::filesystem;

namespace attn {

bool valid_export_name(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

void ExportRecorder::add(const std::string& name, const Shape& shape, const float* data, int step) {
  if (!valid_export_name(name)) throw ExportError(fmt::format("export: '{}' is not a valid tensor name", name));
  if (has(name)) throw ExportError(fmt::format("export: tensor '{}' recorded twice", name));
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  tensors_.push_back({name, shape, std::vector<float>(data, data + n), step});
}

void ExportRecorder::add_file(const std::string& file, std::string bytes) {
  const bool json = file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0;
  if (!valid_export_name(file) || !json || file == "manifest.json")
    throw ExportError(fmt::format("export: '{}' is not a valid extra file name (NAME.json, not manifest.json)", file));
  for (const auto& [f, b] : files_)
    if (f == file) throw ExportError(fmt::format("export: file '{}' added twice", file));
  files_.emplace_back(file, std::move(bytes));
}

bool ExportRecorder::has(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return true;
  return false;
}

void ExportRecorder::set_manifest_field(const std::string& key, const std::string& json_value) {
  if (key == "chapter" || key == "seed" || key == "tensors" || key == "files")
    throw ExportError("manifest key \"" + key + "\" is reserved");
  if (!nlohmann::json::accept(json_value)) throw ExportError("manifest field \"" + key + "\" is not valid JSON");
  for (auto& f : fields_)
    if (f.first == key) {
      f.second = json_value;
      return;
    }
  fields_.emplace_back(key, json_value);
}

namespace {

// The export folder as an absolute path without a trailing '/', symlinks resolved (so that the
// folder swapped is the real one), and the hidden sibling names that belong to it.
struct ExportPaths {
  fs::path target, parent;
  std::string stem;
  fs::path sibling(const std::string& kind, long pid) const {
    return parent / fmt::format(".{}.attn-{}-{}", stem, kind, pid);
  }
};

ExportPaths export_paths(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) throw ExportError(fmt::format("--export: cannot resolve {}: {}", dir, ec.message()));
  if (!p.has_filename()) p = p.parent_path();  // "out/" -> "out"
  if (p == p.root_path() || !p.has_filename())
    throw ExportError(fmt::format("--export: {} has no parent folder to stage the export in", dir));
  return {p, p.parent_path(), p.filename().string()};
}

// Anything in an existing DIR that no export writes would be lost when the folder is replaced.
bool export_like(const fs::directory_entry& e) {
  const std::string name = e.path().filename().string();
  if (name.rfind(".attn-", 0) == 0) return true;  // a staging folder or probe left by an older version
  std::error_code ec;
  if (!e.is_regular_file(ec)) return false;
  auto ends = [&](const char* ext) {
    const std::size_t n = std::strlen(ext);
    return name.size() > n && name.compare(name.size() - n, n, ext) == 0;
  };
  return ends(".npy") || ends(".json");
}

void probe_writable(const fs::path& dir, const fs::path& probe, const std::string& what) {
  {
    std::ofstream f(probe);
    if (!f) throw ExportError(fmt::format("--export: {} {} is not writable", what, dir.string()));
  }
  std::error_code ec;
  fs::remove(probe, ec);
}

bool process_alive(long pid) { return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM); }

// Staging folders and old exports left by runs that were killed: removed by the next export.
void remove_leftovers(const ExportPaths& p) {
  const std::string prefix = "." + p.stem + ".attn-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(p.parent, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::size_t dash = name.rfind('-');
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + dash + 1, &end, 10);
    if (dash == std::string::npos || *end != '\0' || (pid != ::getpid() && process_alive(pid))) continue;
    std::error_code rm;
    fs::remove_all(e.path(), rm);
  }
}

// Test hook (tests/core/test_bad_input.cpp): ATTN_EXPORT_KILL_AT=N kills the process with SIGKILL at
// the N-th point of write() — after each file written, before and after the swap — so a test can
// prove the folder is whole after a kill at every one of them.
void kill_point(int& counter) {
  const char* at = std::getenv("ATTN_EXPORT_KILL_AT");
  if (at && *at && std::atoi(at) == counter) ::raise(SIGKILL);
  ++counter;
}

// Exchanges two paths atomically (Linux renameat2 RENAME_EXCHANGE). False when the filesystem
// cannot (errno EINVAL / ENOSYS), true on success; throws on other errors.
bool exchange(const fs::path& a, const fs::path& b) {
#if defined(__linux__) && defined(SYS_renameat2)
  constexpr unsigned kRenameExchange = 1u << 1;
  if (::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), kRenameExchange) == 0) return true;
  if (errno == EINVAL || errno == ENOSYS) return false;
  throw ExportError(fmt::format("cannot swap {} into place: {}", b.string(), std::strerror(errno)));
#else
  (void)a, (void)b;
  return false;
#endif
}

}  // namespace

void prepare_export_dir(const std::string& dir) {
  if (dir.empty()) throw ExportError("--export: needs a folder name, got an empty string");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw ExportError(fmt::format("--export: {} exists and is not a folder", dir));
  fs::create_directories(dir, ec);
  if (ec) throw ExportError(fmt::format("--export: cannot create folder {}: {}", dir, ec.message()));
  const ExportPaths p = export_paths(dir);
  for (const auto& e : fs::directory_iterator(p.target, ec))
    if (!export_like(e))
      throw ExportError(fmt::format("--export: {} holds '{}', which is not part of an export; the export replaces "
                                    "the whole folder, so choose an empty folder or one holding only a previous export",
                                    dir, e.path().filename().string()));
  if (ec) throw ExportError(fmt::format("--export: cannot list folder {}: {}", dir, ec.message()));
  probe_writable(p.target, p.target / fmt::format(".attn-probe-{}", ::getpid()), "folder");
  probe_writable(p.parent, p.sibling("probe", ::getpid()), "the folder holding the export,");
}

void ExportRecorder::write(const std::string& dir, const std::string& chapter, std::uint64_t seed) const {
  prepare_export_dir(dir);
  const ExportPaths p = export_paths(dir);
  remove_leftovers(p);
  const fs::path staging = p.sibling("export", ::getpid());
  std::error_code ec;
  int point = 0;
  try {
    fs::create_directories(staging);
    nlohmann::json manifest = {{"chapter", chapter}, {"seed", seed}, {"tensors", nlohmann::json::array()}};
    for (const auto& [key, value] : fields_) manifest[key] = nlohmann::json::parse(value);  // e.g. "config"
    for (const auto& t : tensors_) {
      const std::string file = t.name + ".npy";
      write_npy((staging / file).string(), t.data.data(), t.shape);
      manifest["tensors"].push_back({{"name", t.name}, {"file", file}, {"shape", t.shape}, {"step", t.step}});
      kill_point(point);
    }
    for (const auto& [file, bytes] : files_) {
      std::ofstream f(staging / file, std::ios::binary);
      f.write(bytes.data(), std::streamsize(bytes.size()));
      f.close();
      if (!f) throw ExportError(fmt::format("could not write {} (disk full?)", file));
      manifest["files"].push_back(file);
      kill_point(point);
    }
    std::ofstream m(staging / "manifest.json");
    m << manifest.dump(2) << "\n";
    m.close();
    if (!m) throw ExportError("could not write manifest.json (disk full?)");
    kill_point(point);
    // The swap: DIR becomes the new export in one step and the staging name holds the old one.
    if (!exchange(staging, p.target)) {
      // No RENAME_EXCHANGE here (some network filesystems): move the old folder aside, then the
      // new one in. A kill between the two renames leaves DIR missing but the old export whole
      // under the hidden name, which the next export removes.
      const fs::path old = p.sibling("old", ::getpid());
      fs::rename(p.target, old);
      fs::rename(staging, p.target);
      fs::remove_all(old, ec);
    }
    kill_point(point);
    fs::remove_all(staging, ec);
  } catch (const std::exception& e) {
    fs::remove_all(staging, ec);
    throw ExportError(fmt::format("--export {}: {}", dir, e.what()));
  }
}

}  // namespace attn
