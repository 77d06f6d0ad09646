// Locating shipped data files (see attn/data/data_files.hpp).
#include "attn/data/data_files.hpp"

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

std::optional<std::string> find_data_file(const std::string& relative) {
  for (const DataPlace& p : data_places()) {
    std::error_code ec;
    const fs::path f = fs::path(p.dir) / relative;
    if (fs::is_regular_file(f, ec)) return f.string();
  }
  return std::nullopt;
}

std::string missing_data_file_message(const std::string& relative, const std::vector<DataPlace>& places) {
  std::string where;
  for (const DataPlace& p : places) where += fmt::format("\n  {} ({})", p.dir, p.why);
  return fmt::format("shipped data file {} not found; looked in:{}\nSet ATTN_DATA_DIR to the folder that holds "
                     "the project's data/ contents, or reinstall.",
                     relative, where.empty() ? " nowhere (no places known)" : where);
}

std::string require_data_file(const std::string& relative) {
  if (auto f = find_data_file(relative)) return *f;
  throw DataFileError(missing_data_file_message(relative, data_places()));
}

std::string data_dir() {
  for (const DataPlace& p : data_places()) {
    std::error_code ec;
    if (fs::is_directory(p.dir, ec)) return p.dir;
  }
  return "data";
}

}  // namespace attn
