// .npy writing and reading, and the export contract: files + manifest.json written atomically,
// refused up front when the folder cannot be written, names validated.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attn/present/export.hpp"
#include "attn/data/npy.hpp"
#include "attn/tensor/rng.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("attn-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}
}  // namespace

TEST_CASE("npy: header is 64-byte aligned and round-trips float32 exactly") {
  Rng rng(1);
  const Mat m = rng.normal_mat(3, 5);
  const std::string bytes = npy_bytes(m.data(), {3, 5});
  CHECK(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  CHECK(bytes.find("'descr': '<f4', 'fortran_order': False, 'shape': (3, 5)") != std::string::npos);
  const NpyArray a = parse_npy(bytes, "mem");
  CHECK(a.shape == Shape{3, 5});
  const Mat back = npy_to_mat(a, "mem");
  CHECK(back == m);
  const float one = 1.0f;
  CHECK(npy_bytes(&one, {1}).find("'shape': (1,)") != std::string::npos);
}

TEST_CASE("npy: bad files raise NpyError naming the file") {
  CHECK_THROWS_WITH_AS(parse_npy("hello", "x.npy"), doctest::Contains("x.npy: not a .npy file"), NpyError);
  const float v[4] = {1, 2, 3, 4};
  std::string bytes = npy_bytes(v, {4});
  CHECK_THROWS_WITH_AS(parse_npy(bytes.substr(0, bytes.size() - 3), "t.npy"), doctest::Contains("t.npy: truncated data"), NpyError);
  std::string f8 = bytes;
  f8.replace(f8.find("<f4"), 3, "<i4");
  CHECK_THROWS_WITH_AS(parse_npy(f8, "i.npy"), doctest::Contains("dtype '<i4' is not supported"), NpyError);
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  CHECK_THROWS_AS(parse_npy(fortran, "f.npy"), NpyError);
  CHECK_THROWS_AS(npy_to_mat(parse_npy(bytes, "v.npy"), "v.npy"), NpyError);  // 1-d is not a matrix
  CHECK_THROWS_AS(read_npy("/nonexistent/file.npy"), NpyError);
}

TEST_CASE("export: writes every tensor and a manifest, and nothing else is left behind") {
  const fs::path dir = fresh_dir("export");
  ExportRecorder rec;
  const Mat a = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  const Vec b = {5.0f, 6.0f, 7.0f};
  rec.add("scores", shape_of(a), a.data(), 2);
  rec.add("alibi_slopes", shape_of(b), b.data(), 3);
  rec.write(dir.string(), "03", 7);
  std::ifstream mf(dir / "manifest.json");
  const nlohmann::json j = nlohmann::json::parse(mf);
  CHECK(j["chapter"] == "03");
  CHECK(j["seed"] == 7);
  REQUIRE(j["tensors"].size() == 2);
  CHECK(j["tensors"][0]["name"] == "scores");
  CHECK(j["tensors"][0]["file"] == "scores.npy");
  CHECK(j["tensors"][0]["shape"] == nlohmann::json::array({2, 2}));
  CHECK(j["tensors"][0]["step"] == 2);
  CHECK(npy_to_mat(read_npy((dir / "scores.npy").string()), "scores") == a);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    CHECK(e.path().filename().string()[0] != '.');  // no staging folder or probe left
    ++entries;
  }
  CHECK(entries == 3);
  fs::remove_all(dir);
}

TEST_CASE("export: invalid names, duplicates and unwritable folders are refused") {
  ExportRecorder rec;
  const float x = 1.0f;
  CHECK_THROWS_AS(rec.add("../evil", {1}, &x, 1), ExportError);
  CHECK_THROWS_AS(rec.add("", {1}, &x, 1), ExportError);
  rec.add("ok", {1}, &x, 1);
  CHECK_THROWS_AS(rec.add("ok", {1}, &x, 1), ExportError);
  const fs::path file = fresh_dir("notadir");
  std::ofstream(file) << "x";
  CHECK_THROWS_WITH_AS(prepare_export_dir(file.string()), doctest::Contains("is not a folder"), ExportError);
  CHECK_THROWS_AS(prepare_export_dir((file / "sub").string()), ExportError);
  fs::remove(file);
  const fs::path dangling = fresh_dir("dangling");  // a link to nothing: neither followed nor replaced
  fs::create_symlink(dangling.string() + "-missing", dangling);
  CHECK_THROWS_WITH_AS(prepare_export_dir(dangling.string()), doctest::Contains("which does not exist"), ExportError);
  CHECK(fs::is_symlink(fs::symlink_status(dangling)));
  fs::remove(dangling);
  {  // a relative name after the current folder was removed: said so, not "folder  does not exist"
    const fs::path here = fs::current_path(), gone = fresh_dir("gone");
    fs::create_directories(gone);
    fs::current_path(gone);
    fs::remove(gone);
    CHECK_THROWS_WITH_AS(prepare_export_dir("out"), doctest::Contains("was the current folder removed?"), ExportError);
    fs::current_path(here);
  }
  if (::geteuid() != 0) {  // root can write anywhere; the read-only check only means something for users
    const fs::path ro = fresh_dir("readonly");
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_AS(prepare_export_dir(ro.string()), ExportError);
    fs::permissions(ro, fs::perms::owner_all);
    fs::remove_all(ro);
  }
}
