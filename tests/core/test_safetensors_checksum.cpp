// The checksums write_safetensors records (attn/data/safetensors.hpp): a file of ours carries a
// 64-bit FNV-1a of its data and of its header; a flipped byte, a file spliced from the halves of
// two valid files, or an edited header is refused naming the file; a file without them (older, or
// written elsewhere) is still read; every shipped checkpoint carries them and verifies; and a file
// rewritten in place, in two halves, while it is read never yields a mix of the two.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "attn/data/output_file.hpp"
#include "attn/data/safetensors.hpp"
#include "../hostile_support.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// Two tensors of the same shapes (so two files have headers of the same length), values from fill.
TensorMap sample_tensors(float fill) {
  TensorMap t;
  t["a"] = TensorF32{{32, 8}, std::vector<float>(256, fill)};
  t["b"] = TensorF32{{16}, std::vector<float>(16, -fill)};
  for (std::size_t i = 0; i < 256; ++i) t["a"].data[i] += float(i);
  return t;
}

void expect_refused(const std::string& path, const std::string& part) {
  CAPTURE(path);
  const std::string what = "changed or is corrupt: checksum fnv1a64:";
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(what.c_str()), SafetensorsError);
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(("of its " + part + ", expected").c_str()),
                       SafetensorsError);
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(path.c_str()), SafetensorsError);
}

}  // namespace

TEST_CASE("safetensors checksum: written into __metadata__, verified on read, hidden from the caller's metadata") {
  const fs::path d = hostile::fresh_dir("st-sum");
  const std::string path = (d / "m.safetensors").string();
  write_safetensors(path, sample_tensors(1.0f), {{"model", "toy"}});
  const auto parts = hostile::split_safetensors(hostile::read_bytes(path));
  CHECK(parts.header.find("\"checksum_data\":\"" + safetensors_data_checksum(parts.data) + "\"") != std::string::npos);
  CHECK(parts.header.find("\"checksum_header\":\"fnv1a64:") != std::string::npos);
  Metadata meta;
  const TensorMap back = read_safetensors(path, &meta);
  CHECK(meta == Metadata{{"model", "toy"}});
  CHECK(back.at("a").data == sample_tensors(1.0f).at("a").data);
  // The same tensors and metadata give the same bytes (the metadata returned can be written back).
  write_safetensors((d / "again.safetensors").string(), back, meta);
  CHECK(hostile::read_bytes(d / "again.safetensors") == hostile::read_bytes(path));
  // No metadata at all: the checksums are the whole __metadata__, and the file still reads.
  write_safetensors((d / "bare.safetensors").string(), sample_tensors(2.0f));
  Metadata none;
  CHECK_NOTHROW(read_safetensors((d / "bare.safetensors").string(), &none));
  CHECK(none.empty());
  // The two keys are the writer's: a caller cannot set them.
  CHECK_THROWS_WITH_AS(write_safetensors((d / "x.safetensors").string(), sample_tensors(1.0f),
                                         {{"checksum_data", "fnv1a64:0000000000000000"}}),
                       doctest::Contains("'checksum_data' is reserved"), SafetensorsError);
  CHECK_FALSE(fs::exists(d / "x.safetensors"));
  fs::remove_all(d);
}

TEST_CASE("safetensors checksum: one flipped data byte, halves of two files, an edited header are refused") {
  const fs::path d = hostile::fresh_dir("st-sum-bad");
  const fs::path a = d / "a.safetensors", b = d / "b.safetensors";
  write_safetensors(a.string(), sample_tensors(1.0f), {{"model", "toy"}});
  write_safetensors(b.string(), sample_tensors(3.0f), {{"model", "toy"}});
  const std::string bytes_a = hostile::read_bytes(a), bytes_b = hostile::read_bytes(b);
  REQUIRE(bytes_a.size() == bytes_b.size());
  CHECK_NOTHROW(read_safetensors(a.string()));
  CHECK_NOTHROW(read_safetensors(b.string()));

  SUBCASE("one data byte flipped (a finite value still: the checksum is what catches it)") {
    std::string s = bytes_a;
    s[s.size() - 5] ^= 0x01;  // the top byte of the last value but one: -1 becomes -0.25, still finite
    hostile::write_bytes(d / "flip.safetensors", s);
    expect_refused((d / "flip.safetensors").string(), "data");
  }
  SUBCASE("the first half of one valid file, the second half of another (a rewrite caught halfway)") {
    const std::size_t half = bytes_a.size() / 2;
    REQUIRE(half > hostile::split_safetensors(bytes_a).header.size() + 8);  // the cut falls in the data
    hostile::write_bytes(d / "mixed.safetensors", bytes_a.substr(0, half) + bytes_b.substr(half));
    expect_refused((d / "mixed.safetensors").string(), "data");
    hostile::write_bytes(d / "mixed2.safetensors", bytes_b.substr(0, half) + bytes_a.substr(half));
    expect_refused((d / "mixed2.safetensors").string(), "data");
  }
  SUBCASE("a metadata value edited in the header, the length unchanged") {
    std::string s = bytes_a;
    const std::size_t at = s.find("\"toy\"");
    REQUIRE(at != std::string::npos);
    s.replace(at, 5, "\"tox\"");
    hostile::write_bytes(d / "edited.safetensors", s);
    expect_refused((d / "edited.safetensors").string(), "header");
  }
  SUBCASE("a checksum that is not fnv1a64 and 16 hex digits") {
    std::string s = bytes_a;
    const std::size_t at = s.find("\"checksum_data\":\"fnv1a64:");
    REQUIRE(at != std::string::npos);
    s.replace(at + 17, 8, "crc32c:0");
    hostile::write_bytes(d / "scheme.safetensors", s);
    const std::string p = (d / "scheme.safetensors").string();
    CHECK_THROWS_WITH_AS(read_safetensors(p), doctest::Contains("'checksum_data' is 'crc32c:0"), SafetensorsError);
  }
  SUBCASE("the control: the same bytes written back whole read again") {
    hostile::write_bytes(d / "same.safetensors", bytes_a);
    CHECK_NOTHROW(read_safetensors((d / "same.safetensors").string()));
  }
  fs::remove_all(d);
}

TEST_CASE("safetensors checksum: a file without one (older, or written by another program) is read unchecked") {
  const fs::path d = hostile::fresh_dir("st-sum-none");
  // The header as Python's safetensors writes it: no __metadata__ at all, other key order, spaces.
  const std::string header = R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  std::string data(8, '\0');
  const float v[2] = {1.5f, -2.0f};
  std::memcpy(data.data(), v, 8);
  hostile::write_bytes(d / "old.safetensors", hostile::safetensors_bytes(header, data));
  Metadata meta;
  const TensorMap t = read_safetensors((d / "old.safetensors").string(), &meta);
  CHECK(t.at("w").data == std::vector<float>{1.5f, -2.0f});
  // A flipped byte there is not caught by a checksum: only the structure and finiteness checks hold.
  std::string flipped = hostile::safetensors_bytes(header, data);
  flipped.back() ^= 0x01;
  hostile::write_bytes(d / "old-flipped.safetensors", flipped);
  CHECK_NOTHROW(read_safetensors((d / "old-flipped.safetensors").string()));
  fs::remove_all(d);
}

TEST_CASE("safetensors checksum: every shipped checkpoint under data/ carries both and verifies") {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(ATTN_DATA_DIR)) {
    if (e.path().extension() != ".safetensors") continue;
    CAPTURE(e.path().string());
    ++files;
    const auto parts = hostile::split_safetensors(hostile::read_bytes(e.path()));
    CHECK(parts.header.find("\"checksum_data\":\"" + safetensors_data_checksum(parts.data) + "\"") !=
          std::string::npos);
    CHECK(parts.header.find("\"checksum_header\":\"fnv1a64:") != std::string::npos);
    CHECK_NOTHROW(read_safetensors(e.path().string()));
  }
  CHECK(files >= 31);
}

TEST_CASE("safetensors checksum: a file rewritten in place in two halves while it is read is never read mixed") {
  // A writer thread overwrites the file in place (no rename), first half then second half, with
  // two valid files in turn; every read either gets one file whole or is refused.
  const fs::path d = hostile::fresh_dir("st-sum-race");
  const fs::path a = d / "a.safetensors", b = d / "b.safetensors", target = d / "t.safetensors";
  TensorMap ta, tb;
  for (float f : {1.0f, 3.0f}) {
    TensorMap t;
    t["a"] = TensorF32{{256, 64}, std::vector<float>(256 * 64, f)};
    (f == 1.0f ? ta : tb) = t;
  }
  write_safetensors(a.string(), ta);
  write_safetensors(b.string(), tb);
  const std::string bytes[2] = {hostile::read_bytes(a), hostile::read_bytes(b)};
  REQUIRE(bytes[0].size() == bytes[1].size());
  hostile::write_bytes(target, bytes[0]);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    const std::size_t half = bytes[0].size() / 2;
    for (int k = 1; !stop.load(); ++k) {
      const std::string& s = bytes[k % 2];
      std::FILE* f = std::fopen(target.c_str(), "r+b");  // in place: the reader's inode is written
      if (!f) continue;
      std::fwrite(s.data(), 1, half, f);
      std::fflush(f);
      std::this_thread::yield();
      std::fwrite(s.data() + half, 1, s.size() - half, f);
      std::fclose(f);
    }
  });
  int whole = 0, refused = 0, mixed = 0;
  for (int i = 0; i < 400; ++i) {
    try {
      const TensorMap t = read_safetensors(target.string());
      const auto& v = t.at("a").data;
      if (v == ta.at("a").data || v == tb.at("a").data) ++whole;
      else ++mixed;
    } catch (const SafetensorsError& e) {
      CHECK(std::string(e.what()).find(target.string()) != std::string::npos);
      ++refused;
    }
  }
  stop = true;
  writer.join();
  MESSAGE("reads: " << whole << " whole, " << refused << " refused, " << mixed << " mixed");
  CHECK(mixed == 0);
  CHECK(whole + refused == 400);
  fs::remove_all(d);
}
