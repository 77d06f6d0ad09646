// Locating shipped data files (see attn/data/data_files.hpp).
#include "attn/data/data_files.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

// Set by common/CMakeLists.txt at configure time; empty when built some other way.
#ifndef ATTN_SOURCE_DATA_DIR
#define ATTN_SOURCE_DATA_DIR ""
#endif
#ifndef ATTN_INSTALL_DATA_DIR
#define ATTN_INSTALL_DATA_DIR ""
#endif
#ifndef ATTN_DATA_SUBDIR
#define ATTN_DATA_SUBDIR "share/attention_step_by_step/data"
#endif

namespace attn {

namespace fs = std::filesystem;

std::vector<DataPlace> data_places() {
  std::vector<DataPlace> c;
  if (const char* env = std::getenv("ATTN_DATA_DIR"); env && *env) c.push_back({env, "$ATTN_DATA_DIR"});
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux: the running program
  if (!ec) c.push_back({(exe.parent_path().parent_path() / ATTN_DATA_SUBDIR).lexically_normal().string(),
                        "next to the program"});
  if (*ATTN_SOURCE_DATA_DIR) c.push_back({ATTN_SOURCE_DATA_DIR, "source tree"});
  if (*ATTN_INSTALL_DATA_DIR) c.push_back({ATTN_INSTALL_DATA_DIR, "install prefix"});
  return c;
}

std::optional<DataPlace> data_place_holding(const std::string& path) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return std::nullopt;
  for (const DataPlace& place : data_places()) {
    const fs::path d = fs::weakly_canonical(fs::absolute(place.dir, ec), ec);
    if (ec || !fs::is_directory(d, ec)) continue;
    const fs::path rel = target.lexically_relative(d);
    if (!rel.empty() && *rel.begin() != "..") return DataPlace{d.string(), place.why};
  }
  return std::nullopt;
}

std::string shown_path(const std::string& path) {
  std::string out;
  for (char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += ch;
  }
  return out;
}

// $ATTN_DATA_DIR, when set, must name a data folder: not a missing path, not a file, and not a
// chapter's folder inside one (ATTN_DATA_DIR=data/ch05, one level too deep), which would otherwise
// be passed over without a word for the shipped files behind it. An empty folder is fine (a
// scratch folder for --train; reading falls back to the shipped files).
void check_data_dir_variable() {
  const char* env = std::getenv("ATTN_DATA_DIR");
  if (!env || !*env) return;
  std::error_code ec;
  if (!fs::is_directory(env, ec))
    throw DataFileError(fmt::format("ATTN_DATA_DIR={} is not a folder (set it to a copy of the project's data/, "
                                    "or unset it)", shown_path(env)));
  bool empty = true, layout = false;
  for (const auto& e : fs::directory_iterator(env, ec)) {
    empty = false;
    const std::string name = e.path().filename().string();
    if (name == "golden" || (name.size() == 4 && name.rfind("ch", 0) == 0 && std::isdigit((unsigned char)name[2]) &&
                             std::isdigit((unsigned char)name[3])))
      layout = true;
  }
  if (!empty && !layout)
    throw DataFileError(fmt::format("ATTN_DATA_DIR={} holds no chNN/ or golden/ folder: it should name the folder "
                                    "that holds them (a copy of data/), not one of them", shown_path(env)));
}

std::optional<std::string> find_data_file(const std::string& relative) {
  check_data_dir_variable();
  for (const DataPlace& p : data_places()) {
    std::error_code ec;
    const fs::path f = fs::path(p.dir) / relative;
    if (fs::is_regular_file(f, ec)) return f.string();
    // Something the user put at the file's name (a folder, a FIFO, a link to nothing) is named, not
    // passed over for the shipped file behind it.
    const fs::file_status own = fs::symlink_status(f, ec);
    if (fs::exists(own)) {
      const fs::file_status seen = fs::status(f, ec);
      const char* what = !fs::exists(seen)        ? "a link to nothing"
                         : fs::is_directory(seen) ? "a folder"
                         : fs::is_fifo(seen)      ? "a FIFO (named pipe)"
                                                  : "not a regular file";
      throw DataFileError(fmt::format("{} ({}) is {}, not the data file {}: remove it or put the file there; "
                                      "the shipped one is not read in its place",
                                      shown_path(f.string()), p.why, what, relative));
    }
  }
  return std::nullopt;
}

std::string missing_data_file_message(const std::string& relative, const std::vector<DataPlace>& places) {
  std::string where;
  for (const DataPlace& p : places) where += fmt::format("\n  {} ({})", shown_path(p.dir), p.why);
  return fmt::format("shipped data file {} not found; looked in:{}\nSet ATTN_DATA_DIR to the folder that holds "
                     "the project's data/ contents, or reinstall.",
                     relative, where.empty() ? " nowhere (no places known)" : where);
}

std::string require_data_file(const std::string& relative) {
  if (auto f = find_data_file(relative)) return *f;
  throw DataFileError(missing_data_file_message(relative, data_places()));
}

std::string data_dir() {
  if (const char* env = std::getenv("ATTN_DATA_DIR"); env && *env) {
    // Set: --train writes there and nowhere else (never into the source tree behind it).
    std::error_code ec;
    if (!fs::is_directory(env, ec))
      throw DataFileError(fmt::format("ATTN_DATA_DIR={} is not a folder; --train writes its files there "
                                      "(create it first, or unset ATTN_DATA_DIR)", shown_path(env)));
    check_data_dir_variable();  // not a chapter's folder: data/ch05/ch05/… could never be read back
    return env;
  }
  for (const DataPlace& p : data_places()) {
    std::error_code ec;
    if (fs::is_directory(p.dir, ec)) return p.dir;
  }
  return "data";
}

}  // namespace attn
