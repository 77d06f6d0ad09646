// safetensors checkpoints: round trip, byte-exact layout, and every bad file the reader must
// refuse (truncated, absurd header length, bad JSON, overlapping / out-of-range offsets, holes,
// wrong dtype, byte count vs shape, missing / extra tensor, shape mismatch) — each with an error
// naming the file and the tensor, and a model left untouched. The fixture case also writes the
// file that tests/read_safetensors.py checks with numpy (ctest: safetensors_numpy_reader).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "attn/nn/linear.hpp"
#include "attn/data/safetensors.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("attn_st_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// A hand-made file: 8-byte little-endian length, the header text, then `data_bytes` bytes.
std::string write_raw(const std::string& name, const std::string& header, std::size_t data_bytes,
                      std::uint64_t claimed_len = UINT64_MAX) {
  const std::string path = (temp_dir() / name).string();
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t n = claimed_len == UINT64_MAX ? header.size() : claimed_len;
  for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xff));
  out << header;
  for (std::size_t i = 0; i < data_bytes; ++i) out.put('\0');
  return path;
}

void expect_error(const std::string& path, const std::string& fragment) {
  CAPTURE(fragment);
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(fragment.c_str()), SafetensorsError);
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(path.c_str()), SafetensorsError);
}

}  // namespace

TEST_CASE("safetensors: round trip of a model by parameter name, with metadata") {
  Rng rng(1);
  Linear a = linear_init(3, 5, rng), da = zeros_like(a);
  ParamRegistry reg;
  register_params(reg, "proj", a, da);
  const std::string path = (temp_dir() / "roundtrip.safetensors").string();
  save_checkpoint(path, reg, {{"step", "700"}});

  Rng rng2(2);
  Linear b = linear_init(3, 5, rng2), db = zeros_like(b);
  ParamRegistry reg2;
  register_params(reg2, "proj", b, db);
  Metadata meta;
  load_checkpoint(path, reg2, false, &meta);
  CHECK(b.w == a.w);
  CHECK(b.b == a.b);
  CHECK(meta.at("step") == "700");
  // checkpoint_tensors copies what save_checkpoint writes: the same names, shapes and values.
  const TensorMap copied = checkpoint_tensors(reg), written = read_safetensors(path);
  REQUIRE(copied.size() == written.size());
  for (const auto& [name, t] : written) {
    CAPTURE(name);
    REQUIRE(copied.count(name) == 1);
    CHECK(copied.at(name).shape == t.shape);
    CHECK(copied.at(name).data == t.data);
  }

  // Layout: 8-byte length, a header padded to a multiple of 8, then 4·(15 + 5) data bytes.
  std::ifstream in(path, std::ios::binary);
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  CHECK(n % 8 == 0);
  CHECK(fs::file_size(path) == 8 + n + 4 * 20);
  // No temporary file is left behind.
  for (const auto& f : fs::directory_iterator(temp_dir())) CHECK(f.path().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("safetensors: writes the fixture that the numpy reader checks") {
  // Values chosen to be exact in float32; tests/read_safetensors.py --check knows them.
  TensorMap t;
  t["alpha"] = TensorF32{{2, 3}, {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f}};
  t["beta.bias"] = TensorF32{{3}, {-1.5f, 2.25f, 1024.0f}};
  t["scalar"] = TensorF32{{}, {7.0f}};
  const char* env = std::getenv("ATTN_SAFETENSORS_FIXTURE");
  const std::string path = env ? env : (temp_dir() / "fixture.safetensors").string();
  write_safetensors(path, t, {{"written_by", "attention-step-by-step"}});
  Metadata meta;
  TensorMap back = read_safetensors(path, &meta);
  CHECK(back.at("alpha").shape == Shape{2, 3});
  CHECK(back.at("alpha").data == t["alpha"].data);
  CHECK(back.at("scalar").shape.empty());
  CHECK(back.at("beta.bias").data[2] == 1024.0f);
  CHECK(meta.at("written_by") == "attention-step-by-step");
}

TEST_CASE("safetensors: each bad file raises a clear error naming the file and the tensor") {
  const std::string ok = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  CHECK_NOTHROW(read_safetensors(write_raw("ok.safetensors", ok, 8)));
  SUBCASE("missing file") { expect_error((temp_dir() / "nope.safetensors").string(), "cannot open"); }
  SUBCASE("shorter than the length field") {
    const std::string p = (temp_dir() / "tiny.safetensors").string();
    std::ofstream(p, std::ios::binary) << "abc";
    expect_error(p, "truncated: 3 bytes");
  }
  SUBCASE("absurd header length") { expect_error(write_raw("absurd.safetensors", ok, 8, 1ull << 60), "absurd header length"); }
  SUBCASE("header length past the end") { expect_error(write_raw("hlen.safetensors", ok, 0, 5000), "truncated: the header length is 5000"); }
  SUBCASE("truncated data") { expect_error(write_raw("trunc.safetensors", ok, 5), "tensor 'w': data_offsets [0, 8] run past the end"); }
  SUBCASE("invalid JSON") { expect_error(write_raw("json.safetensors", "{\"w\": [", 0), "not valid JSON"); }
  SUBCASE("wrong dtype") {
    expect_error(write_raw("dtype.safetensors", R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4),
                 "tensor 'w' has dtype F16");
  }
  SUBCASE("bytes do not match the shape") {
    expect_error(write_raw("count.safetensors", R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
                 "tensor 'w': shape (3,) needs 12 bytes");
  }
  SUBCASE("overlapping offsets") {
    expect_error(write_raw("overlap.safetensors",
                           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
                 "tensors 'a' and 'b' have overlapping data_offsets");
  }
  SUBCASE("offsets end before they begin") {
    expect_error(write_raw("reversed.safetensors", R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8),
                 "tensor 'w': data_offsets [8, 0] end before they begin");
  }
  SUBCASE("a hole in the data") {
    expect_error(write_raw("hole.safetensors", R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
                 "before tensor 'w' belong to no tensor");
  }
  SUBCASE("missing fields") {
    expect_error(write_raw("fields.safetensors", R"({"w":{"dtype":"F32","shape":[2]}})", 8), "tensor 'w' needs dtype, shape and data_offsets");
  }
}

TEST_CASE("safetensors: load_checkpoint is all or nothing (missing, extra, shape mismatch)") {
  Rng rng(3);
  Linear a = linear_init(3, 5, rng), da = zeros_like(a);
  ParamRegistry reg;
  register_params(reg, "proj", a, da);
  const std::string path = (temp_dir() / "model.safetensors").string();
  save_checkpoint(path, reg);

  // A model with an extra parameter: 'head.w' is missing from the file, and nothing is loaded.
  Linear b = linear_init(3, 5, rng), db = zeros_like(b), c = linear_init(5, 2, rng), dc = zeros_like(c);
  const Mat b_before = b.w;
  ParamRegistry reg2;
  register_params(reg2, "proj", b, db);
  register_params(reg2, "head", c, dc);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, reg2), doctest::Contains("tensor 'head.w' is missing"), SafetensorsError);
  CHECK(b.w == b_before);  // untouched

  // A model with a different shape.
  Linear w = linear_init(3, 4, rng), dw = zeros_like(w);
  ParamRegistry reg3;
  register_params(reg3, "proj", w, dw);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, reg3),
                       doctest::Contains("tensor 'proj.w' has shape (3, 5) but the model needs (3, 4)"), SafetensorsError);

  // A file with a tensor the model lacks: an error unless allowed.
  Linear only_w = linear_init(3, 5, rng, false), donly = zeros_like(only_w);
  ParamRegistry reg4;
  register_params(reg4, "proj", only_w, donly);
  CHECK_THROWS_WITH_AS(load_checkpoint(path, reg4), doctest::Contains("tensor 'proj.b' is not a parameter"), SafetensorsError);
  CHECK_NOTHROW(load_checkpoint(path, reg4, true));
  CHECK(only_w.w == a.w);

  // Writing into a folder that does not exist fails cleanly.
  CHECK_THROWS_AS(save_checkpoint((temp_dir() / "no_such_dir" / "x.safetensors").string(), reg), SafetensorsError);
}
