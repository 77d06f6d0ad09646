// Byte-level BPE: training, encoding, decoding, files (see attn/data/bpe.hpp).
#include "attn/data/bpe.hpp"

#include "attn/data/data_files.hpp"
#include "attn/data/json_fields.hpp"
#include "attn/data/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace attn {

namespace {

bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

std::uint64_t pair_key(int a, int b) { return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b); }

// Replace every (a, b) in word by id, left to right.
void merge_in_place(std::vector<int>& word, int a, int b, int id) {
  std::size_t w = 0;
  for (std::size_t r = 0; r < word.size(); ++r) {
    if (r + 1 < word.size() && word[r] == a && word[r + 1] == b) {
      word[w++] = id;
      ++r;
    } else {
      word[w++] = word[r];
    }
  }
  word.resize(w);
}

}  // namespace

std::vector<std::string> bpe_pretokenize(const std::string& text) {
  std::vector<std::string> chunks;
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto u = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < n) {
    std::size_t j = i;
    if (u(j) == ' ' && j + 1 < n && (is_letter(u(j + 1)) || is_digit(u(j + 1)))) ++j;  // leading space
    if (is_letter(u(j))) {
      while (j < n && is_letter(u(j))) ++j;
    } else if (is_digit(u(j))) {
      while (j < n && is_digit(u(j))) ++j;
    } else {
      ++j;  // any other single byte: punctuation, a lone space, a newline
    }
    chunks.push_back(text.substr(i, j - i));
    i = j;
  }
  return chunks;
}

BpeTokenizer bpe_from_merges(const std::vector<std::pair<int, int>>& merges) {
  BpeTokenizer tok;
  for (int b = 0; b < 256; ++b) tok.pieces.push_back(std::string(1, char(b)));
  std::map<std::pair<int, int>, std::size_t> seen;  // pair -> the merge that made it
  for (const auto& [a, b] : merges) {
    const int next = int(tok.pieces.size());
    if (a < 0 || b < 0 || a >= next || b >= next)
      throw BpeError("merge " + std::to_string(next - 256) + " joins ids " + std::to_string(a) + " and " +
                     std::to_string(b) + " but only ids 0 … " + std::to_string(next - 1) + " exist at that point "
                     "(a merge may join only the 256 bytes and the ids of the merges before it)");
    // The same pair twice would make a second id that encoding never produces: a file that says
    // it has more tokens than it can use.
    const auto [it, fresh] = seen.emplace(std::make_pair(a, b), std::size_t(next - 256));
    if (!fresh)
      throw BpeError("merge " + std::to_string(next - 256) + " joins ids " + std::to_string(a) + " and " +
                     std::to_string(b) + ", as merge " + std::to_string(it->second) + " already does (each pair is "
                     "merged once)");
    tok.merges.push_back({a, b, next, 0});
    tok.pieces.push_back(tok.pieces[std::size_t(a)] + tok.pieces[std::size_t(b)]);
  }
  return tok;
}

BpeTokenizer bpe_train(const std::string& text, std::size_t vocab_size) {
  if (vocab_size < 256) throw BpeError("bpe_train: vocab_size must be at least 256 (the bytes), got " +
                                       std::to_string(vocab_size));
  // Distinct chunks with their counts (std::map: a deterministic order).
  std::map<std::string, std::int64_t> counts;
  for (auto& c : bpe_pretokenize(text)) ++counts[c];
  std::vector<std::vector<int>> words;
  std::vector<std::int64_t> freq;
  for (const auto& [w, c] : counts) {
    std::vector<int> ids;
    for (unsigned char ch : w) ids.push_back(ch);
    words.push_back(std::move(ids));
    freq.push_back(c);
  }
  BpeTokenizer tok = bpe_from_merges({});
  while (tok.pieces.size() < vocab_size) {
    // Count every adjacent pair, weighted by how often its chunk occurs.
    std::unordered_map<std::uint64_t, std::int64_t> pairs;
    for (std::size_t w = 0; w < words.size(); ++w)
      for (std::size_t k = 0; k + 1 < words[w].size(); ++k) pairs[pair_key(words[w][k], words[w][k + 1])] += freq[w];
    std::uint64_t best = 0;
    std::int64_t best_count = 0;
    for (const auto& [key, c] : pairs)
      if (c > best_count || (c == best_count && key < best)) {
        best = key;
        best_count = c;
      }
    if (best_count < 2) break;  // nothing left worth merging
    const int a = int(best >> 32), b = int(best & 0xffffffffu), id = int(tok.pieces.size());
    for (auto& w : words) merge_in_place(w, a, b, id);
    tok.merges.push_back({a, b, id, best_count});
    tok.pieces.push_back(tok.pieces[std::size_t(a)] + tok.pieces[std::size_t(b)]);
  }
  return tok;
}

std::vector<int> bpe_encode(const BpeTokenizer& tok, const std::string& text) {
  std::unordered_map<std::uint64_t, int> rank;  // pair -> merge rank
  for (std::size_t r = 0; r < tok.merges.size(); ++r) rank[pair_key(tok.merges[r].left, tok.merges[r].right)] = int(r);
  std::unordered_map<std::string, std::vector<int>> memo;  // a chunk always encodes the same way
  std::vector<int> out;
  for (const auto& chunk : bpe_pretokenize(text)) {
    auto it = memo.find(chunk);
    if (it == memo.end()) {
      std::vector<int> ids;
      for (unsigned char ch : chunk) ids.push_back(ch);
      for (;;) {  // apply the earliest-learned merge present, everywhere in the chunk
        int best = -1;
        for (std::size_t k = 0; k + 1 < ids.size(); ++k) {
          auto f = rank.find(pair_key(ids[k], ids[k + 1]));
          if (f != rank.end() && (best < 0 || f->second < best)) best = f->second;
        }
        if (best < 0) break;
        const BpeMerge& m = tok.merges[std::size_t(best)];
        merge_in_place(ids, m.left, m.right, m.id);
      }
      it = memo.emplace(chunk, std::move(ids)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
  return out;
}

std::string bpe_decode(const BpeTokenizer& tok, const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) {
    if (id < 0 || std::size_t(id) >= tok.pieces.size())
      throw BpeError("bpe_decode: id " + std::to_string(id) + " outside the vocabulary of " +
                     std::to_string(tok.pieces.size()));
    s += tok.pieces[std::size_t(id)];
  }
  return s;
}

std::string bpe_piece_display(const BpeTokenizer& tok, int id) {
  std::string out;
  for (unsigned char c : bpe_decode(tok, {id})) {
    if (c == ' ') out += "\u2423";  // ␣
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f || c >= 0x80) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else out += char(c);
  }
  return out;
}

void bpe_save(const std::string& path, const BpeTokenizer& tok) {
  try {
    write_file_atomically(path, bpe_json(tok));
  } catch (const OutputFileError& e) {
    throw BpeError(e.what());  // "cannot write PATH: why"
  }
}

std::string bpe_json(const BpeTokenizer& tok) {
  nlohmann::ordered_json j;
  j["type"] = "byte-level BPE";
  j["vocab_size"] = tok.vocab_size();
  nlohmann::json merges = nlohmann::json::array();
  for (const auto& m : tok.merges) merges.push_back({m.left, m.right});
  j["merges"] = merges;
  nlohmann::json counts = nlohmann::json::array();  // how often each pair occurred when chosen
  for (const auto& m : tok.merges) counts.push_back(m.count);
  j["counts"] = counts;
  return j.dump() + "\n";
}

namespace {
BpeTokenizer bpe_parse_unguarded(const std::string& text, const std::string& path);

// "tokenizer PATH: what": which file is wrong and how, the path shown escaped.
BpeError bad_file(const std::string& path, const std::string& what) {
  return BpeError("tokenizer " + shown_path(path) + ": " + what);
}
// nlohmann's "[json.exception.parse_error.101] parse error at line 1, …" without its bracketed code.
std::string without_json_prefix(const std::string& what) {
  if (what.rfind("[json.exception.", 0) != 0) return what;
  const std::size_t end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}
// What j is when it is not a byte-level BPE file's object ("" when it is one).
std::string not_a_bpe_file(const nlohmann::json& j) {
  if (!j.is_object()) return std::string("a JSON ") + j.type_name();
  if (!j.contains("type")) return "no \"type\"";
  if (!j["type"].is_string() || j["type"].get<std::string>() != "byte-level BPE")
    return "\"type\": " + shown_path(j["type"].dump().substr(0, 80));
  if (!j.contains("merges")) return "no \"merges\"";
  if (!j["merges"].is_array()) return std::string("\"merges\" as a JSON ") + j["merges"].type_name();
  return "";
}
}  // namespace

BpeTokenizer bpe_load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw BpeError(fmt::format("tokenizer {} cannot be read: {}", shown_path(path), std::strerror(errno)));
  std::stringstream ss;
  ss << f.rdbuf();
  return bpe_parse(ss.str(), path);
}

BpeTokenizer bpe_parse(const std::string& text, const std::string& path) {
  try {
    return bpe_parse_unguarded(text, path);
  } catch (const nlohmann::json::exception& e) {  // a type the checks below did not foresee
    throw bad_file(path, "a value of an unexpected JSON type (" + without_json_prefix(e.what()) + ")");
  }
}

namespace {
BpeTokenizer bpe_parse_unguarded(const std::string& text, const std::string& path) {
  nlohmann::json j;
  std::string twice;
  try {
    j = json_parse_unique_keys(text, &twice);
  } catch (const std::exception& e) {
    throw bad_file(path, "expected JSON, found text that is not: " + without_json_prefix(e.what()));
  }
  // Two "vocab_size" or "merges" keys: the parser would keep the last without a word.
  if (!twice.empty())
    throw BpeError(fmt::format("tokenizer {} names the key \"{}\" twice in one object; expected each key once (a "
                               "JSON reader would keep only the last)", shown_path(path), shown_path(twice)));
  if (const std::string found = not_a_bpe_file(j); !found.empty())
    throw bad_file(path, "not a byte-level BPE file: expected a JSON object with \"type\": \"byte-level BPE\" and "
                         "a \"merges\" array, found " + found);
  std::vector<std::pair<int, int>> merges;
  // An id is a non-negative integer below 2^31: a larger one (4294967412) must not wrap to a small one.
  const auto id_of = [](const nlohmann::json& x) {
    return x.is_number_unsigned() && x.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<int>::max())
               ? int(x.get<std::uint64_t>())
               : -1;
  };
  for (const auto& m : j["merges"]) {
    if (!m.is_array() || m.size() != 2 || id_of(m[0]) < 0 || id_of(m[1]) < 0)
      throw bad_file(path, "merge " + std::to_string(merges.size()) + " is not a pair of ids: expected two "
                           "integers from 0 to 2147483647, found " + shown_path(m.dump().substr(0, 80)));
    merges.emplace_back(id_of(m[0]), id_of(m[1]));
  }
  BpeTokenizer tok;
  try {
    tok = bpe_from_merges(merges);
  } catch (const BpeError& e) {
    throw bad_file(path, e.what());
  }
  if (j.contains("counts")) {
    const auto& c = j["counts"];
    if (!c.is_array() || c.size() != tok.merges.size())
      throw bad_file(path, "\"counts\" must hold one number per merge: expected an array of " +
                           std::to_string(tok.merges.size()) + ", found " +
                           (c.is_array() ? std::to_string(c.size()) + " entries" : std::string("a JSON ") + c.type_name()));
    for (std::size_t r = 0; r < tok.merges.size(); ++r) {
      if (!c[r].is_number_unsigned() || c[r].get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        throw bad_file(path, "count " + std::to_string(r) + " is not a non-negative integer: expected a whole "
                             "number of times the pair occurred, found " + shown_path(c[r].dump().substr(0, 80)));
      tok.merges[r].count = std::int64_t(c[r].get<std::uint64_t>());
    }
  }
  if (j.contains("vocab_size") && !j["vocab_size"].is_number_unsigned()) {
    const nlohmann::json& v = j["vocab_size"];
    const std::string found = v.is_number_integer() ? "a negative number"
                              : v.is_number_float() ? "a number with a fraction or an exponent"
                                                    : std::string("a JSON ") + v.type_name();
    throw bad_file(path, "key \"vocab_size\" must be a non-negative whole number (JSON integer), found " + found +
                         ": " + shown_path(v.dump().substr(0, 80)));
  }
  if (j.contains("vocab_size") && j["vocab_size"].get<std::uint64_t>() != tok.vocab_size())
    throw bad_file(path, "\"vocab_size\" says " + shown_path(j["vocab_size"].dump().substr(0, 80)) + " but its " +
                         std::to_string(tok.merges.size()) + " merges give " + std::to_string(tok.vocab_size()) +
                         " (the 256 bytes + one id per merge)");
  return tok;
}
}  // namespace

}  // namespace attn
