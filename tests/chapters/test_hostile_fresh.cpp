// Hostile cases of a fresh round, of kinds neither the hostile-input report nor the other hostile
// tests name: repeated options and empty --opt= forms, misspelt and stray arguments, folder names
// as --html, empty and endless --sentence values, links to a device or to this process's stdout,
// a checkpoint cut at each boundary of its layout, ATTN_DATA_DIR with a trailing slash, empty or
// holding a newline, odd LANG/LC_ALL values, stdout closed early, a full and a read-only output
// folder (tmpfs, as root) and SIGTERM during --export. Every case checks the exit status, the
// message, and that nothing that is not the program's own changed (planted files only in a
// temporary folder; never the machine's /dev or the checkout's data/).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "attn/data/data_files.hpp"
#include "../hostile_support.hpp"
#include "run_program.hpp"

namespace fs = std::filesystem;

namespace hostile_fresh_test {

// A scratch folder holding victim.txt; `unchanged()`: still only that file, byte for byte.
struct Place {
  fs::path dir;
  explicit Place(const std::string& name) : dir(hostile::fresh_dir("fresh-" + name)) {
    hostile::write_bytes(dir / "victim.txt", "the learner's notes\n");
  }
  ~Place() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  bool unchanged() const {
    const auto files = hostile::snapshot(dir);
    return files.size() == 1 && files.begin()->second == "the learner's notes\n";
  }
};

// Chapter 03 run inside the place's folder: exit 2 naming `flag` and saying `what`, nothing printed
// on stdout, nothing written there.
void check_refused_in(const Place& p, const std::vector<std::string>& args, const std::string& flag,
                      const std::string& what) {
  CAPTURE(flag);
  CAPTURE(what);
  const RunResult r = run_program("03_self_attention", args, {"-C", p.dir.string()});
  CHECK(r.status == 2);
  CHECK(r.err_has(flag));
  CHECK(r.err_has(what));
  CHECK(r.out.empty());
  CHECK(p.unchanged());
}

// A tmpfs of 64 KiB mounted at dir (root only); false when it cannot be mounted here.
bool mount_small_tmpfs(const fs::path& dir, bool read_only) {
  fs::create_directories(dir);
  return ::mount("tmpfs", dir.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, "size=64k") == 0;
}

}  // namespace hostile_fresh_test

using namespace hostile_fresh_test;

// ---- the command line ----

TEST_CASE("fresh 1-3: an option given twice is refused, naming it; nothing is written") {
  Place p("twice");
  check_refused_in(p, {"--quiet", "--seed", "1", "--seed", "2"}, "--seed", "given 2 times; give it once");
  check_refused_in(p, {"--quiet", "--html", "a.html", "--html", "b.html"}, "--html", "given 2 times");
  check_refused_in(p, {"--quiet", "--export", "a", "--export", "b"}, "--export", "given 2 times");
}

TEST_CASE("fresh 4-7: --opt= with nothing after the sign is a missing value, never an empty path or zero") {
  Place p("equals");
  for (const char* flag : {"--d-model", "--html", "--seed", "--export"}) check_refused_in(p, {"--quiet", std::string(flag) + "="}, flag, "needs a value after it");
}

TEST_CASE("fresh 8: --lang=ZH (a case slip) is refused, naming the allowed values") {
  Place p("lang-case");
  check_refused_in(p, {"--quiet", "--lang=ZH"}, "--lang", "ZH not in {en,zh}");
}

TEST_CASE("fresh 9-12: a misspelt option, an abbreviation and stray words are refused, naming them") {
  Place p("stray");
  check_refused_in(p, {"--quiet", "--qiuet"}, "--qiuet", "not expected");
  check_refused_in(p, {"--quiet", "--qui"}, "--qui", "not expected");
  check_refused_in(p, {"--quiet", "extra"}, "extra", "not expected");
  check_refused_in(p, {"--quiet", "--", "extra"}, "extra", "not expected");
}

TEST_CASE("fresh 13-15: --html naming ., .. or / is a folder; nothing is written") {
  Place p("dots");
  for (const char* name : {".", "..", "/"}) check_refused_in(p, {"--quiet", "--html", name}, "--html", "is a folder, not a file");
}

TEST_CASE("fresh 16-19: --sentence empty, blank or one 100 000-letter word, and --sizes of commas only") {
  for (const std::string& s : {std::string(), std::string("   "), std::string(100000, 'a')}) {
    const RunResult r = run_program("05_positional_encoding", {"--quiet", "--sentence", s});
    CHECK(r.status == 2);
    CHECK(r.err_has("--sentence: needs 2 to 12 words"));
    CHECK(r.err.size() < 400);  // the word is not echoed back
  }
  const RunResult commas = run_program("06_efficient_attention", {"--quiet", "--sizes", ",,,"});
  CHECK(commas.status == 2);
  CHECK(commas.err_has("--sizes"));
}

TEST_CASE("fresh 20: a --sentence word that is not UTF-8 reaches the terminal escaped, not as a raw byte") {
  const RunResult r = run_program("05_positional_encoding", {"--quiet", "--no-color", "--sentence", "a \xff b c"});
  CHECK(r.status == 0);
  CHECK(r.out.find('\xff') == std::string::npos);
  CHECK(r.err.find('\xff') == std::string::npos);
}

// ---- links ----

TEST_CASE("fresh 21-22: --html at a link to a device, or to this process's stdout, is refused before work") {
  Place p("links");
  const fs::path out_link = p.dir / "stdout.html";  // /dev/stdout's twin; stdout is a pipe here
  fs::create_symlink("/proc/self/fd/1", out_link);
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html", out_link.string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--html: " + out_link.string() + " is a FIFO (named pipe), not a regular file"));
  CHECK(r.out.empty());
  CHECK(hostile::is_link(out_link));
  fs::remove(out_link);
  if (::geteuid() != 0) {
    MESSAGE("not root: the device-node case is not run (mknod needs root)");
    return;
  }
  REQUIRE(::mknod((p.dir / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  fs::create_symlink("null", p.dir / "page.html");
  const RunResult dev = run_program("03_self_attention", {"--quiet", "--html", (p.dir / "page.html").string()});
  CHECK(dev.status == 2);
  CHECK(dev.err_has("is a character device, not a regular file; it is never replaced"));
  CHECK(hostile::is_link(p.dir / "page.html"));
  CHECK(hostile::type_of(p.dir / "null") == S_IFCHR);
}

TEST_CASE("fresh 23: --train --checkpoint at a link to a FIFO is refused before training; the FIFO stays") {
  Place p("fifo-link");
  REQUIRE(::mkfifo((p.dir / "pipe").c_str(), 0644) == 0);
  fs::create_symlink("pipe", p.dir / "model.safetensors");
  const RunResult r = run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1", "--checkpoint",
                                                            (p.dir / "model.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("FIFO"));
  CHECK(hostile::type_of(p.dir / "pipe") == S_IFIFO);
  CHECK(hostile::is_link(p.dir / "model.safetensors"));
}

// ---- a checkpoint cut at each boundary of its layout ----

TEST_CASE("fresh 24-30: rope.safetensors cut at 0, 1, 7, 8 bytes, inside and after the header, one byte short") {
  Place p("cuts");
  const fs::path root = p.dir / "data";
  hostile::copy_data_folder("ch05", root);  // the five are read from one folder
  const fs::path rope = root / "ch05/rope.safetensors";
  const std::string whole = hostile::read_bytes(rope);
  const std::size_t n = hostile::split_safetensors(whole).header.size();
  const std::vector<std::pair<std::size_t, std::string>> cuts = {
      {0, "less than the 8-byte header length"},    {1, "less than the 8-byte header length"},
      {7, "less than the 8-byte header length"},    {8, "but only 0 follow"},
      {8 + n - 1, "truncated: the header length is"}, {8 + n, "is larger than the whole file"},
      {whole.size() - 1, "run past the end of the data"}};
  for (const auto& [cut, what] : cuts) {
    CAPTURE(cut);
    hostile::write_bytes(rope, whole.substr(0, cut));
    const RunResult r = run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + root.string()});
    CHECK_FALSE(hostile::crashed(r.status, r.err));
    CHECK(r.status == 1);
    CHECK(r.err_has(rope.string()));
    CHECK(r.err_has(what));
    CHECK_FALSE(r.has("Takeaway"));
  }
}

// ---- the environment ----

TEST_CASE("fresh 31-33: ATTN_DATA_DIR with a trailing slash works, empty means unset, a newline is refused") {
  Place p("datadir");
  hostile::copy_data_folder("ch05", p.dir / "data");
  CHECK(run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + (p.dir / "data").string() + "/"}).status == 0);
  CHECK(run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR="}).status == 0);
  const RunResult nl = run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + p.dir.string() + "/a\nb"});
  CHECK(nl.status == 1);
  CHECK(nl.err_has("is not a folder"));
  CHECK(nl.err_has("/a\\nb is not a folder"));  // shown escaped, on the message's one line
  CHECK(nl.err.find("\nb is not") == std::string::npos);
  CHECK(fs::is_regular_file(p.dir / "victim.txt"));
}

TEST_CASE("fresh 34-38: odd LANG and LC_ALL values give a lesson in one language, no error") {
  const std::vector<std::pair<std::vector<std::string>, const char*>> cases = {
      {{"LANG=zh_CN"}, "第 04 章"},
      {{"LANG=en_US.UTF-8", "LC_ALL=zh_CN.UTF-8"}, "第 04 章"},  // LC_ALL wins
      {{"LANG=../../etc/passwd"}, "Chapter 04"},
      {{"LANG=" + std::string(5000, 'x')}, "Chapter 04"},
      {{"LC_ALL=POSIX"}, "Chapter 04"}};
  for (const auto& [env, title] : cases) {
    CAPTURE(env.back().substr(0, 40));
    const RunResult r = run_program("04_multi_head", {"--quiet", "--no-color"}, env);
    CHECK(r.status == 0);
    CHECK(r.has(title));
    CHECK(r.err.empty());
  }
}

TEST_CASE("fresh 39: stdout closed early (| head) stops the run with SIGPIPE; no page is left half-written") {
  Place p("pipe");
  const fs::path page = p.dir / "page.html";
  const std::string cmd = "env LANG=C.UTF-8 " + shell_quote(program_dir() + "/03_self_attention") +
                          " --no-color --html " + shell_quote(page.string()) + " 2>/dev/null | head -c 10 >/dev/null; " +
                          "exit ${PIPESTATUS[0]}";
  const int raw = std::system(("bash -c " + shell_quote(cmd)).c_str());
  const int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  CHECK(status != 0);
  const std::string html = hostile::read_bytes(page);
  CHECK((html.empty() || html.find("</html>") != std::string::npos));
  for (const auto& e : fs::directory_iterator(p.dir)) CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

// ---- full and read-only output folders (tmpfs of 64 KiB, as root) ----

TEST_CASE("fresh 40-42: --html and --export into a full tmpfs fail whole; a read-only tmpfs is refused first") {
  if (::geteuid() != 0) {
    MESSAGE("not root: the tmpfs cases are not run (mount needs root)");
    return;
  }
  Place p("tmpfs");
  const fs::path full = p.dir / "full";
  if (!mount_small_tmpfs(full, false)) {
    MESSAGE("tmpfs cannot be mounted here: the cases are not run");
    return;
  }
  hostile::write_bytes(full / "pad", std::string(60000, 'p'));
  const std::string old_page = "<!DOCTYPE html>\n<html lang=\"en\">\n<title>Chapter 03 · old</title>\n";  // one of ours
  hostile::write_bytes(full / "page.html", old_page);
  const RunResult html = run_program("03_self_attention", {"--quiet", "--html", (full / "page.html").string()});
  CHECK(html.status == 1);
  CHECK(html.err_has("No space left on device"));
  CHECK(hostile::read_bytes(full / "page.html") == old_page);
  const RunResult ex = run_program("03_self_attention", {"--quiet", "--export", (full / "ex").string()});
  CHECK(ex.status == 1);
  CHECK(ex.err_has("disk full"));
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(full)) entries += e.path().filename().string().find("attn-") == std::string::npos ? 1 : 100;
  CHECK(entries == 2);  // pad and page.html: neither an export folder nor a staging folder is left
  CHECK_FALSE(fs::exists(full / "ex"));
  CHECK(hostile::read_bytes(full / "pad").size() == 60000);
  ::umount(full.c_str());

  const fs::path ro = p.dir / "ro";
  if (mount_small_tmpfs(ro, true)) {
    const RunResult r = run_program("03_self_attention", {"--quiet", "--html", (ro / "p.html").string()});
    CHECK(r.status == 2);
    CHECK(r.err_has("is not writable"));
    CHECK(r.out.empty());
    ::umount(ro.c_str());
  }
}

// ---- a signal during --export ----

TEST_CASE("fresh 43: SIGTERM during chapter 06's --export leaves no export or a whole one, and no staging folder") {
  Place p("sigterm");
  const fs::path out = p.dir / "out";
  for (int ms : {300, 1500}) {
    CAPTURE(ms);
    fs::remove_all(out);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const std::string prog = program_dir() + "/06_efficient_attention";
      ::freopen("/dev/null", "w", stdout);
      ::execl(prog.c_str(), prog.c_str(), "--quiet", "--export", out.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    ::kill(pid, SIGTERM);
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (fs::exists(out)) CHECK(fs::is_regular_file(out / "manifest.json"));  // whole, never an empty folder
    // The next export removes what the killed one left and finishes whole.
    const RunResult again = run_program("06_efficient_attention", {"--quiet", "--export", out.string()});
    CHECK(again.status == 0);
    CHECK(fs::is_regular_file(out / "manifest.json"));
    for (const auto& e : fs::directory_iterator(p.dir)) CHECK(e.path().filename().string().find(".attn-") == std::string::npos);
  }
}

// ---- JSON ----

TEST_CASE("fresh 45-46: tokenizer.json naming vocab_size or merges twice is refused naming the key") {
  Place p("dup-keys");
  const fs::path root = p.dir / "data";
  const fs::path tok = hostile::copy_of_shipped("ch09/tokenizer.json", root);
  const std::string good = hostile::read_bytes(tok);
  const std::size_t at = good.find("\"merges\":");
  REQUIRE(at != std::string::npos);
  for (const std::string key : {"vocab_size", "merges"}) {
    CAPTURE(key);
    const std::string extra = key == "merges" ? R"("merges":[],)" : R"("vocab_size":300,)";
    hostile::write_bytes(tok, good.substr(0, at) + extra + good.substr(at));
    const RunResult r = run_program("09_modern_decoder", {"--quiet", "--tokens", "5"}, {"ATTN_DATA_DIR=" + root.string()});
    CHECK(r.status == 1);
    CHECK(r.err_has(tok.string() + " names the key \"" + key + "\" twice"));
  }
}

// ---- an endless number ----

TEST_CASE("fresh 44: --seed of 5000 digits is refused naming --seed, shown by its start and length") {
  const RunResult r = run_program("03_self_attention", {"--quiet", "--seed", std::string(5000, '1')});
  CHECK(r.status == 2);
  CHECK(r.err_has("--seed"));
  CHECK(r.err_has("11111… (5002 characters) is not a number"));  // its start and length (quotes included)
  CHECK(r.err.size() < 400);
  CHECK(r.out.empty());
}
