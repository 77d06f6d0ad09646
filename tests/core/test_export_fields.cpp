// Extra manifest entries of --export (attn/present/export.hpp set_manifest_field): written as JSON
// beside "chapter", "seed" and "tensors"; reserved keys and invalid JSON refused; a 4-D tensor records.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "attn/present/export.hpp"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("export: extra manifest fields, reserved keys, 4-D tensors") {
  ExportRecorder rec;
  const std::vector<float> w(2 * 3 * 4 * 4, 0.25f);
  rec.add("attn_weights", {2, 3, 4, 4}, w.data(), 6);
  rec.set_manifest_field("config", "{\"d_model\": 128, \"layers\": 5}");
  rec.set_manifest_field("rope_pairing", "\"half\"");
  rec.set_manifest_field("rope_pairing", "\"interleaved\"");  // set again: replaced
  CHECK_THROWS_AS(rec.set_manifest_field("seed", "1"), ExportError);
  CHECK_THROWS_AS(rec.set_manifest_field("config2", "{not json"), ExportError);
  const fs::path dir = fs::temp_directory_path() / "attn-test-export-fields";
  fs::remove_all(dir);
  rec.write(dir.string(), "09", 9);
  std::ifstream f(dir / "manifest.json");
  const auto j = nlohmann::json::parse(f);
  CHECK(j["chapter"] == "09");
  CHECK(j["config"]["layers"] == 5);
  CHECK(j["rope_pairing"] == "interleaved");
  CHECK(j["tensors"][0]["shape"] == std::vector<int>{2, 3, 4, 4});
  CHECK(fs::file_size(dir / "attn_weights.npy") > 96 * 4);
  fs::remove_all(dir);
}
