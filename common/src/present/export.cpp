// --export: .npy files plus manifest.json, swapped in as a whole folder (see attn/present/export.hpp).
#include "attn/present/export.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/data/data_files.hpp"
#include "attn/data/npy.hpp"
#include "attn/data/output_file.hpp"

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
  tensors_.push_back({name, shape, std::vector<float>(data, data + n), step, {}, {}});
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

void ExportRecorder::set_tokens(const std::string& name, const Labels& query_tokens, const Labels& key_tokens) {
  for (auto& t : tensors_)
    if (t.name == name) {
      t.query_tokens = query_tokens;
      t.key_tokens = key_tokens;
      return;
    }
  throw ExportError(fmt::format("export: no tensor '{}' to attach tokens to", name));
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
  const fs::path abs = fs::absolute(dir, ec);  // fails when the current folder has been removed
  if (ec)
    throw ExportError(fmt::format("--export: cannot resolve {}: {} (was the current folder removed? give a full path)",
                                  dir, ec.message()));
  fs::path p = fs::weakly_canonical(abs, ec);
  if (ec) throw ExportError(fmt::format("--export: cannot resolve {}: {}", dir, ec.message()));
  if (!p.has_filename()) p = p.parent_path();  // "out/" -> "out"
  if (p == p.root_path() || !p.has_filename())
    throw ExportError(fmt::format("--export: {} has no parent folder to stage the export in", dir));
  return {p, p.parent_path(), p.filename().string()};
}

// The mark every manifest carries ("written_by"): a folder is replaced only when its manifest has it.
constexpr const char* kWrittenBy = "attention_step_by_step";

bool is_probe_name(const std::string& name) {
  const std::string prefix = ".attn-probe-";
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
}

// "" when the existing folder dir may be replaced: it is empty, or it is an earlier export of this
// program — a manifest.json with its mark, and nothing in the folder the manifest does not list.
// Otherwise the reason, naming the entry that would be lost.
std::string not_an_export(const fs::path& dir, const std::string& shown) {
  std::error_code ec;
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    std::error_code rc;
    if (is_probe_name(name) && e.is_regular_file(rc) && !e.is_symlink(rc)) continue;  // a killed run's probe
    entries.push_back(name);
  }
  if (ec) throw ExportError(fmt::format("--export: cannot list folder {}: {}", shown, ec.message()));
  if (entries.empty()) return "";
  const auto refuse = [&](const std::string& entry, const std::string& why) {
    return fmt::format("--export: {} holds '{}', {}; the export replaces the whole folder, so choose an empty "
                       "folder or one holding only an earlier export of this program (its manifest.json says so)",
                       shown, entry, why);
  };
  std::error_code rc;
  if (!fs::is_regular_file(fs::symlink_status(dir / "manifest.json", rc)))
    return refuse(entries.front(), "and no manifest.json of an earlier export");
  nlohmann::json m;
  try {
    std::ifstream in(dir / "manifest.json");
    m = nlohmann::json::parse(in);
  } catch (const std::exception&) {
    return refuse("manifest.json", "which is not an export's manifest (not JSON)");
  }
  if (!m.is_object() || m.value("written_by", std::string()) != kWrittenBy || !m.contains("chapter"))
    return refuse("manifest.json", "which was not written by this program's --export");
  std::vector<std::string> listed = {"manifest.json"};
  if (m.contains("tensors") && m["tensors"].is_array())
    for (const auto& t : m["tensors"])
      if (t.is_object() && t.contains("file") && t["file"].is_string()) listed.push_back(t["file"].get<std::string>());
  if (m.contains("files") && m["files"].is_array())
    for (const auto& f : m["files"])
      if (f.is_string()) listed.push_back(f.get<std::string>());
  for (const std::string& name : entries) {
    if (std::find(listed.begin(), listed.end(), name) == listed.end())
      return refuse(name, "which is not part of the earlier export (its manifest does not list it)");
    if (!fs::is_regular_file(fs::symlink_status(dir / name, rc)))
      return refuse(name, "which is not a plain file");
  }
  return "";
}

// The shipped data (data/, $ATTN_DATA_DIR, an installed copy) is never an export target, nor is
// any folder inside it.
void refuse_data_tree(const fs::path& target, const std::string& shown) {
  if (const auto place = data_place_holding(target.string()))
    throw ExportError(fmt::format("--export: {} is inside the shipped data folder {} ({}); write the export "
                                  "somewhere else", shown, shown_path(place->dir), place->why));
}

// A file of our own made and removed in dir: created exclusively and never through a link, so a
// file or link planted at the probe's name is neither truncated nor written through.
void probe_writable(const fs::path& dir, const fs::path& probe, const std::string& what) {
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw ExportError(fmt::format("--export: {} {} is not writable ({})", what, dir.string(), std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

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
    if (dash == std::string::npos || *end != '\0' || (pid != ::getpid() && !process_gone(pid))) continue;
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

void ExportRecorder::set_manifest_field(const std::string& key, const std::string& json_value) {
  if (key == "chapter" || key == "seed" || key == "tensors" || key == "files" || key == "written_by") throw ExportError("manifest key \"" + key + "\" is reserved");
  if (!nlohmann::json::accept(json_value)) throw ExportError("manifest field \"" + key + "\" is not valid JSON");
  for (auto& f : fields_)
    if (f.first == key) {
      f.second = json_value;
      return;
    }
  fields_.emplace_back(key, json_value);
}

void prepare_export_dir(const std::string& dir) {
  if (dir.empty()) throw ExportError("--export: needs a folder name, got an empty string (an unset variable?)");
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw ExportError(fmt::format("--export: {} exists and is not a folder", dir));
  const ExportPaths p = export_paths(dir);
  // A link that leads nowhere (weakly_canonical leaves it unresolved): the swap would replace the
  // link itself, an entry the user made.
  if (fs::is_symlink(fs::symlink_status(p.target, ec)))
    throw ExportError(fmt::format("--export: {} is a symbolic link to {}, which does not exist; it is left as it "
                                  "is: name another folder, or create the one it points to", dir,
                                  fs::read_symlink(p.target, ec).string()));
  refuse_data_tree(p.target, dir);
  if (!fs::is_directory(p.parent, ec))
    throw ExportError(fmt::format("--export: folder {} does not exist (create it first; only the export folder "
                                  "itself is created)", p.parent.string()));
  // A missing DIR is not created here: it appears only when the export is complete (write() renames
  // the staging folder into place), so a run that fails or is stopped before then leaves nothing.
  if (fs::is_directory(p.target, ec)) {
    if (const std::string why = not_an_export(p.target, dir); !why.empty()) throw ExportError(why);
    probe_writable(p.target, p.target / fmt::format(".attn-probe-{}", ::getpid()), "folder");
  }
  probe_writable(p.parent, p.sibling("probe", ::getpid()), "the folder holding the export,");
}

void ExportRecorder::add_manifest_field(const std::string& key, const std::string& json_text) {
  set_manifest_field(key, json_text);  // chapter 08's name for chapter 09's set_manifest_field
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
    nlohmann::json manifest = {{"written_by", kWrittenBy},
                               {"chapter", chapter},
                               {"seed", seed},
                               {"tensors", nlohmann::json::array()}};
    for (const auto& [key, text] : fields_) manifest[key] = nlohmann::json::parse(text);
    for (const auto& t : tensors_) {
      const std::string file = t.name + ".npy";
      write_npy((staging / file).string(), t.data.data(), t.shape);
      nlohmann::json entry = {{"name", t.name}, {"file", file}, {"shape", t.shape}, {"step", t.step}};
      if (!t.query_tokens.empty()) entry["query_tokens"] = t.query_tokens;
      if (!t.key_tokens.empty()) entry["key_tokens"] = t.key_tokens;
      manifest["tensors"].push_back(entry);
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
    for (const auto& [key, value] : fields_) manifest[key] = nlohmann::json::parse(value);
    std::ofstream m(staging / "manifest.json");
    m << manifest.dump(2) << "\n";
    m.close();
    if (!m) throw ExportError("could not write manifest.json (disk full?)");
    kill_point(point);
    // No DIR yet: the staging folder becomes DIR in one rename. Otherwise the swap: DIR becomes the
    // new export in one step and the staging name holds the old one.
    std::error_code absent;
    const bool fresh = !fs::exists(fs::symlink_status(p.target, absent)) &&
                       ::rename(staging.c_str(), p.target.c_str()) == 0;
    if (!fresh && !exchange(staging, p.target)) {
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
