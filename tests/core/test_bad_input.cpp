// Bad input never crashes, hangs or lies (the core half; tests/chapters/test_bad_input.cpp runs the
// programs): .npy headers that lie about their shape, checkpoints with non-finite values or of
// another model, control characters in untrusted text, exports killed at every point, where
// shipped data is looked for, and the memory check before a huge allocation.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attn/data/data_files.hpp"
#include "attn/data/npy.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/nn/linear.hpp"
#include "attn/present/export.hpp"
#include "attn/present/terminal.hpp"
#include "attn/tensor/memory.hpp"
#include "../hostile_support.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// A .npy file whose header says `shape` (any text) over `data_bytes` zero bytes.
std::string npy_with_shape(const std::string& shape, std::size_t data_bytes, const std::string& descr = "<f4",
                           const std::string& order = "False") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(char(header.size() & 0xff));
  out.push_back(char(header.size() >> 8));
  return out + header + std::string(data_bytes, '\0');
}

}  // namespace

// ---------------------------------------------------------------- case 2: the .npy reader

TEST_CASE("npy: a shape whose element count overflows is refused, not wrapped to zero") {
  // 2^60 · 16 = 2^64 wraps to 0 in 64 bits; the old reader accepted it with no data at all.
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(1152921504606846976, 16)", 0), "X.npy"),
                       doctest::Contains("X.npy: shape (1152921504606846976, 16) has more elements than any file"),
                       NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(4294967296, 4294967296)", 0), "a.npy"),
                       doctest::Contains("more elements than any file"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(99999999999999999999, 1)", 0), "b.npy"),
                       doctest::Contains("b.npy: shape (99999999999999999999, 1) has a dimension too large"), NpyError);
  // A zero dimension makes an empty array (numpy allows it), without reading past the header.
  CHECK(parse_npy(npy_with_shape("(0, 16)", 0), "z.npy").size() == 0);
}

TEST_CASE("npy: non-numeric, negative and malformed dimensions name the file and the value") {
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(abc, 16)", 64), "X.npy"),
                       doctest::Contains("X.npy: shape (abc, 16) holds 'abc', not a non-negative integer"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(-1, 16)", 64), "X.npy"),
                       doctest::Contains("holds '-1', not a non-negative integer"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(4,,4)", 64), "c.npy"), doctest::Contains("c.npy: shape"),
                       NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(1.5,)", 8), "d.npy"), doctest::Contains("holds '1.5'"), NpyError);
  CHECK(parse_npy(npy_with_shape("(4,)", 16), "ok.npy").shape == Shape{4});
  CHECK(parse_npy(npy_with_shape("()", 4), "scalar.npy").shape.empty());
}

TEST_CASE("npy: wrong dtype, byte order, fortran order, missing keys and trailing bytes are named") {
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(2,)", 16, "<i8"), "i.npy"),
                       doctest::Contains("i.npy: dtype '<i8' is not supported"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(2,)", 8, ">f4"), "be.npy"),
                       doctest::Contains("be.npy: dtype '>f4' is big-endian"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(2, 2)", 16, "<f4", "True"), "f.npy"),
                       doctest::Contains("f.npy: Fortran-order"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(2, 2)", 16, "<f4", "maybe"), "m.npy"),
                       doctest::Contains("m.npy: header has no 'fortran_order'"), NpyError);
  CHECK_THROWS_WITH_AS(parse_npy(npy_with_shape("(2,)", 12), "t.npy"),
                       doctest::Contains("t.npy: 4 bytes after the data that shape (2,) needs"), NpyError);
  std::string no_shape = npy_with_shape("(2,)", 8);
  no_shape.replace(no_shape.find("'shape'"), 7, "'shapf'");
  CHECK_THROWS_WITH_AS(parse_npy(no_shape, "s.npy"), doctest::Contains("s.npy: header has no 'shape'"), NpyError);
  std::string short_header = npy_with_shape("(2,)", 8);
  short_header[8] = char(0xff), short_header[9] = char(0xff);  // claims a 65535-byte header
  CHECK_THROWS_WITH_AS(parse_npy(short_header, "h.npy"), doctest::Contains("h.npy: truncated header"), NpyError);
}

TEST_CASE("npy: a folder or a device is refused by name, never read without bound") {
  const fs::path dir = hostile::fresh_dir("bad-npydir", false);
  fs::create_directories(dir);
  CHECK_THROWS_WITH_AS(read_npy(dir.string()), doctest::Contains("not a regular file"), NpyError);
  CHECK_THROWS_WITH_AS(read_npy("/dev/zero"), doctest::Contains("/dev/zero: not a regular file"), NpyError);
  fs::remove_all(dir);
}

TEST_CASE("npy: expect_npy_shape blames the file it is given, with the shape it wanted") {
  const float v[8] = {};
  const NpyArray a = parse_npy(npy_bytes(v, {2, 4}), "X.npy");
  CHECK_NOTHROW(expect_npy_shape(a, {kAnyDim, 4}, "X.npy"));
  CHECK_THROWS_WITH_AS(expect_npy_shape(a, {kAnyDim, 16}, "golden/mha/X.npy"),
                       doctest::Contains("golden/mha/X.npy: expected shape (any, 16), got (2, 4)"), NpyError);
  CHECK_THROWS_WITH_AS(expect_npy_shape(a, {8}, "b.npy"), doctest::Contains("expected shape (8,), got (2, 4)"),
                       NpyError);
}

// ---------------------------------------------------------------- cases 4, 5: checkpoints

TEST_CASE("load_checkpoint: NaN, +inf and -inf are refused naming the tensor, and nothing is copied") {
  const fs::path dir = hostile::fresh_dir("bad-finite", false);
  fs::create_directories(dir);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    CAPTURE(bad);
    TensorMap t;
    t["w"] = TensorF32{{2, 2}, {1.0f, 2.0f, bad, 4.0f}};
    const std::string path = (dir / "bad.safetensors").string();
    write_safetensors(path, t, {{"model", "m"}});
    Mat w = xt::zeros<float>({std::size_t(2), std::size_t(2)}), g = w;
    ParamRegistry reg;
    reg.add("w", w, g);
    CHECK_THROWS_WITH_AS(load_checkpoint(path, reg), doctest::Contains("tensor 'w' holds a non-finite value"),
                         SafetensorsError);
    CHECK_THROWS_WITH_AS(load_checkpoint(path, reg), doctest::Contains("at index 2"), SafetensorsError);
    CHECK(w(0, 0) == 0.0f);  // untouched
  }
  fs::remove_all(dir);
}

TEST_CASE("load_checkpoint: the expected metadata must be there and match, before anything is copied") {
  const fs::path dir = hostile::fresh_dir("bad-meta", false);
  fs::create_directories(dir);
  const std::string path = (dir / "m.safetensors").string();
  TensorMap t;
  t["w"] = TensorF32{{1}, {3.0f}};
  write_safetensors(path, t, {{"encoding", "none"}});
  Vec w = xt::zeros<float>({std::size_t(1)}), g = w;
  ParamRegistry reg;
  reg.add("w", w, g);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, reg, false, nullptr, {{"encoding", "rope"}}),
                       doctest::Contains("holds encoding 'none', expected 'rope'"), SafetensorsError);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, reg, false, nullptr, {{"model", "bahdanau"}}),
                       doctest::Contains("has no 'model' in its __metadata__; expected 'bahdanau'"), SafetensorsError);
  CHECK(w(0) == 0.0f);
  Metadata meta;
  load_checkpoint(path, reg, false, &meta, {{"encoding", "none"}});
  CHECK(w(0) == 3.0f);
  CHECK(meta.at("encoding") == "none");
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- case 6: escaping

TEST_CASE("escape_control: ESC, other C0, DEL, C1 and broken UTF-8 become visible; text stays") {
  CHECK(escape_control("\x1b[2Jgone") == "\\x1b[2Jgone");
  CHECK(escape_control("a\x07" "b\x7f") == "a\\x07b\\x7f");
  CHECK(escape_control("\xc2\x9b" "31m") == "\\u009b31m");  // C1 CSI, U+009B
  CHECK(escape_control("\xff\xfe") == "\\xff\\xfe");
  CHECK(escape_control("\xe7\x8c") == "\\xe7\\x8c");            // a cut-off 猫
  CHECK(escape_control("\xc0\xaf") == "\\xc0\\xaf");            // overlong '/'
  CHECK(escape_control("猫 吃 鱼 · é — ok") == "猫 吃 鱼 · é — ok");
  CHECK(escape_control("line\nnext\ttab") == "line\nnext\ttab");
  CHECK(escape_control("line\nnext\ttab", false) == "line\\x0anext\\x09tab");
  CHECK(escape_control("\r") == "\\x0d");
}

TEST_CASE("escape_control: labels in matrices and heatmaps, and table cells, are escaped") {
  const Mat m = xt::zeros<float>({std::size_t(2), std::size_t(2)});
  const std::string grid = format_matrix(m, {"\x1b[2J", "ok"}, {"a", "b"});
  CHECK(grid.find('\x1b') == std::string::npos);
  CHECK(grid.find("\\x1b[2J") != std::string::npos);
  const std::string heat = format_heatmap(m, {"\x1b]0;t\x07", "ok"}, {"a", "b"});
  CHECK(heat.find('\x1b') == std::string::npos);
}

// ---------------------------------------------------------------- case 7: exports killed at any point

namespace {

// Runs rec.write(dir) in a child process that ATTN_EXPORT_KILL_AT kills at point `kill_at`
// (-1: not killed); returns the child's wait status.
int write_in_child(const ExportRecorder& rec, const fs::path& dir, int kill_at, std::uint64_t seed) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (kill_at >= 0) ::setenv("ATTN_EXPORT_KILL_AT", std::to_string(kill_at).c_str(), 1);
    try {
      rec.write(dir.string(), "03", seed);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

ExportRecorder recorder_with(float value, std::size_t tensors) {
  ExportRecorder rec;
  for (std::size_t i = 0; i < tensors; ++i) {
    const std::vector<float> v(6, value + float(i));
    rec.add("t" + std::to_string(i), {2, 3}, v.data(), 1);
  }
  rec.add_file("results.json", "{\"value\": " + std::to_string(value) + "}\n");
  return rec;
}

std::size_t leftovers(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir.parent_path()))
    if (e.path().filename().string().rfind("." + dir.filename().string() + ".attn-", 0) == 0) ++n;
  return n;
}

}  // namespace

TEST_CASE("export: killed at every point, DIR holds the whole old export or the whole new one") {
  const fs::path root = hostile::fresh_dir("bad-export-kill", false);
  const fs::path dir = root / "out";
  fs::create_directories(root);
  const ExportRecorder old_rec = recorder_with(1.0f, 9), new_rec = recorder_with(100.0f, 9);
  REQUIRE(write_in_child(new_rec, dir, -1, 2) == 0);
  const auto new_files = hostile::snapshot(dir);
  REQUIRE(write_in_child(old_rec, dir, -1, 1) == 0);
  const auto old_files = hostile::snapshot(dir);
  REQUIRE(old_files.size() == 11);  // 9 tensors, results.json, manifest.json
  REQUIRE(old_files != new_files);
  // Points 0–10: after each of the 9 tensors, the extra file and the manifest in staging; 11: after the swap.
  std::set<std::string> seen;
  for (int at = 0; at <= 11; ++at) {
    CAPTURE(at);
    const int status = write_in_child(new_rec, dir, at, 2);
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    const auto now = hostile::snapshot(dir);
    const bool is_old = now == old_files, is_new = now == new_files;
    CHECK((is_old || is_new));
    seen.insert(is_old ? "old" : is_new ? "new" : "mixed");
    CHECK(leftovers(dir) >= 1);  // the killed run's staging folder (or the old export) remains …
    REQUIRE(write_in_child(old_rec, dir, -1, 1) == 0);
    CHECK(leftovers(dir) == 0);  // … until the next export removes it
    CHECK(hostile::snapshot(dir) == old_files);
  }
  CHECK(seen == std::set<std::string>{"old", "new"});  // both sides of the swap were reached
  fs::remove_all(root);
}

TEST_CASE("export: a folder holding anything but an export is refused before work; empty names too") {
  const fs::path root = hostile::fresh_dir("bad-export-foreign", false);
  fs::create_directories(root / "out");
  std::ofstream(root / "out" / "notes.txt") << "mine";
  CHECK_THROWS_WITH_AS(prepare_export_dir((root / "out").string()),
                       doctest::Contains("holds 'notes.txt', and no manifest.json of an earlier export"), ExportError);
  CHECK(fs::exists(root / "out" / "notes.txt"));
  CHECK_THROWS_WITH_AS(prepare_export_dir(""), doctest::Contains("needs a folder name"), ExportError);
  ExportRecorder rec;
  CHECK_THROWS_AS(rec.add_file("manifest.json", "{}"), ExportError);
  CHECK_THROWS_AS(rec.add_file("../x.json", "{}"), ExportError);
  fs::remove_all(root);
}

// ---------------------------------------------------------------- case 10: where data is looked for

TEST_CASE("data_places: $ATTN_DATA_DIR, next to the program, the source tree, the install prefix, in that order") {
  const char* saved = std::getenv("ATTN_DATA_DIR");
  const std::string keep = saved ? saved : "";
  ::setenv("ATTN_DATA_DIR", "/nonexistent/attn-data", 1);
  const std::vector<DataPlace> places = data_places();
  REQUIRE(places.size() == 4);
  CHECK(places[0].dir == "/nonexistent/attn-data");
  CHECK(places[1].why == "next to the program");
  CHECK(places[1].dir.find("share/attention_step_by_step/data") != std::string::npos);
  CHECK(places[2].why == "source tree");
  CHECK(places[2].dir == std::string(ATTN_SOURCE_DIR) + "/data");
  CHECK(places[3].why == "install prefix");
  // A wrong $ATTN_DATA_DIR is said, not passed over for the shipped files behind it; so is one
  // level too deep (a chapter's folder); an empty folder (a scratch one for --train) is fine.
  CHECK_THROWS_WITH_AS(find_data_file("ch05/rope.safetensors"),
                       doctest::Contains("ATTN_DATA_DIR=/nonexistent/attn-data is not a folder"), DataFileError);
  const fs::path scratch = fs::temp_directory_path() / ("attn-bad-places-" + std::to_string(::getpid()));
  fs::create_directories(scratch / "ch05");
  std::ofstream(scratch / "ch05" / "rope.safetensors") << "x";
  ::setenv("ATTN_DATA_DIR", (scratch / "ch05").c_str(), 1);
  CHECK_THROWS_WITH_AS(find_data_file("ch05/rope.safetensors"), doctest::Contains("not one of them"), DataFileError);
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  ::setenv("ATTN_DATA_DIR", scratch.c_str(), 1);
  CHECK(find_data_file("ch05/rope.safetensors").has_value());  // from the source tree, past the empty folder
  // Something else at the file's name in $ATTN_DATA_DIR is named, never passed over.
  fs::create_directories(scratch / "ch05" / "rope.safetensors");
  CHECK_THROWS_WITH_AS(find_data_file("ch05/rope.safetensors"), doctest::Contains("is a folder, not the data file"),
                       DataFileError);
  fs::remove(scratch / "ch05" / "rope.safetensors");
  fs::create_symlink(scratch / "nowhere", scratch / "ch05" / "rope.safetensors");
  CHECK_THROWS_WITH_AS(find_data_file("ch05/rope.safetensors"), doctest::Contains("is a link to nothing"),
                       DataFileError);
  fs::remove(scratch / "ch05" / "rope.safetensors");
  CHECK(find_data_file("ch05/rope.safetensors").has_value());
  const std::vector<DataPlace> places_now = data_places();
  try {
    require_data_file("ch09/none.safetensors");
    FAIL("a missing file must throw");
  } catch (const DataFileError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("shipped data file ch09/none.safetensors not found") != std::string::npos);
    for (const DataPlace& p : places_now) CHECK(msg.find(p.dir + " (" + p.why + ")") != std::string::npos);
    CHECK(msg.find("--train") == std::string::npos);  // a shipped file is never "retrain it"
  }
  fs::remove_all(scratch);
  if (saved) ::setenv("ATTN_DATA_DIR", keep.c_str(), 1);
  else ::unsetenv("ATTN_DATA_DIR");
}

// ---------------------------------------------------------------- case 9: memory before allocating

TEST_CASE("available_memory_bytes: positive, and at most what the machine has") {
  const long long avail = available_memory_bytes();
  REQUIRE(avail > 0);
  std::ifstream f("/proc/meminfo");
  std::string key;
  long long kib = 0;
  f >> key >> kib;  // MemTotal
  CHECK(key == "MemTotal:");
  CHECK(avail <= kib * 1024);
}
