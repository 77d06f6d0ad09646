// Shared by the chapter 00–02 tests: the length buckets, reading a chapter's results.json, and
// checking its by-length figures against the values pinned in the test (to the printed precision).
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace seq2seq_pins {

inline const std::vector<std::string> kBuckets = {"5-10", "11-20", "21-30", "31-40", "41-50", "51-60"};

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

// figures: BLEU, exact %, token accuracy % for each of the six buckets, as printed (one decimal).
inline void check_pinned(const nlohmann::json& j, const std::string& model,
                         const std::vector<std::array<double, 3>>& figures) {
  REQUIRE(figures.size() == kBuckets.size());
  for (std::size_t b = 0; b < kBuckets.size(); ++b) {
    INFO(model << ", bucket " << kBuckets[b]);
    CHECK(std::abs(j["bleu_by_length"][model][kBuckets[b]].get<double>() - figures[b][0]) < 0.05);
    CHECK(std::abs(j["exact_match_by_length"][model][kBuckets[b]].get<double>() - figures[b][1]) < 0.05);
    CHECK(std::abs(j["token_accuracy_by_length"][model][kBuckets[b]].get<double>() - figures[b][2]) < 0.05);
  }
}

}  // namespace seq2seq_pins
