// Writing only what is ours (see attn/data/output_file.hpp).
#include "attn/data/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace attn {

namespace fs = std::filesystem;

namespace {

std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// "" when target (links already followed) may be replaced by a regular file.
std::string target_problem(const std::string& shown, const fs::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fmt::format("{} is a folder, not a file", shown);
    if (!S_ISREG(st.st_mode))
      return fmt::format("{} is {}, not a regular file; it is never replaced", shown, kind_of(st.st_mode));
    if (::access(target.c_str(), W_OK) != 0) return fmt::format("{} exists and is read-only", shown);
  } else if (errno == ENOTDIR) {
    return fmt::format("{}: a name above it is a file, not a folder", shown);
  } else if (errno != ENOENT) {
    return fmt::format("cannot check {}: {}", shown, std::strerror(errno));
  }
  return "";
}

std::string temporary_for(const fs::path& target) { return target.string() + ".tmp." + std::to_string(::getpid()); }

// Writes bytes into a fresh temporary file beside target; returns its name.
std::string write_temporary(const std::string& path, const fs::path& target, std::string_view bytes) {
  const std::string tmp = temporary_for(target);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST) {  // ours from an earlier write in this process, or planted: never written through
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  }
  if (fd < 0) throw OutputFileError(fmt::format("cannot write {}: cannot create {}: {}", path, tmp, std::strerror(errno)));
  std::size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += std::size_t(n);
  }
  if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw OutputFileError(fmt::format("cannot write {}: {}{}", path, std::strerror(err),
                                      err == ENOSPC ? " (disk full?)" : ""));
  }
  return tmp;
}

void rename_into_place(const std::string& path, const std::string& tmp, const fs::path& target) {
  // Checked again: something may have appeared at the target since the work began.
  if (const std::string p = target_problem(path, target); !p.empty()) {
    ::unlink(tmp.c_str());
    throw OutputFileError("cannot write " + p);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw OutputFileError(fmt::format("cannot write {}: cannot move {} into place: {}", path, tmp, std::strerror(e)));
  }
}

}  // namespace

bool process_gone(long pid) { return pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

std::string output_target(const std::string& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) return p.string();
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p.string();  // a loop of links: stat() below reports it
}

std::string output_file_problem(const std::string& path, bool new_folder) {
  if (path.empty()) return "needs a file name, got an empty string (an unset variable?)";
  const fs::path target = output_target(path);
  // The kernel's own reading of the path first: a link such as /proc/self/fd/1 (/dev/stdout)
  // reads as "pipe:[123]", which names nothing, yet opening it reaches the pipe.
  if (std::string p = target_problem(path, path); !p.empty()) return p;
  if (std::string p = target_problem(path, target); !p.empty()) return p;
  if (!target.has_filename() || target.filename() == "." || target.filename() == "..")
    return fmt::format("{} names a folder, not a file", path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 && new_folder) {
    dir = dir.parent_path();
    if (dir.empty()) dir = ".";
    if (::stat(dir.c_str(), &st) != 0)
      return fmt::format("folder {} does not exist (create it first)", dir.string());
  } else if (::stat(dir.c_str(), &st) != 0) {
    return fmt::format("folder {} does not exist (create it first; only the file itself is created)", dir.string());
  }
  if (!S_ISDIR(st.st_mode)) return fmt::format("{} is not a folder", dir.string());
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return fmt::format("folder {} is not writable", dir.string());
  return "";
}

void check_output_file(const std::string& path, const std::string& what, bool new_folder) {
  if (const std::string p = output_file_problem(path, new_folder); !p.empty()) throw OutputFileError(what + ": " + p);
}

void prepare_output_folder(const std::string& path) {
  const fs::path dir = fs::path(output_target(path)).parent_path();
  if (dir.empty()) return;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) return;
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw OutputFileError(fmt::format("cannot create folder {}: {}", dir.string(), std::strerror(errno)));
}

int remove_stale_temporaries(const std::string& path) {
  const fs::path target = output_target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  const std::string prefix = target.filename().string() + ".tmp.";
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    std::error_code rc;
    if (!e.is_regular_file(rc) || e.is_symlink(rc)) continue;
    if (!process_gone(std::atol(digits.c_str()))) continue;
    if (::unlink(e.path().c_str()) == 0) ++removed;
  }
  return removed;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  OutputSet one;
  one.add(path, bytes);
  one.commit();
}

OutputSet::~OutputSet() {
  for (const auto& [target, tmp] : staged_) ::unlink(tmp.c_str());
}

void OutputSet::add(const std::string& path, std::string_view bytes) {
  check_output_file(path, "cannot write");
  const fs::path target = output_target(path);
  for (const auto& [t, tmp] : staged_)
    if (t == target.string()) throw OutputFileError("cannot write " + path + ": named twice in one set");
  remove_stale_temporaries(target.string());
  staged_.emplace_back(target.string(), write_temporary(path, target, bytes));
}

void OutputSet::commit() {
  while (!staged_.empty()) {
    const auto [target, tmp] = staged_.front();
    staged_.erase(staged_.begin());
    rename_into_place(target, tmp, target);
  }
}

std::string fnv1a64_hex(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace attn
