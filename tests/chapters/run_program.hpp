// Runs a built program (a chapter, the tour, a tool) the way a learner would and captures what
// it printed: exit status, stdout and stderr separately. For the chapter smoke tests.
//   RunResult r = run_program("03_self_attention", {"--quiet"});
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

// Runs of spaces and line breaks as one space: narration wraps at the terminal's width, so a
// sentence may continue on the next (indented) line.
inline std::string squeeze_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (space && !out.empty() && out.back() == ' ') continue;
    out += space ? ' ' : c;
  }
  return out;
}

// The number printed right after `prefix` in text (e.g. squeeze_spaces(out)); NaN when absent.
inline double number_after(const std::string& text, const std::string& prefix) {
  const std::size_t at = text.find(prefix);
  if (at == std::string::npos) return std::numeric_limits<double>::quiet_NaN();
  return std::strtod(text.c_str() + at + prefix.size(), nullptr);
}

struct RunResult {
  int status = -1;  // exit status (128 + signal if killed)
  std::string out, err;
  // s appears as printed, or across a line break the narrator made.
  bool has(const std::string& s) const {
    return out.find(s) != std::string::npos || squeeze_spaces(out).find(squeeze_spaces(s)) != std::string::npos;
  }
  bool err_has(const std::string& s) const { return err.find(s) != std::string::npos; }
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The folder the programs are run from: $ATTN_TEST_BIN_DIR when set (CI points it at an installed
// copy, .ci/run), else this build's bin folder.
inline std::string program_dir() {
  const char* over = std::getenv("ATTN_TEST_BIN_DIR");
  return over && *over ? std::string(over) : std::string(ATTN_BIN_DIR);
}

// program: a name in program_dir(), or an absolute path. env: "NAME=value" prefixes (after the
// English default). stdin is /dev/null.
inline RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                             const std::vector<std::string>& env = {}) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path err_file = fs::temp_directory_path() / ("attn-run-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".err");
  // English and the default width unless the test asks otherwise (its env entries come later and
  // win), so the checks of printed English hold whatever LANG and COLUMNS the suite runs under.
  std::string cmd = "env -u COLUMNS LANGUAGE= LC_ALL= LC_MESSAGES= LANG=C.UTF-8 env";  // a second env takes -u NAME too
  for (const auto& e : env) cmd += " " + shell_quote(e);
  cmd += " " + shell_quote(program[0] == '/' ? program : program_dir() + "/" + program);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " </dev/null 2>" + shell_quote(err_file.string());
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int raw = ::pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  std::ifstream ef(err_file);
  std::stringstream ss;
  ss << ef.rdbuf();
  r.err = ss.str();
  fs::remove(err_file);
  return r;
}

// The whole content of a file, byte for byte ("" when it cannot be read).
inline std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::filesystem::path scratch_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("attn-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p;
}
