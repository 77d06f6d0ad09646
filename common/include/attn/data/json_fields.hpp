// Reading one field of a JSON object that came from a file, with its type and range checked:
// nlohmann's get<std::size_t>() on 1e30 or -1 converts without a word (1e30 is undefined
// behaviour, -1 becomes 18446744073709551615), and get<double>() takes any number. These throw
// std::runtime_error naming the field and what it holds instead; callers add the file name.
//   const std::size_t threads = json_whole(j, "threads", 1, 4096);
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace attn {

// j[key]: a whole number from lo to hi (JSON integer; 3.0 is refused too).
std::size_t json_whole(const nlohmann::json& j, const std::string& key, std::size_t lo, std::size_t hi);
// j[key]: a finite number from lo to hi.
double json_number(const nlohmann::json& j, const std::string& key, double lo, double hi);
// j[key]: a string.
std::string json_text(const nlohmann::json& j, const std::string& key);
// text parsed as nlohmann::json::parse does (throwing its parse_error), and *twice set to the
// first key that one object names twice ("" when none): the parser alone keeps the last silently.
nlohmann::json json_parse_unique_keys(const std::string& text, std::string* twice);

}  // namespace attn
