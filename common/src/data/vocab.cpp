// Vocabulary with <pad> <bos> <eos> <unk> (see attn/data/vocab.hpp).
#include "attn/data/vocab.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace attn {

Vocab::Vocab() {
  for (const char* s : {"<pad>", "<bos>", "<eos>", "<unk>"}) add(s);
}

Vocab Vocab::from_sentences(const std::vector<std::vector<std::string>>& sentences) {
  std::set<std::string> words;
  for (const auto& s : sentences) words.insert(s.begin(), s.end());
  Vocab v;
  for (const auto& w : words) v.add(w);
  return v;
}

int Vocab::add(const std::string& token) {
  auto it = index_.find(token);
  if (it != index_.end()) return it->second;
  const int id = int(tokens_.size());
  tokens_.push_back(token);
  index_.emplace(token, id);
  return id;
}

int Vocab::id(const std::string& token) const {
  auto it = index_.find(token);
  return it == index_.end() ? unk : it->second;
}

const std::string& Vocab::token(int id) const {
  if (id < 0 || std::size_t(id) >= tokens_.size())
    throw std::out_of_range("Vocab::token: id " + std::to_string(id) + " outside [0, " + std::to_string(tokens_.size()) + ")");
  return tokens_[std::size_t(id)];
}

std::vector<int> Vocab::encode(const std::vector<std::string>& words) const {
  std::vector<int> ids;
  ids.reserve(words.size());
  for (const auto& w : words) ids.push_back(id(w));
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int>& ids) const {
  std::vector<std::string> words;
  for (int i : ids) {
    if (i == eos) break;
    if (i == pad || i == bos) continue;
    words.push_back(token(i));
  }
  return words;
}

}  // namespace attn
