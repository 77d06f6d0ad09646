// The fuzzers' regression corpus in the ordinary suite: every input in fuzz/corpus/tokenizer, json
// and safetensors (the inputs that once found a bug: wrong JSON types, an id that wrapped, a
// count of 1e30, a shape whose byte count wrapped, a NaN) goes through its reader, which either
// accepts it or throws its own error naming the file — never another exception. And the bad ones
// are refused: the file names say which should load.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "attn/data/bpe.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/models/decoder_lm.hpp"
#include "attn/studies/transformer_study.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
std::vector<fs::path> corpus_files(const std::string& target) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(ATTN_SOURCE_DIR) / "fuzz/corpus" / target)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}
std::string corpus_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("fuzz corpus: every tokenizer input is refused with a BpeError naming the file") {
  const auto files = corpus_files("tokenizer");
  CHECK(files.size() >= 7);
  for (const fs::path& p : files) {
    CAPTURE(p);
    CHECK_THROWS_WITH_AS(bpe_parse(corpus_text(p), p.string()), doctest::Contains(p.string().c_str()), BpeError);
  }
}

TEST_CASE("fuzz corpus: the JSON readers refuse every bad input with their own errors") {
  std::size_t configs_read = 0;
  for (const fs::path& p : corpus_files("json")) {
    CAPTURE(p);
    const std::string text = corpus_text(p);
    const bool config = p.filename().string().rfind("decoder_", 0) == 0;
    if (!config) {
      CHECK_THROWS_WITH_AS(parse_peer_step_time(text, p.string()), doctest::Contains(p.string().c_str()), std::runtime_error);
    } else if (p.filename() == "decoder_config") {
      CHECK(config_from_json(text).d_model == 64);  // the one good seed
      ++configs_read;
    } else {
      CHECK_THROWS_AS(config_from_json(text), std::invalid_argument);
    }
  }
  CHECK(configs_read == 1);
  // The shipped peer timing still reads.
  CHECK(read_peer_step_time(std::string(ATTN_DATA_DIR) + "/ch08/pytorch_step_time.json").threads == 1);
}

TEST_CASE("fuzz corpus: every safetensors input is refused with a SafetensorsError naming the file") {
  for (const fs::path& p : corpus_files("safetensors")) {
    CAPTURE(p);
    CHECK_THROWS_WITH_AS(read_safetensors(p.string()), doctest::Contains(p.string().c_str()), SafetensorsError);
  }
}
