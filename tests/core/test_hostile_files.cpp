// Hostile input, the core half of tests/chapters/test_hostile_own.cpp: the checks those cases rely
// on, each with one input it accepts and ones it refuses — whole numbers in decimal digits only,
// a checkpoint path that is missing, a folder, a FIFO or a loop of links, what --train may replace
// (a safetensors file, not a text file), a safetensors header naming a key twice, and tokenizer.json's
// vocab_size of the wrong JSON type.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attn/data/bpe.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/json_fields.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/present/cli.hpp"
#include "../hostile_support.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
// A safetensors file with this header over 16 zero bytes of data.
std::string hf_safetensors(std::string header) { return hostile::safetensors_bytes(std::move(header), std::string(16, '\0')); }
}  // namespace

TEST_CASE("decimal_integer_problem: decimal digits pass; octal, hex, binary, separators and spaces do not") {
  for (const char* ok : {"0", "8", "+8", "-3", "10", "4294967295"}) {
    CAPTURE(ok);
    CHECK(decimal_integer_problem(ok).empty());
  }
  for (const char* bad : {"010", "00", "0x10", "0b11", "0o10", "1'0", "1_0", " 8", "8 ", "", "+", "-", "\u0661"}) {
    CAPTURE(bad);
    const std::string why = decimal_integer_problem(bad);
    CHECK(why.find("decimal digits") != std::string::npos);
    CHECK(why.find("'" + std::string(bad) + "'") != std::string::npos);
  }
}

TEST_CASE("require_checkpoint_file: missing, a folder, a FIFO or a loop of links, each said by name") {
  const fs::path d = hostile::fresh_dir("hf-ckpt");
  const std::string good = require_data_file("ch05/rope.safetensors");
  CHECK_NOTHROW(require_checkpoint_file(good));
  CHECK_THROWS_WITH_AS(require_checkpoint_file((d / "none").string(), " (hint)"),
                       doctest::Contains("none: checkpoint not found (hint)"), SafetensorsError);
  CHECK_THROWS_WITH_AS(require_checkpoint_file((d / "none/below").string()), doctest::Contains("checkpoint not found"),
                       SafetensorsError);
  CHECK_THROWS_WITH_AS(require_checkpoint_file(d.string()), doctest::Contains("is a folder, not a checkpoint file"),
                       SafetensorsError);
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0644) == 0);
  CHECK_THROWS_WITH_AS(require_checkpoint_file((d / "fifo").string()), doctest::Contains("is not a regular file"),
                       SafetensorsError);
  fs::create_symlink("b", d / "a");
  fs::create_symlink("a", d / "b");
  CHECK_THROWS_WITH_AS(require_checkpoint_file((d / "a").string()), doctest::Contains("a: cannot read the checkpoint"),
                       SafetensorsError);
  fs::remove_all(d);
}

TEST_CASE("looks_like_safetensors: a checkpoint yes; text, an empty file, a bare length or a lying length no") {
  const fs::path d = hostile::fresh_dir("hf-looks");
  CHECK(looks_like_safetensors(require_data_file("ch05/rope.safetensors")));
  std::ofstream(d / "tiny", std::ios::binary) << hf_safetensors("{}");
  CHECK(looks_like_safetensors((d / "tiny").string()));
  std::ofstream(d / "notes.txt") << "the learner's notes, long enough to hold a header length\n";
  CHECK_FALSE(looks_like_safetensors((d / "notes.txt").string()));
  std::ofstream(d / "empty").close();
  CHECK_FALSE(looks_like_safetensors((d / "empty").string()));
  std::ofstream(d / "eight", std::ios::binary) << std::string("\x02\0\0\0\0\0\0\0", 8);
  CHECK_FALSE(looks_like_safetensors((d / "eight").string()));
  std::string lying = hf_safetensors("{}");
  lying[3] = 1;  // a header length of 16 MiB in a file of 32 bytes
  std::ofstream(d / "lying", std::ios::binary) << lying;
  CHECK_FALSE(looks_like_safetensors((d / "lying").string()));
  CHECK_FALSE(looks_like_safetensors((d / "missing").string()));
  fs::remove_all(d);
}

TEST_CASE("read_safetensors: a header that names a tensor or a metadata key twice is refused naming it") {
  const fs::path d = hostile::fresh_dir("hf-twice");
  const std::string path = (d / "m.safetensors").string();
  const std::string t = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  std::ofstream(path, std::ios::binary) << hf_safetensors("{\"w\":{" + t + "},\"v\":{\"dtype\":\"F32\",\"shape\":[2],"
                                                          "\"data_offsets\":[8,16]}}");
  CHECK(read_safetensors(path).size() == 2);  // the control
  std::ofstream(path, std::ios::binary) << hf_safetensors("{\"w\":{" + t + "},\"w\":{" + t + "}}");
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains("the header names 'w' twice"), SafetensorsError);
  std::ofstream(path, std::ios::binary)
      << hf_safetensors("{\"__metadata__\":{\"steps\":\"1\",\"steps\":\"2\"},\"w\":{\"dtype\":\"F32\",\"shape\":[4],"
                        "\"data_offsets\":[0,16]}}");
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains("names 'steps' twice"), SafetensorsError);
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains(path.c_str()), SafetensorsError);
  fs::remove_all(d);
}

TEST_CASE("bpe_parse: vocab_size of the wrong type says the file, the key, what was expected and what was found") {
  const std::string merges = R"("merges":[[116,104],[256,101]])";
  const auto with = [&](const std::string& v) { return R"({"type":"byte-level BPE","vocab_size":)" + v + "," + merges + "}"; };
  CHECK(bpe_parse(with("258"), "t.json").vocab_size() == 258);  // the control
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\"258\"", "found a JSON string: \"258\""}, {"null", "found a JSON null"},
      {"[258]", "found a JSON array"},           {"{}", "found a JSON object"},
      {"258.5", "found a number with a fraction"}, {"-258", "found a negative number"},
      {"false", "found a JSON boolean"}};
  for (const auto& [value, found] : cases) {
    CAPTURE(value);
    CHECK_THROWS_WITH_AS(bpe_parse(with(value), "dir/t.json"),
                         doctest::Contains("dir/t.json: key \"vocab_size\" must be a non-negative whole number"), BpeError);
    CHECK_THROWS_WITH_AS(bpe_parse(with(value), "dir/t.json"), doctest::Contains(found.c_str()), BpeError);
  }
  CHECK_THROWS_WITH_AS(bpe_parse(with("300"), "t.json"), doctest::Contains("\"vocab_size\" says 300 but its 2 merges give 258"), BpeError);
}

TEST_CASE("bpe_parse: a key named twice in one object is refused naming it; the same key in two objects is not") {
  const std::string merges = R"("merges":[[116,104],[256,101]])";
  CHECK(bpe_parse(R"({"type":"byte-level BPE","vocab_size":258,)" + merges + "}", "t.json").vocab_size() == 258);
  // The parser alone kept the last vocab_size (and then blamed the merges) or the last merges list.
  CHECK_THROWS_WITH_AS(bpe_parse(R"({"type":"byte-level BPE","vocab_size":258,"vocab_size":300,)" + merges + "}", "d/t.json"),
                       doctest::Contains("d/t.json names the key \"vocab_size\" twice"), BpeError);
  CHECK_THROWS_WITH_AS(bpe_parse(R"({"type":"byte-level BPE","vocab_size":258,)" + merges + "," + merges + "}", "d/t.json"),
                       doctest::Contains("names the key \"merges\" twice"), BpeError);
  std::string twice;
  const nlohmann::json j = json_parse_unique_keys(R"({"a":{"k":1},"b":{"k":2}})", &twice);
  CHECK(twice.empty());
  CHECK(j["b"]["k"] == 2);
}
