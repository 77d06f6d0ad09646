// Hostile cases of the project's own (none of them a reproduction from the hostile-input report):
// one TEST_CASE per case, each run as a learner runs the program, on files planted in a temporary
// folder or on poisoned copies of the shipped data (never the checkout's data/). Every case checks
// the exit status, that the message names what is wrong, and that the victim file or folder is
// unchanged byte for byte (or that nothing was created). Kinds: output paths (symbolic-link loops,
// links out of the tree, trailing slashes, names past PATH_MAX and NAME_MAX, a read-only folder,
// newline and leading dash in a name), corrupted checkpoints and tokenizers, option values at and
// past their bounds (octal, hexadecimal, separators, 2^32, 2^64, Unicode digits), and the
// environment (COLUMNS, LANG, ATTN_DATA_DIR).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attn/data/data_files.hpp"
#include "../hostile_support.hpp"
#include "run_program.hpp"

namespace fs = std::filesystem;

namespace hostile_own_test {

// A fresh scratch folder holding victim.txt (a file of the user's that no program may touch).
struct Scratch {
  fs::path dir;
  std::string victim_text = "the learner's notes\n";
  explicit Scratch(const std::string& name) : dir(scratch_dir("own-" + name)) {
    fs::create_directories(dir);
    hostile::write_bytes(victim(), victim_text);
  }
  ~Scratch() {
    std::error_code ec;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir, ec);
  }
  fs::path victim() const { return dir / "victim.txt"; }
  bool victim_intact() const { return hostile::read_bytes(victim()) == victim_text; }
  // Every entry of the folder, names only: to check that nothing was created.
  std::size_t entries() const {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename() != "" ? 1 : 0;
    return n;
  }
};

// Chapter 03 --html path: exit 2 before any output, the message names --html and `why`, and the
// scratch folder still holds only victim.txt.
void check_html_refused(const Scratch& s, const std::string& path, const std::string& why) {
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html", path});
  CHECK(r.status == 2);
  CHECK(r.err_has("--html: "));
  CHECK(r.err_has(why));
  CHECK(r.out.empty());
  CHECK(s.entries() == 1);
  CHECK(s.victim_intact());
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return s.replace(at, from.size(), to);
}

// Chapter 05 on a copy of data/ch05 whose rope.safetensors is `bytes`: the run's result.
RunResult ch05_with_rope(const Scratch& s, const std::string& bytes) {
  const fs::path root = s.dir / "data";
  if (!fs::exists(root / "ch05")) hostile::copy_data_folder("ch05", root);
  hostile::write_bytes(root / "ch05/rope.safetensors", bytes);
  return run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + root.string()});
}
std::string shipped_rope() { return hostile::read_bytes(require_data_file("ch05/rope.safetensors")); }
// Chapter 05 with rope.safetensors' header text edited (from → to, the data as shipped).
RunResult ch05_with_header(const Scratch& s, const std::string& from, const std::string& to) {
  const hostile::SafetensorsParts p = hostile::split_safetensors(shipped_rope());
  return ch05_with_rope(s, hostile::safetensors_bytes(replaced(p.header, from, to), p.data));
}
// The run failed (exit 1) naming the file and saying `what`.
void check_rope_refused(const RunResult& r, const std::string& what) {
  CHECK(r.status == 1);
  CHECK(r.err_has("ch05/rope.safetensors"));
  CHECK(r.err_has(what));
  CHECK_FALSE(r.has("Takeaway"));
}

// The longest line of text in code points (the chapters print one column per code point here).
std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0, n = 0;
  for (unsigned char c : text) {
    if (c == '\n') widest = std::max(widest, n), n = 0;
    else if ((c & 0xC0) != 0x80) ++n;
  }
  return std::max(widest, n);
}

}  // namespace hostile_own_test

using namespace hostile_own_test;

// ---- output paths ----

TEST_CASE("own 1: --html at a loop of symbolic links is refused, the links stay") {
  Scratch s("html-loop");
  fs::create_symlink("b", s.dir / "a");
  fs::create_symlink("a", s.dir / "b");
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html", (s.dir / "a").string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--html"));
  CHECK(r.err_has("symbolic links"));
  CHECK(r.out.empty());
  CHECK(hostile::is_link(s.dir / "a"));
  CHECK(hostile::is_link(s.dir / "b"));
  CHECK(s.entries() == 3);
}

TEST_CASE("own 2: --html NAME/ with a trailing slash names a folder; nothing is created") {
  Scratch s("html-slash");
  check_html_refused(s, (s.dir / "page").string() + "/", "names a folder");
}

TEST_CASE("own 3: --html at an existing folder written with a trailing slash leaves the folder alone") {
  Scratch s("html-dir-slash");
  fs::create_directories(s.dir / "mine");
  hostile::write_bytes(s.dir / "mine/keep.txt", "keep");
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html", (s.dir / "mine").string() + "/"});
  CHECK(r.status == 2);
  CHECK(r.err_has("is a folder"));
  CHECK(hostile::read_bytes(s.dir / "mine/keep.txt") == "keep");
  CHECK(fs::is_directory(s.dir / "mine"));
}

TEST_CASE("own 4: --export at an existing file is refused; the file is unchanged") {
  Scratch s("export-file");
  const RunResult r = run_program("03_self_attention", {"--quiet", "--export", s.victim().string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--export"));
  CHECK(r.err_has("not a folder"));
  CHECK(s.victim_intact());
}

TEST_CASE("own 5: --export at a link to a file outside the folder is refused; the file is unchanged") {
  Scratch s("export-link");
  Scratch outside("export-link-outside");
  fs::create_symlink(outside.victim(), s.dir / "out");
  const RunResult r = run_program("03_self_attention", {"--quiet", "--export", (s.dir / "out").string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--export"));
  CHECK(outside.victim_intact());
  CHECK(hostile::is_link(s.dir / "out"));
}

TEST_CASE("own 6: --export at a loop of symbolic links is refused; nothing is created") {
  Scratch s("export-loop");
  fs::create_symlink("b", s.dir / "a");
  fs::create_symlink("a", s.dir / "b");
  const RunResult r = run_program("03_self_attention", {"--quiet", "--export", (s.dir / "a").string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--export"));
  CHECK(hostile::is_link(s.dir / "a"));
  CHECK(s.entries() == 3);
}

TEST_CASE("own 7: --html and --export past PATH_MAX are refused with a message, not a crash") {
  Scratch s("path-max");
  std::string deep = s.dir.string();
  while (deep.size() <= 4200) deep += "/" + std::string(200, 'd');
  for (const char* flag : {"--html", "--export"}) {
    CAPTURE(flag);
    const RunResult r = run_program("03_self_attention", {"--quiet", flag, deep + "/x"});
    CHECK_FALSE(hostile::crashed(r.status, r.err));
    CHECK(r.status == 2);
    CHECK(r.err_has(flag));
    CHECK(r.out.empty());
  }
  CHECK(s.entries() == 1);
}

TEST_CASE("own 8: --html whose file name is longer than NAME_MAX is refused; nothing is created") {
  Scratch s("name-max");
  check_html_refused(s, (s.dir / std::string(300, 'n')).string(), "File name too long");
}

TEST_CASE("own 9: --html into a read-only folder fails before any work, writing nothing") {
  Scratch s("readonly");
  fs::create_directories(s.dir / "ro");
  ::chmod(s.dir.c_str(), 0755);
  ::chmod((s.dir / "ro").c_str(), 0555);
  const std::string page = (s.dir / "ro/page.html").string();
  // As root a folder's mode does not stop a write: the program then runs as nobody.
  const bool root = ::geteuid() == 0;
  const std::string program = root ? "/usr/bin/setpriv" : program_dir() + "/03_self_attention";
  std::vector<std::string> args = {"--quiet", "--html", page};
  if (root) args.insert(args.begin(), {"--reuid=65534", "--regid=65534", "--clear-groups", program_dir() + "/03_self_attention"});
  const RunResult r = run_program(program, args);
  CHECK(r.status == 2);
  CHECK(r.err_has("--html"));
  CHECK(r.err_has("not writable"));
  CHECK(r.out.empty());
  CHECK(fs::is_empty(s.dir / "ro"));
}

TEST_CASE("own 10: an --html name with a newline and a tab is written as named and printed escaped") {
  Scratch s("newline");
  const fs::path page = s.dir / "a\nb\tc.html";
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html", page.string()});
  CHECK(r.status == 0);
  CHECK(fs::is_regular_file(page));
  CHECK(r.has("a\\x0ab\\x09c.html"));
  CHECK(r.out.find("a\nb") == std::string::npos);
  CHECK(s.victim_intact());
}

TEST_CASE("own 11: --html=-page.html is a file name; --html followed by another option is a missing value") {
  Scratch s("dash");
  const fs::path page = s.dir / "-page.html";
  const RunResult r = run_program("03_self_attention", {"--quiet", "--html=" + page.string()});
  CHECK(r.status == 0);
  CHECK(fs::is_regular_file(page));
  // "--html --quiet": CLI11 took --quiet as the file name, wrote ./--quiet and ran without --quiet.
  for (const char* next : {"--quiet", "--seed=3", "--export"}) {
    CAPTURE(next);
    const RunResult forgot = run_program("03_self_attention", {"--html", next}, {"-C", s.dir.string()});
    CHECK(forgot.status == 2);
    CHECK(forgot.err_has("--html: got '" + std::string(next) + "', which is an option of its own"));
    CHECK(forgot.out.empty());
    CHECK(s.entries() == 2);  // victim.txt and -page.html: no file named after the option
  }
  const RunResult named = run_program("03_self_attention", {"--quiet", "--html", "./--quiet"}, {"-C", s.dir.string()});
  CHECK(named.status == 0);  // the way to name such a file
  CHECK(fs::is_regular_file(s.dir / "--quiet"));
}

TEST_CASE("own 12: --train --checkpoint at a link to a text file outside the tree leaves the text alone") {
  Scratch s("ckpt-link");
  Scratch outside("ckpt-link-outside");
  const fs::path link = s.dir / "model.safetensors";
  fs::create_symlink(outside.victim(), link);
  const RunResult r = run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1", "--checkpoint", link.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("is not a checkpoint"));
  CHECK(r.err_has(link.string()));
  CHECK(outside.victim_intact());
  CHECK(hostile::is_link(link));
  CHECK(r.out.find("loss") == std::string::npos);  // refused before training
}

TEST_CASE("own 13: --train --checkpoint naming a text file by mistake leaves it byte for byte") {
  Scratch s("ckpt-text");
  const RunResult r =
      run_program("00_seq2seq_bottleneck", {"--quiet", "--train", "--steps", "1", "--checkpoint", s.victim().string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("is not a checkpoint"));
  CHECK(s.victim_intact());
  CHECK(s.entries() == 1);  // no temporary left
}

TEST_CASE("own 14: --checkpoint and --transformer at a loop of links name the file, not a std::filesystem error") {
  Scratch s("load-loop");
  fs::create_symlink("b", s.dir / "a");
  fs::create_symlink("a", s.dir / "b");
  const std::string a = (s.dir / "a").string();
  const RunResult r = run_program("00_seq2seq_bottleneck", {"--quiet", "--checkpoint", a});
  CHECK(r.status == 1);
  CHECK(r.err_has(a + ": cannot read the checkpoint"));
  CHECK_FALSE(r.err_has("filesystem error"));
  // --transformer is only read: refused while the command line is parsed, naming the file.
  const RunResult t = run_program("07_cross_attention", {"--quiet", "--transformer", a});
  CHECK(t.status == 2);
  CHECK(t.err_has("--transformer: "));
  CHECK(t.err_has(a));
  CHECK_FALSE(t.err_has("filesystem error"));
  CHECK(hostile::is_link(s.dir / "a"));
}

TEST_CASE("own 15: --checkpoint-dir naming a file, with and without --train, leaves the file alone") {
  Scratch s("ckdir-file");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--quiet", "--checkpoint-dir", s.victim().string()},
        std::vector<std::string>{"--quiet", "--train", "--steps", "1", "--checkpoint-dir", s.victim().string()}}) {
    const RunResult r = run_program("02_luong", args);
    CHECK(r.status == 1);
    CHECK(r.err_has(s.victim().string()));
    CHECK(s.victim_intact());
  }
  CHECK(s.entries() == 1);
}

// ---- corrupted data files ----

TEST_CASE("own 16: a checkpoint whose header names one tensor twice is refused, naming the tensor") {
  Scratch s("dup-tensor");
  const hostile::SafetensorsParts p = hostile::split_safetensors(shipped_rope());
  std::string header = p.header.substr(0, p.header.find_last_not_of(' ') + 1);
  header.pop_back();  // the closing brace
  header += R"(,"attn.k.w":{"dtype":"F32","shape":[32,32],"data_offsets":[4096,8192]}})";
  check_rope_refused(ch05_with_rope(s, hostile::safetensors_bytes(header, p.data)), "names 'attn.k.w' twice");
}

TEST_CASE("own 17: a header length beyond the file's size is refused as truncated") {
  Scratch s("len-beyond");
  std::string bytes = shipped_rope();
  bytes[2] = char(0x7f);  // the length's third byte: ~8 MB, more than the file holds
  check_rope_refused(ch05_with_rope(s, bytes), "truncated: the header length is");
}

TEST_CASE("own 18: a file cut inside its header is refused as truncated") {
  Scratch s("cut-header");
  check_rope_refused(ch05_with_rope(s, shipped_rope().substr(0, 200)), "rope.safetensors: truncated");
}

TEST_CASE("own 19: a tensor labelled F16 or I32 is refused, naming the tensor and the dtype") {
  Scratch s("dtype");
  for (const std::string dtype : {"F16", "I32", "BF16"}) {
    CAPTURE(dtype);
    check_rope_refused(ch05_with_header(s, R"("attn.k.w":{"dtype":"F32")", R"("attn.k.w":{"dtype":")" + dtype + "\""),
                       "tensor 'attn.k.w' has dtype " + dtype);
  }
}

TEST_CASE("own 20: a shape whose product overflows 64 bits is refused, not wrapped") {
  Scratch s("shape-overflow");
  check_rope_refused(ch05_with_header(s, R"("shape":[32,32],"data_offsets":[0,4096])",
                                      R"("shape":[4294967296,4294967296,16],"data_offsets":[0,4096])"),
                     "tensor 'attn.k.w': shape");
}

TEST_CASE("own 21: data_offsets of 10^30 or 1e300 are refused, naming the tensor") {
  Scratch s("huge-offsets");
  for (const std::string end : {"1000000000000000000000000000000", "1e300"}) {
    CAPTURE(end);
    check_rope_refused(ch05_with_header(s, R"("data_offsets":[0,4096])", R"("data_offsets":[0,)" + end + "]"),
                       "tensor 'attn.k.w': data_offsets must be two non-negative integers");
  }
}

TEST_CASE("own 35: a checkpoint with one data byte flipped, or spliced from two files, is refused as changed") {
  // The file a learner's run reads was changed after it was written (a bad disk, another program
  // rewriting it in place while chapter 05 read it): its checksum says so, exit 1, no figures.
  Scratch s("checksum");
  std::string flipped = shipped_rope();
  flipped[flipped.size() - 7] ^= 0x01;  // a low mantissa bit: the value stays finite and plausible
  check_rope_refused(ch05_with_rope(s, flipped), "rope.safetensors: changed or is corrupt: checksum fnv1a64:");
  const std::string rope = shipped_rope(), alibi = hostile::read_bytes(require_data_file("ch05/alibi.safetensors"));
  REQUIRE(rope.size() == alibi.size());
  const std::string mixed = rope.substr(0, rope.size() / 2) + alibi.substr(rope.size() / 2);
  const RunResult r = ch05_with_rope(s, mixed);
  check_rope_refused(r, "of its data, expected fnv1a64:");
  // The control: the shipped bytes put back read again.
  CHECK(ch05_with_rope(s, rope).status == 0);
}

TEST_CASE("own 22: a metadata value that is a JSON number, not a string, is refused naming the key") {
  Scratch s("meta-number");
  check_rope_refused(ch05_with_header(s, R"("steps":"3000")", R"("steps":3000)"), "__metadata__ value 'steps' is not a string");
}

TEST_CASE("own 23: tokenizer.json's vocab_size of the wrong JSON type names the file, the key, expected and found") {
  Scratch s("vocab-type");
  const fs::path root = s.dir / "data";
  const fs::path tok = hostile::copy_of_shipped("ch09/tokenizer.json", root);
  const std::string good = hostile::read_bytes(tok);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\"512\"", "found a JSON string"}, {"null", "found a JSON null"}, {"[512]", "found a JSON array"},
      {"512.5", "found a number with a fraction"}, {"-512", "found a negative number"}, {"true", "found a JSON boolean"}};
  for (const auto& [value, found] : cases) {
    CAPTURE(value);
    hostile::write_bytes(tok, replaced(good, "\"vocab_size\":512", "\"vocab_size\":" + value));
    const RunResult r = run_program("09_modern_decoder", {"--quiet", "--tokens", "5"}, {"ATTN_DATA_DIR=" + root.string()});
    CHECK(r.status == 1);
    CHECK(r.err_has(tok.string()));
    CHECK(r.err_has("key \"vocab_size\" must be a non-negative whole number (JSON integer)"));
    CHECK(r.err_has(found));
  }
}

TEST_CASE("own 24: tokenizer.json with NaN or 1e999 inside is refused naming the file; no crash") {
  Scratch s("tok-nan");
  const fs::path root = s.dir / "data";
  const fs::path tok = hostile::copy_of_shipped("ch09/tokenizer.json", root);
  const std::string good = hostile::read_bytes(tok);
  for (const std::string& text : {replaced(good, "[116,104]", "[NaN,104]"), replaced(good, "\"vocab_size\":512", "\"vocab_size\":1e999"),
                                  replaced(good, "[116,104]", "[116.0,104]")}) {
    hostile::write_bytes(tok, text);
    const RunResult r = run_program("09_modern_decoder", {"--quiet", "--tokens", "5"}, {"ATTN_DATA_DIR=" + root.string()});
    CHECK_FALSE(hostile::crashed(r.status, r.err));
    CHECK(r.status == 1);
    CHECK(r.err_has(tok.string()));
  }
}

TEST_CASE("own 25: chapter 10 with weights of 1e38 names the file and the tensor, not a function") {
  Scratch s("ch10-huge");
  const fs::path root = s.dir / "data";
  hostile::copy_data_folder("ch10", root);
  const fs::path model = root / "ch10/induction.safetensors";
  // Every value 1e38, written as a file of ours (its checksums match: the values are what is wrong).
  hostile::rewrite_checkpoint(model, model, [](float) { return 1e38f; });
  const RunResult r = run_program("10_interpretability", {"--quiet"}, {"ATTN_DATA_DIR=" + root.string()});
  CHECK_FALSE(hostile::crashed(r.status, r.err));
  CHECK(r.status == 1);
  CHECK(r.err_has(model.string()));
  CHECK(r.err_has("tensor 'w_e'"));
  CHECK(r.err_has("non-finite"));
  CHECK_FALSE(r.err_has("copying_score"));
}

// ---- option values at their bounds ----

TEST_CASE("own 26: a whole-number option written in octal, hex, binary or with separators is refused") {
  // CLI11 alone read 010 as 8 and 0x10 as 16: a run with another value than the one typed.
  for (const char* v : {"010", "0x10", "0b11", "0o10", "1'0", " 8", "08"}) {
    CAPTURE(v);
    const RunResult r = run_program("03_self_attention", {"--quiet", "--d-model", v});
    CHECK(r.status == 2);
    CHECK(r.err_has("--d-model"));
    CHECK(r.err_has("decimal digits"));
    CHECK(r.out.empty());
  }
  const RunResult plain = run_program("03_self_attention", {"--quiet", "--d-model", "10"});  // the control
  CHECK(plain.status == 0);
}

TEST_CASE("own 27: --seed past 2^32 - 1, at 2^64, negative or in hex exits 2 naming --seed") {
  for (const char* v : {"4294967296", "18446744073709551616", "-1", "0x10", "1e3"}) {
    CAPTURE(v);
    const RunResult r = run_program("03_self_attention", {"--quiet", "--seed", v});
    CHECK(r.status == 2);
    CHECK(r.err_has("--seed"));
  }
  CHECK(run_program("03_self_attention", {"--quiet", "--seed", "4294967295"}).status == 0);  // the bound itself
}

TEST_CASE("own 28: a list option with 2^31, a hex, negative or exponent item exits 2 naming it") {
  for (const char* v : {"256,2147483648", "256,0x100", "256,-512", "256,1e3"}) {
    CAPTURE(v);
    const RunResult r = run_program("06_efficient_attention", {"--quiet", "--sizes", v});
    CHECK(r.status == 2);
    CHECK(r.err_has("--sizes"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("own 29: Unicode digits (Arabic-Indic, full-width) are not numbers") {
  for (const char* v : {"\u0661\u0662", "\uff18", "\u0968"}) {
    CAPTURE(v);
    const RunResult r = run_program("03_self_attention", {"--quiet", "--d-model", v});
    CHECK(r.status == 2);
    CHECK(r.err_has("--d-model"));
  }
}

// ---- the environment ----

TEST_CASE("own 30: COLUMNS of 0, -5, 99999 or text: lines still fit 100 columns") {
  for (const char* c : {"COLUMNS=0", "COLUMNS=-5", "COLUMNS=99999", "COLUMNS=abc", "COLUMNS=1e3"}) {
    CAPTURE(c);
    const RunResult r = run_program("03_self_attention", {"--no-color"}, {c});
    CHECK(r.status == 0);
    CHECK(widest_line(r.out) <= 100);
    CHECK(r.has("Takeaway"));
  }
}

TEST_CASE("own 31: an unknown LANG gives the English lesson, not an error") {
  const RunResult r = run_program("04_multi_head", {"--quiet", "--no-color"}, {"LANG=xx_YY.UTF-8"});
  CHECK(r.status == 0);
  CHECK(r.has("Chapter 04"));
  CHECK(r.err.empty());
}

TEST_CASE("own 32: ATTN_DATA_DIR naming a file is refused by name; the file is unchanged") {
  Scratch s("datadir-file");
  const RunResult r = run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + s.victim().string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("ATTN_DATA_DIR=" + s.victim().string() + " is not a folder"));
  CHECK(s.victim_intact());
}

TEST_CASE("own 33: a relative ATTN_DATA_DIR is read from the working folder") {
  Scratch s("datadir-relative");
  hostile::copy_data_folder("ch05", s.dir / "mydata");
  const RunResult r = run_program("05_positional_encoding", {"--quiet"}, {"-C", s.dir.string(), "ATTN_DATA_DIR=mydata"});
  CHECK(r.status == 0);
  // The control: from another folder the same relative name names nothing, and that is said.
  const RunResult elsewhere = run_program("05_positional_encoding", {"--quiet"}, {"-C", "/", "ATTN_DATA_DIR=mydata"});
  CHECK(elsewhere.status == 1);
  CHECK(elsewhere.err_has("ATTN_DATA_DIR=mydata"));
}

TEST_CASE("own 34: ATTN_DATA_DIR at a loop of symbolic links is refused by name") {
  Scratch s("datadir-loop");
  fs::create_symlink("b", s.dir / "a");
  fs::create_symlink("a", s.dir / "b");
  const RunResult r = run_program("05_positional_encoding", {"--quiet"}, {"ATTN_DATA_DIR=" + (s.dir / "a").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("ATTN_DATA_DIR="));
  CHECK(hostile::is_link(s.dir / "a"));
}
