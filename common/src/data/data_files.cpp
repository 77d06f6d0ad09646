// Locating shipped data files (see attn/data/data_files.hpp).
#include "attn/data/data_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace attn {

namespace fs = std::filesystem;

namespace {
std::vector<fs::path> candidates() {
  std::vector<fs::path> c;
  if (const char* env = std::getenv("ATTN_DATA_DIR"); env && *env) c.emplace_back(env);
  c.emplace_back("data");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux: the running program
  if (!ec) c.push_back(exe.parent_path().parent_path().parent_path() / "data");
  return c;
}
}  // namespace

std::optional<std::string> find_data_file(const std::string& relative) {
  for (const fs::path& dir : candidates()) {
    std::error_code ec;
    if (fs::is_regular_file(dir / relative, ec)) return (dir / relative).string();
  }
  return std::nullopt;
}

std::string data_dir() {
  for (const fs::path& dir : candidates()) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return dir.string();
  }
  return "data";
}

}  // namespace attn
