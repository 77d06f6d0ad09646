// Checked JSON fields (see attn/data/json_fields.hpp).
#include "attn/data/json_fields.hpp"

#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace attn {

namespace {
const nlohmann::json& field(const nlohmann::json& j, const std::string& key) {
  if (!j.is_object()) throw std::runtime_error("the document is not a JSON object");
  const auto it = j.find(key);
  if (it == j.end()) throw std::runtime_error(fmt::format("\"{}\" is missing", key));
  return *it;
}
std::string shown(const nlohmann::json& v) {
  const std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 40) + "…" : s;
}
}  // namespace

std::size_t json_whole(const nlohmann::json& j, const std::string& key, std::size_t lo, std::size_t hi) {
  const nlohmann::json& v = field(j, key);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < lo || v.get<std::uint64_t>() > hi)
    throw std::runtime_error(fmt::format("\"{}\" is {}, not a whole number from {} to {}", key, shown(v), lo, hi));
  return std::size_t(v.get<std::uint64_t>());
}

double json_number(const nlohmann::json& j, const std::string& key, double lo, double hi) {
  const nlohmann::json& v = field(j, key);
  const double x = v.is_number() ? v.get<double>() : std::nan("");
  if (!std::isfinite(x) || x < lo || x > hi)
    throw std::runtime_error(fmt::format("\"{}\" is {}, not a number from {:g} to {:g}", key, shown(v), lo, hi));
  return x;
}

std::string json_text(const nlohmann::json& j, const std::string& key) {
  const nlohmann::json& v = field(j, key);
  if (!v.is_string()) throw std::runtime_error(fmt::format("\"{}\" is {}, not a string", key, shown(v)));
  return v.get<std::string>();
}

nlohmann::json json_parse_unique_keys(const std::string& text, std::string* twice) {
  std::vector<std::set<std::string>> keys;
  twice->clear();
  return nlohmann::json::parse(text, [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && twice->empty())
      *twice = parsed.get<std::string>();
    return true;
  });
}

}  // namespace attn
