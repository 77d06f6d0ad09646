// The programs write only what is theirs, where they say, and say when they could not: --html,
// --checkpoint and --export refuse a planted FIFO, socket, folder or device node (in a temporary
// folder, never the machine's /dev) before any work; an empty path is an error; with ATTN_DATA_DIR
// --train leaves the source tree alone; a failed write (a file-size limit stands in for a full
// disk) and a closed stdout exit non-zero; --step is not skipped by keys typed during a step and
// does not pause after the takeaway; bidirectional controls in a label reach the terminal escaped.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attn/data/data_files.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace hostile_writes_test {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

mode_t type_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// A shell line run with the programs' folder first on PATH; returns the exit status.
int shell(const std::string& line) {
  const std::string cmd = "PATH=" + shell_quote(program_dir()) + ":\"$PATH\" LANG=C.UTF-8 LC_ALL= LANGUAGE= ; " + line;
  const int raw = std::system(("sh -c " + shell_quote(cmd)).c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Runs program in a pseudo-terminal (stdin and stdout are a terminal, as for a learner):
// `early` is typed at once, before the program has printed anything; then, each time the output
// shows `prompt` one more time, `answer` is typed, up to `answers` times. Returns all output.
std::string run_in_pty(const std::string& program, const std::vector<std::string>& args, const std::string& early,
                       const std::string& prompt, int answers, int timeout_s,
                       const std::vector<std::pair<std::string, std::string>>& env = {}) {
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("LANG", "C.UTF-8", 1);
    ::unsetenv("LC_ALL");
    ::unsetenv("LANGUAGE");
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    const std::string path = program_dir() + "/" + program;
    argv.push_back(const_cast<char*>(path.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    ::_exit(127);
  }
  if (!early.empty()) REQUIRE(::write(master, early.data(), early.size()) == ssize_t(early.size()));
  std::string out;
  int answered = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      char buf[4096];
      const ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) break;  // the program ended
      out.append(buf, std::size_t(n));
    }
    if (answered < answers && int(count_of(out, prompt)) > answered) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ++answered;
      REQUIRE(::write(master, "\n", 1) == 1);
    }
  }
  ::kill(pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ::close(master);
  return out;
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
    CHECK(type_of(p) == type);
    const RunResult t = run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1", "--checkpoint", p});
    CHECK(t.status == 1);
    CHECK(t.err_has("--train"));
    CHECK(type_of(p) == type);
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
  const std::string before = slurp(shipped);
  const RunResult r = run_program("00_seq2seq_bottleneck", {"--no-color", "--train", "--steps", "2"},
                                  {"ATTN_DATA_DIR=" + d.string()});
  CHECK(r.status == 0);
  CHECK(fs::is_regular_file(d / "ch00" / "no_attention.safetensors"));
  CHECK(r.has((d / "ch00" / "no_attention.safetensors").string()));
  CHECK(slurp(shipped) == before);
  // A variable naming no folder is said at once, not ignored.
  const RunResult missing = run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1"},
                                        {"ATTN_DATA_DIR=" + (d / "nowhere").string()});
  CHECK(missing.status == 1);
  CHECK(missing.err_has("is not a folder"));
  CHECK(slurp(shipped) == before);
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

TEST_CASE("--step: Enter typed during a step skips nothing; no pause after the takeaway") {
  // 10 steps: a pause before steps 2–10 and one before the takeaway. Ten Enters typed at once are
  // thrown away at the first pause, so the run waits there; answered one by one, it finishes.
  const std::string prompt = "[Enter: next step]";
  const std::string early = run_in_pty("03_self_attention", {"--step", "--no-color"}, "\n\n\n\n\n\n\n\n\n\n", prompt, 0, 3);
  CHECK(count_of(early, prompt) == 1);
  CHECK(early.find("Step 2/") == std::string::npos);
  const std::string all = run_in_pty("03_self_attention", {"--step", "--no-color"}, "", prompt, 20, 20);
  const std::size_t takeaway = all.find("Takeaway");
  REQUIRE(takeaway != std::string::npos);
  CHECK(count_of(all.substr(0, takeaway), prompt) == 10);
  CHECK(count_of(all.substr(takeaway), prompt) == 0);
}

TEST_CASE("--step: a step that computes for a while says so, and the line is gone before its output") {
  // The busy line's delay shortened from 2 s (ATTN_BUSY_AFTER_S) so that chapter 06's timed steps show it.
  const std::string out = run_in_pty("06_efficient_attention", {"--step", "--no-color"}, "", "[Enter: next step]", 30,
                                     120, {{"ATTN_BUSY_AFTER_S", "0.05"}});
  REQUIRE(out.find("Takeaway") != std::string::npos);
  CHECK(out.find("\r  … 0 s\x1b[K") != std::string::npos);
  CHECK(out.find("\r\x1b[K") != std::string::npos);  // erased
  // Without --step nothing of the kind (the control).
  const std::string plain = run_in_pty("06_efficient_attention", {"--no-color"}, "", "[Enter", 0, 120,
                                       {{"ATTN_BUSY_AFTER_S", "0.05"}});
  CHECK(plain.find("  … 0 s") == std::string::npos);
}

TEST_CASE("bidirectional and invisible characters in a label are shown escaped") {
  const RunResult r = run_program("03_self_attention", {"--no-color", "--sentence", "a b \u202e c d"});
  CHECK(r.status == 0);
  CHECK(r.out.find("\u202e") == std::string::npos);
  CHECK(r.has("\\u202e"));
  const RunResult z = run_program("03_self_attention", {"--no-color", "--sentence", "a \ufeffb c"});
  CHECK(z.out.find("\ufeff") == std::string::npos);
}
