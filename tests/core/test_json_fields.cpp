// Checked JSON fields (attn/data/json_fields.hpp): the values nlohmann would convert without a word
// are refused, with the key and what it holds named.
#include <doctest/doctest.h>

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "attn/data/json_fields.hpp"

using namespace attn;

TEST_CASE("json_whole: whole numbers in range only; 1e30, -1, 3.0, \"3\" and a missing key are refused by name") {
  const auto j = nlohmann::json::parse(
      R"({"ok": 3, "big": 1e30, "neg": -1, "float": 3.0, "text": "3", "edge": 4096, "past": 4097})");
  CHECK(json_whole(j, "ok", 1, 4096) == 3);
  CHECK(json_whole(j, "edge", 1, 4096) == 4096);
  CHECK_THROWS_WITH_AS(json_whole(j, "past", 1, 4096), doctest::Contains("\"past\" is 4097, not a whole number from 1 to 4096"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(json_whole(j, "big", 1, 4096), doctest::Contains("\"big\" is 1e+30"), std::runtime_error);
  CHECK_THROWS_WITH_AS(json_whole(j, "neg", 0, 4096), doctest::Contains("\"neg\" is -1"), std::runtime_error);
  CHECK_THROWS_WITH_AS(json_whole(j, "float", 1, 4096), doctest::Contains("\"float\" is 3.0"), std::runtime_error);
  CHECK_THROWS_WITH_AS(json_whole(j, "text", 1, 4096), doctest::Contains("\"text\" is \"3\""), std::runtime_error);
  CHECK_THROWS_WITH_AS(json_whole(j, "none", 1, 4096), doctest::Contains("\"none\" is missing"), std::runtime_error);
  CHECK_THROWS_WITH_AS(json_whole(nlohmann::json::array({1}), "ok", 1, 4096), doctest::Contains("not a JSON object"),
                       std::runtime_error);
}

TEST_CASE("json_number: finite numbers in range; a string, out of range or a long value shown cut") {
  const auto j = nlohmann::json::parse(R"({"lr": 0.001, "whole": 2, "high": 1e308, "str": "0.1"})");
  CHECK(json_number(j, "lr", 0.0, 1.0) == doctest::Approx(0.001));
  CHECK(json_number(j, "whole", 0.0, 4.0) == 2.0);
  CHECK_THROWS_WITH_AS(json_number(j, "high", 0.0, 1e6), doctest::Contains("\"high\" is 1e+308, not a number from 0 to 1e+06"),
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(json_number(j, "str", 0.0, 1.0), doctest::Contains("\"str\" is \"0.1\""), std::runtime_error);
  nlohmann::json long_text;
  long_text["x"] = std::string(100, 'a');
  try {
    (void)json_number(long_text, "x", 0.0, 1.0);
    FAIL("a string is not a number");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find(std::string(41, 'a')) == std::string::npos);  // at most 40 characters shown
    CHECK(std::string(e.what()).find("…") != std::string::npos);
  }
}

TEST_CASE("json_text: strings only") {
  const auto j = nlohmann::json::parse(R"({"name": "kjv", "n": 3})");
  CHECK(json_text(j, "name") == "kjv");
  CHECK_THROWS_WITH_AS(json_text(j, "n"), doctest::Contains("\"n\" is 3, not a string"), std::runtime_error);
}
