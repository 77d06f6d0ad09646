// Bad input never crashes, hangs or lies — the programs, run as a learner runs them: each case
// gives a clear message naming the problem and a non-zero exit (2 for flags), or, for an export
// killed midway, leaves the folder whole. The core half is tests/core/test_bad_input.cpp.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/data/npy.hpp"
#include "attn/data/safetensors.hpp"
#include "../hostile_support.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

bool no_raw_escape(const RunResult& r) { return r.out.find('\x1b') == std::string::npos && r.err.find('\x1b') == std::string::npos; }

// A copy of the shipped data/chNN folder (or one file of it) under root.
void copy_shipped(const std::string& rel, const fs::path& root) {
  const fs::path from = require_data_file(rel);
  fs::create_directories((root / rel).parent_path());
  fs::copy_file(from, root / rel, fs::copy_options::overwrite_existing);
}

// The shipped checkpoint rel with every value replaced by f(value), same metadata unless given.
void rewrite_checkpoint(const std::string& rel, const fs::path& to, float (*f)(float), const Metadata* meta = nullptr) {
  hostile::rewrite_checkpoint(require_data_file(rel), to, f, meta);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;  // ASan reserves terabytes of address space: ulimit -v cannot apply
#else
constexpr bool kAsan = false;
#endif

}  // namespace

TEST_CASE("case 1: chapter 05 --d-model abc, \"\", 99999999999999999999 exit 2 naming the flag") {
  for (const char* bad : {"abc", "", "99999999999999999999", "7", "-4"}) {
    CAPTURE(bad);
    const RunResult r = run_program("05_positional_encoding", {"--d-model", bad});
    CHECK(r.status == 2);
    CHECK(r.err_has("--d-model"));
    CHECK_FALSE(r.err_has("terminate"));
  }
}

TEST_CASE("case 2: chapter 04 blames a lying or wrongly shaped X.npy on X.npy") {
  const fs::path root = scratch_dir("bad-npy");
  const fs::path mha = root / "golden" / "mha";
  for (const char* n : {"X", "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O", "output"})
    copy_shipped(fmt::format("golden/mha/{}.npy", n), root);
  const std::vector<std::string> env = {"ATTN_DATA_DIR=" + root.string()};
  RunResult ok = run_program("04_multi_head", {"--quiet"}, env);
  REQUIRE_MESSAGE(ok.status == 0, ok.err);
  CHECK(ok.has("PyTorch parity"));

  // 2^60 × 16 elements wrap to 0 in 64 bits: the old reader accepted it and the chapter crashed.
  {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1152921504606846976, 16), }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::ofstream f(mha / "X.npy", std::ios::binary);
    f << std::string("\x93NUMPY\x01\x00", 8) << char(header.size() & 0xff) << char(header.size() >> 8) << header;
  }
  RunResult r = run_program("04_multi_head", {"--quiet"}, env);
  CHECK(r.status == 1);
  CHECK(r.err_has((mha / "X.npy").string() + ": shape (1152921504606846976, 16) has more elements"));

  const float x[40] = {};
  write_npy((mha / "X.npy").string(), x, {5, 8});  // a valid file of the wrong width
  r = run_program("04_multi_head", {"--quiet"}, env);
  CHECK(r.status == 1);
  CHECK(r.err_has("X.npy: expected shape (any, 16), got (5, 8)"));
  CHECK_FALSE(r.err_has("W_Q"));
  fs::remove_all(root);
}

TEST_CASE("case 3: chapter 04 with X.npy present and W_Q.npy missing names the missing file") {
  const fs::path root = scratch_dir("half-golden");
  copy_shipped("golden/mha/X.npy", root);
  const RunResult r = run_program("04_multi_head", {"--quiet"}, {"ATTN_DATA_DIR=" + root.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has((root / "golden/mha/W_Q.npy").string()));
  CHECK(r.err_has("No such file"));
  fs::remove_all(root);
}

TEST_CASE("case 4: non-finite weights are refused; a non-finite figure gives no verdict") {
  const fs::path root = scratch_dir("nonfinite");
  for (const char* e : {"none", "sinusoidal", "learned", "rope", "alibi"})
    copy_shipped(fmt::format("ch05/{}.safetensors", e), root);
  const std::vector<std::string> env = {"ATTN_DATA_DIR=" + root.string()};
  const fs::path rope = root / "ch05/rope.safetensors";

  rewrite_checkpoint("ch05/rope.safetensors", rope, [](float) { return NAN; });
  RunResult r = run_program("05_positional_encoding", {"--quiet"}, env);
  CHECK(r.status == 1);
  CHECK(r.err_has(rope.string()));
  CHECK(r.err_has("holds a non-finite value (nan)"));
  CHECK_FALSE(r.has("held"));

  // Finite but absurd: 3e38 overflows to inf inside the model; the table's figures are not finite.
  rewrite_checkpoint("ch05/rope.safetensors", rope, [](float) { return 3e38f; });
  r = run_program("05_positional_encoding", {"--quiet"}, env);
  CHECK(r.status == 1);
  CHECK(r.err_has("is not finite; no verdict can be drawn from it"));
  CHECK_FALSE(r.has("RoPE extrapolates naturally"));

  // Chapter 00: a NaN checkpoint is refused; an all-zero one prints no "-nan% lower".
  const fs::path ch00 = root / "zero.safetensors";
  rewrite_checkpoint("ch00/no_attention.safetensors", ch00, [](float) { return NAN; });
  r = run_program("00_seq2seq_bottleneck", {"--quiet", "--checkpoint", ch00.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("non-finite"));
  rewrite_checkpoint("ch00/no_attention.safetensors", ch00, [](float) { return 0.0f; });
  r = run_program("00_seq2seq_bottleneck", {"--quiet", "--checkpoint", ch00.string()});
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK_FALSE(r.has("nan"));
  CHECK(r.has("no relative drop: short sentences already score 0"));
  fs::remove_all(root);
}

TEST_CASE("case 5: chapter 05 refuses a checkpoint of another encoding") {
  const fs::path root = scratch_dir("swapped-model");
  for (const char* e : {"none", "sinusoidal", "learned", "rope", "alibi"})
    copy_shipped(fmt::format("ch05/{}.safetensors", e), root);
  fs::copy_file(root / "ch05/none.safetensors", root / "ch05/rope.safetensors", fs::copy_options::overwrite_existing);
  const RunResult r = run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + root.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("rope.safetensors: holds encoding 'none', expected 'rope'"));
  fs::remove_all(root);
}

TEST_CASE("case 6: escape sequences in --sentence, metadata and file names reach the terminal escaped") {
  RunResult r = run_program("05_positional_encoding", {"--no-color", "--sentence", "\x1b[2J 猫 鱼"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(no_raw_escape(r));
  CHECK(r.has("\\x1b[2J"));
  CHECK(r.has("猫"));

  const fs::path root = scratch_dir("escape");
  Metadata meta;
  read_safetensors(require_data_file("ch00/no_attention.safetensors"), &meta);
  meta["steps"] = "\x1b[2J\x1b]0;owned\x07";
  rewrite_checkpoint("ch00/no_attention.safetensors", root / "m.safetensors", [](float x) { return x; }, &meta);
  r = run_program("00_seq2seq_bottleneck", {"--no-color", "--checkpoint", (root / "m.safetensors").string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(no_raw_escape(r));
  CHECK(r.has("\\x1b[2J\\x1b]0;owned\\x07 steps"));

  r = run_program("00_seq2seq_bottleneck", {"--checkpoint", (root / "\x1b[2Jx.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(no_raw_escape(r));
  CHECK(r.err_has("\\x1b[2Jx.safetensors"));
  fs::remove_all(root);
}

TEST_CASE("case 7: chapter 03 --export killed before, during and after the swap leaves a whole export") {
  const fs::path root = scratch_dir("export-kill");
  const fs::path dir = root / "out";
  fs::create_directories(root);  // --export makes DIR itself, not the folders above it
  REQUIRE(run_program("03_self_attention", {"--quiet", "--export", dir.string(), "--seed", "2"}).status == 0);
  const auto second = hostile::snapshot(dir);
  REQUIRE(run_program("03_self_attention", {"--quiet", "--export", dir.string(), "--seed", "1"}).status == 0);
  const auto first = hostile::snapshot(dir);
  REQUIRE(first.size() == 23);  // 22 tensors and the manifest
  // Points: 0–21 after each tensor, 22 after the manifest (before the swap), 23 after the swap.
  for (int at : {0, 11, 22, 23}) {
    CAPTURE(at);
    const RunResult r = run_program("03_self_attention", {"--quiet", "--export", dir.string(), "--seed", "2"},
                                    {"ATTN_EXPORT_KILL_AT=" + std::to_string(at)});
    CHECK(r.status == 128 + 9);  // SIGKILL
    CHECK(hostile::snapshot(dir) == (at < 23 ? first : second));
    REQUIRE(run_program("03_self_attention", {"--quiet", "--export", dir.string(), "--seed", "1"}).status == 0);
    CHECK(hostile::snapshot(dir) == first);
    for (const auto& e : fs::directory_iterator(root)) CHECK(e.path().filename() == "out");  // leftovers removed
  }
  fs::remove_all(root);
}

TEST_CASE("case 8: attn-bleu refuses folders, devices and endless lines") {
  const fs::path root = scratch_dir("bleu");
  fs::create_directories(root);
  RunResult r = run_program("attn-bleu", {root.string(), root.string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("is a folder, not a file"));
  r = run_program("attn-bleu", {"/dev/zero", "/dev/zero"});
  CHECK(r.status == 2);
  CHECK(r.err_has("'/dev/zero' is not a regular file"));
  {
    std::ofstream f(root / "long.txt");
    f << "a b c\n" << std::string(2 << 20, 'x') << "\n";
  }
  r = run_program("attn-bleu", {(root / "long.txt").string(), (root / "long.txt").string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("line 2 of reference file"));
  CHECK(r.err_has("is longer than 1048576 bytes"));
  fs::remove_all(root);
}

TEST_CASE("case 9: chapter 06 says what full attention needs under a memory limit; bad values exit 2") {
  RunResult r = run_program("06_efficient_attention", {"--export", ""});
  CHECK(r.status == 2);
  CHECK(r.err_has("--export: needs a path, got an empty string"));
  r = run_program("06_efficient_attention", {"--max-full-mib", "nan"});
  CHECK(r.status == 2);
  CHECK(r.err_has("--max-full-mib"));
  if (kAsan) return;  // (the sanitizer build cannot run under ulimit -v)
  // 2 × 65536² floats = 32 GiB for scores and weights, under an 8 GiB address-space limit.
  const std::string cmd = "ulimit -v 8388608; exec " + shell_quote(program_dir() + "/06_efficient_attention") +
                          " --quiet --sizes 65536 --max-full-mib 1e6 </dev/null 2>&1";
  std::string out;
  FILE* p = ::popen(("bash -c " + shell_quote(cmd)).c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int raw = ::pclose(p);
  CHECK(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 1);
  CHECK_MESSAGE(out.find("full attention at n = 65536 needs 32.0 GiB") != std::string::npos, out);
  CHECK(out.find("bad_alloc") == std::string::npos);
}

TEST_CASE("case 10: a copied program finds data next to itself before the source tree") {
  // prefix/bin/05_positional_encoding with prefix/share/attention_step_by_step/data/ch05/ holding a
  // NaN rope.safetensors: the error names the copy's file, so that place was searched first.
  const fs::path prefix = scratch_dir("relocated");
  const fs::path data = prefix / "share/attention_step_by_step/data";
  fs::create_directories(prefix / "bin");
  fs::copy_file(program_dir() + "/05_positional_encoding", prefix / "bin/05_positional_encoding");
  for (const char* e : {"none", "sinusoidal", "learned", "rope", "alibi"})
    copy_shipped(fmt::format("ch05/{}.safetensors", e), data);
  rewrite_checkpoint("ch05/rope.safetensors", data / "ch05/rope.safetensors", [](float) { return NAN; });
  const RunResult r = run_program((prefix / "bin/05_positional_encoding").string(), {"--quiet"}, {"ATTN_DATA_DIR="});
  CHECK(r.status == 1);
  CHECK(r.err_has((data / "ch05/rope.safetensors").string()));
  fs::remove_all(prefix);
}
