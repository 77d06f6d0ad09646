// The programs write only what is theirs, where they say, and say when they could not: --html,
// --checkpoint and --export refuse a planted FIFO, socket, folder or device node (in a temporary
// folder, never the machine's /dev) before any work; an empty path is an error; with ATTN_DATA_DIR
// --train leaves the source tree alone; a failed write (a file-size limit stands in for a full
// disk) and a closed stdout exit non-zero; bidirectional controls in a label reach the terminal
// escaped. (--step in a terminal: test_terminal_step.cpp.)
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "attn/data/data_files.hpp"
#include "../hostile_support.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace hostile_writes_test {

// A shell line run with the programs' folder first on PATH; returns the exit status.
int shell(const std::string& line) {
  const std::string cmd = "PATH=" + shell_quote(program_dir()) + ":\"$PATH\" LANG=C.UTF-8 LC_ALL= LC_MESSAGES= LANGUAGE= ; unset COLUMNS; " + line;
  const int raw = std::system(("sh -c " + shell_quote(cmd)).c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

}  // namespace hostile_writes_test

using namespace hostile_writes_test;

TEST_CASE("--html and --checkpoint never replace a FIFO, socket, folder or device; refused before any work") {
  const fs::path d = scratch_dir("hostile-special");
  fs::create_directories(d / "dir");
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0644) == 0);
  std::vector<std::pair<std::string, mode_t>> targets = {{"fifo", S_IFIFO}, {"dir", S_IFDIR}};
  if (::geteuid() == 0) {  // as root (the Quick start's setting) a device node can be planted: /dev/null's twin
    REQUIRE(::mknod((d / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    targets.push_back({"null", S_IFCHR});
  } else {
    MESSAGE("not root: the device-node case is not run (mknod needs root)");
  }
  for (const auto& [name, type] : targets) {
    CAPTURE(name);
    const std::string p = (d / name).string();
    const RunResult h = run_program("03_self_attention", {"--quiet", "--html", p});
    CHECK(h.status == 2);
    CHECK(h.err_has("--html"));
    CHECK(h.out.empty());  // before any work: not even the header
    CHECK(hostile::type_of(p) == type);
    const RunResult t = run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1", "--checkpoint", p});
    CHECK(t.status == 1);
    CHECK(t.err_has("--train"));
    CHECK(hostile::type_of(p) == type);
  }
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("an empty path is an error, never the shipped file") {
  struct Case {
    const char* program;
    std::vector<std::string> args;
    const char* flag;
  };
  const std::vector<Case> cases = {
      {"03_self_attention", {"--html", ""}, "--html"},
      {"03_self_attention", {"--export", ""}, "--export"},
      {"00_seq2seq_bottleneck", {"--checkpoint", ""}, "--checkpoint"},
      {"00_seq2seq_bottleneck", {"--train", "--steps", "1", "--checkpoint", ""}, "--checkpoint"},
      {"01_bahdanau", {"--baseline", ""}, "--baseline"},
      {"02_luong", {"--checkpoint-dir", ""}, "--checkpoint-dir"},
      {"07_cross_attention", {"--transformer", ""}, "--transformer"},
      {"08_transformer", {"--checkpoint", ""}, "--checkpoint"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.program);
    CAPTURE(c.flag);
    const RunResult r = run_program(c.program, c.args);
    CHECK(r.status == 2);
    CHECK(r.err_has(std::string(c.flag) + ": needs a path, got an empty string"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("--train with ATTN_DATA_DIR writes there; the source tree's checkpoint is untouched") {
  const fs::path d = scratch_dir("hostile-datadir");
  fs::create_directories(d);
  const std::string shipped = require_data_file("ch00/no_attention.safetensors");
  const std::string before = hostile::read_bytes(shipped);
  const RunResult r = run_program("00_seq2seq_bottleneck", {"--no-color", "--train", "--steps", "2"},
                                  {"ATTN_DATA_DIR=" + d.string()});
  CHECK(r.status == 0);
  CHECK(fs::is_regular_file(d / "ch00" / "no_attention.safetensors"));
  CHECK(r.has((d / "ch00" / "no_attention.safetensors").string()));
  CHECK(hostile::read_bytes(shipped) == before);
  // A variable naming no folder is said at once, not ignored.
  const RunResult missing = run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1"},
                                        {"ATTN_DATA_DIR=" + (d / "nowhere").string()});
  CHECK(missing.status == 1);
  CHECK(missing.err_has("is not a folder"));
  CHECK(hostile::read_bytes(shipped) == before);
  fs::remove_all(d);
}

TEST_CASE("--export and --html meet nowhere; a missing folder above either is named; data/ is never exported into") {
  const fs::path d = scratch_dir("hostile-paths");
  fs::create_directories(d);
  const std::string x = (d / "x").string();
  const RunResult same = run_program("03_self_attention", {"--quiet", "--export", x, "--html", x});
  CHECK(same.status == 2);
  CHECK(same.err_has("--export and --html both name"));
  CHECK_FALSE(fs::exists(x));
  const RunResult inside = run_program("03_self_attention", {"--quiet", "--export", x, "--html", x + "/page.html"});
  CHECK(inside.status == 2);
  CHECK(inside.err_has("inside the --export folder"));
  CHECK_FALSE(fs::exists(x));
  const RunResult no_html = run_program("03_self_attention", {"--quiet", "--html", (d / "no" / "p.html").string()});
  CHECK(no_html.status == 2);
  CHECK(no_html.err_has("does not exist"));
  const RunResult no_export = run_program("03_self_attention", {"--quiet", "--export", (d / "no" / "out").string()});
  CHECK(no_export.status == 2);
  CHECK(no_export.err_has("does not exist"));
  CHECK_FALSE(fs::exists(d / "no"));
  // A copy of the shipped goldens (.npy files, no manifest of ours) is not an export to replace.
  fs::copy(fs::path(require_data_file("golden/core/attn_q.npy")).parent_path(), d / "core");
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(d / "core")) n += e.is_regular_file() ? 1 : 0;
  const RunResult goldens = run_program("03_self_attention", {"--quiet", "--export", (d / "core").string()});
  CHECK(goldens.status == 2);
  std::size_t after = 0;
  for (const auto& e : fs::directory_iterator(d / "core")) after += e.is_regular_file() ? 1 : 0;
  CHECK(after == n);
  fs::remove_all(d);
}

TEST_CASE("--html never replaces a file of the shipped data (here a scratch $ATTN_DATA_DIR)") {
  const fs::path d = scratch_dir("hostile-html-data");
  fs::create_directories(d / "data" / "ch03");
  const fs::path victim = d / "data" / "ch03" / "model.safetensors";
  { std::ofstream(victim) << "shipped bytes"; }
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html", victim.string()},
                                  {"ATTN_DATA_DIR=" + (d / "data").string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--html"));
  CHECK(r.err_has("shipped data"));
  std::ifstream in(victim);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "shipped bytes");
  // A page beside the data, not inside it, is written.
  const RunResult beside = run_program("03_self_attention", {"--quiet", "--html", (d / "page.html").string()},
                                       {"ATTN_DATA_DIR=" + (d / "data").string()});
  CHECK(beside.status == 0);
  CHECK(fs::is_regular_file(d / "page.html"));
  fs::remove_all(d);
}

TEST_CASE("a failed write exits non-zero: --html past a file-size limit, stdout to a full file, stdout closed") {
  const fs::path d = scratch_dir("hostile-full");
  fs::create_directories(d);
  const std::string page = (d / "page.html").string(), log = (d / "log.txt").string();
  // ulimit -f: writes past 4 blocks fail (EFBIG, with SIGXFSZ ignored), as on a full disk.
  CHECK(shell("trap '' XFSZ; ulimit -f 4; exec 03_self_attention --quiet --html " + shell_quote(page) + " 2>/dev/null") == 1);
  CHECK_FALSE(fs::exists(page));
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().string().find(".tmp.") == std::string::npos);
  CHECK(shell("trap '' XFSZ; ulimit -f 1; exec 03_self_attention --no-color > " + shell_quote(log) + " 2>/dev/null") == 1);
  CHECK(shell("trap '' XFSZ; ulimit -f 1; exec 03_self_attention --help > " + shell_quote(log) + " 2>/dev/null") == 1);
  CHECK(shell("exec 03_self_attention --quiet >&- 2>/dev/null") == 1);
  CHECK(shell("exec 03_self_attention --quiet > " + shell_quote(log)) == 0);  // the control: the same run, written
  fs::remove_all(d);
}

TEST_CASE("bidirectional and invisible characters in a label are shown escaped") {
  const RunResult r = run_program("03_self_attention", {"--no-color", "--sentence", "a b \u202e c d"});
  CHECK(r.status == 0);
  CHECK(r.out.find("\u202e") == std::string::npos);
  CHECK(r.has("\\u202e"));
  const RunResult z = run_program("03_self_attention", {"--no-color", "--sentence", "a \ufeffb c"});
  CHECK(z.out.find("\ufeff") == std::string::npos);
}
