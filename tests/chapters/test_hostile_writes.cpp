// The programs write only what is theirs, where they say, and say when they could not: --html,
// --checkpoint and --export refuse a planted FIFO, socket, folder or device node (in a temporary
// folder, never the machine's /dev) before any work; an empty path is an error; with ATTN_DATA_DIR
// --train leaves the source tree alone; a failed write (a file-size limit stands in for a full
// disk, whether or not the shell ignores SIGXFSZ) and a closed stdout exit non-zero;
// bidirectional controls in a label reach the terminal escaped. (--step in a terminal:
// test_terminal_step.cpp.)
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
#include "attn/data/safetensors.hpp"
#include "attn/present/checkpoint_set.hpp"
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
  // The shell's default (SIGXFSZ not ignored): the program ignores it itself, so the same clear exit.
  CHECK(shell("trap - XFSZ; ulimit -f 4; exec 03_self_attention --quiet --html " + shell_quote(page) + " 2>/dev/null") == 1);
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

TEST_CASE("chapter 05 --train writes its five models as one set; a mixed set is refused; old temporaries go") {
  const fs::path d = scratch_dir("hostile-ch05-set");
  fs::create_directories(d / "a" / "ch05");
  fs::create_directories(d / "b");
  const std::vector<std::string> names = {"none", "sinusoidal", "learned", "rope", "alibi"};
  // What a --train killed before its renames left behind (its process is gone): removed by the next.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  int st = 0;
  ::waitpid(gone, &st, 0);
  const fs::path stale = d / "a" / "ch05" / ("rope.safetensors.tmp." + std::to_string(gone));
  hostile::write_bytes(stale, "half a model");
  const auto train = [&](const fs::path& root) {
    return run_program("05_positional_encoding", {"--no-color", "--train", "--train-steps", "1"},
                       {"ATTN_DATA_DIR=" + root.string()});
  };
  const RunResult a = train(d / "a");
  REQUIRE_MESSAGE(a.status == 0, a.err);
  CHECK(a.has("together,"));  // the line saying the five were written as one set
  CHECK_FALSE(fs::exists(stale));
  const RunResult b = train(d / "b");
  REQUIRE_MESSAGE(b.status == 0, b.err);
  std::string run;
  for (const std::string& e : names) {
    CAPTURE(e);
    Metadata meta;
    (void)read_safetensors((d / "a" / "ch05" / (e + ".safetensors")).string(), &meta);
    REQUIRE(meta.count(kSetRunKey));
    if (run.empty()) run = meta.at(kSetRunKey);
    CHECK(meta.at(kSetRunKey) == run);  // one run id across the five
  }
  for (const auto& entry : fs::directory_iterator(d / "a" / "ch05"))
    CHECK(entry.path().string().find(".tmp.") == std::string::npos);
  // The set as written reads back (the control) ...
  const std::vector<std::string> env = {"ATTN_DATA_DIR=" + (d / "a").string()};
  const RunResult whole = run_program("05_positional_encoding", {"--quiet"}, env);
  CHECK_MESSAGE(whole.status == 0, whole.err);
  // ... one file from the other run beside it is refused before the first step, the file named ...
  const fs::path rope = d / "a" / "ch05" / "rope.safetensors";
  const std::string own = hostile::read_bytes(rope);
  fs::copy_file(d / "b" / "ch05" / "rope.safetensors", rope, fs::copy_options::overwrite_existing);
  const RunResult mixed = run_program("05_positional_encoding", {"--no-color"}, env);
  CHECK(mixed.status == 1);
  CHECK(mixed.err_has(rope.string() + " does not belong with"));
  CHECK(mixed.err_has("--train run"));
  CHECK(mixed.err_has("put back the shipped data/ch05/ files"));
  CHECK_FALSE(mixed.has("Step 1/"));  // checked before the lesson's first step
  // ... and so is a shipped file, which records no run: what a run stopped between two renames leaves.
  fs::copy_file(require_data_file("ch05/rope.safetensors"), rope, fs::copy_options::overwrite_existing);
  const RunResult old = run_program("05_positional_encoding", {"--quiet"}, env);
  CHECK(old.status == 1);
  CHECK(old.err_has("rope.safetensors does not belong with"));
  hostile::write_bytes(rope, own);
  CHECK(run_program("05_positional_encoding", {"--quiet"}, env).status == 0);
  // A missing member is said as missing in that folder, never taken from the shipped data instead.
  fs::remove(d / "a" / "ch05" / "alibi.safetensors");
  const RunResult missing = run_program("05_positional_encoding", {"--quiet"}, env);
  CHECK(missing.status == 1);
  CHECK(missing.err_has((d / "a" / "ch05" / "alibi.safetensors").string() + " is missing"));
  fs::remove_all(d);
}

TEST_CASE("--html replaces only a page of its own: a text file, directly or through a link, and stdout's file stay") {
  const fs::path d = scratch_dir("hostile-html-own");
  fs::create_directories(d);
  hostile::write_bytes(d / "notes.txt", "my notes");
  fs::create_symlink("notes.txt", d / "notes.html");
  for (const char* name : {"notes.txt", "notes.html"}) {
    CAPTURE(name);
    const RunResult r = run_program("03_self_attention", {"--quiet", "--html", (d / name).string()});
    CHECK(r.status == 2);
    CHECK(r.err_has("exists and is not a page this program wrote; it is left as it is"));
    CHECK(r.out.empty());
    CHECK(hostile::read_bytes(d / "notes.txt") == "my notes");
  }
  CHECK(hostile::is_link(d / "notes.html"));
  // The control: a page of its own is replaced, run after run, and so is an empty file.
  const std::string page = (d / "page.html").string();
  CHECK(run_program("03_self_attention", {"--quiet", "--html", page}).status == 0);
  CHECK(run_program("03_self_attention", {"--quiet", "--html", page}).status == 0);
  CHECK(hostile::read_bytes(page).rfind("<!DOCTYPE html>", 0) == 0);
  hostile::write_bytes(d / "empty.html", "");
  CHECK(run_program("03_self_attention", {"--quiet", "--html", (d / "empty.html").string()}).status == 0);
  // /dev/stdout's twin while stdout goes to a file: the page would replace the narration's file.
  fs::create_symlink("/proc/self/fd/1", d / "stdout.html");
  const std::string log = (d / "log.txt").string();
  CHECK(shell("03_self_attention --quiet --html " + shell_quote((d / "stdout.html").string()) + " > " + shell_quote(log) +
              " 2> " + shell_quote(log + ".err")) == 2);
  CHECK(hostile::read_bytes(log + ".err").find("is the file standard output goes to") != std::string::npos);
  CHECK(hostile::read_bytes(log).empty());  // refused before any work: nothing narrated, no page in its place
  CHECK(hostile::is_link(d / "stdout.html"));
  fs::remove_all(d);
}

TEST_CASE("a locale naming a character set other than UTF-8 gets a plain note; C and UTF-8 locales get none") {
  // No GB18030 locale need be installed: the note reads the name (LANG=zh_CN.GB18030), as a
  // learner's terminal does. The lesson itself runs, in the language asked for.
  for (const std::vector<std::string>& env : {std::vector<std::string>{"LANG=zh_CN.GB18030", "LC_ALL=", "LC_CTYPE="},
                                              {"LC_ALL=en_US.ISO-8859-1"}}) {
    CAPTURE(env.front());
    for (const char* lang : {"en", "zh"}) {
      const RunResult r = run_program("04_multi_head", {"--quiet", "--no-color", "--lang", lang}, env);
      CHECK(r.status == 0);
      CHECK(r.has(std::string(lang) == "zh" ? "第 04 章" : "Chapter 04"));
      CHECK(r.err_has("names a character set other than UTF-8"));
      CHECK(r.err_has("iconv -f UTF-8 -t "));
      for (unsigned char c : r.err) CHECK(c < 0x80);  // ASCII: shown as written in any character set
    }
  }
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{"LANG=C", "LC_ALL=", "LC_CTYPE="}, {"LANG=zh_CN.UTF-8", "LC_ALL=", "LC_CTYPE="},
        {"LANG=zh_CN.utf8", "LC_ALL=", "LC_CTYPE="}, {"LANG=", "LC_ALL=", "LC_CTYPE="}}) {
    CAPTURE(env.front());
    for (const char* lang : {"en", "zh"}) {
      const RunResult r = run_program("04_multi_head", {"--quiet", "--no-color", "--lang", lang}, env);
      CHECK(r.status == 0);
      CHECK(r.has(std::string(lang) == "zh" ? "第 04 章" : "Chapter 04"));
      CHECK(r.err.empty());
    }
  }
}
