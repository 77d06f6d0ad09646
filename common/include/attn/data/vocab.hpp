// A vocabulary: token ↔ id, with the four special tokens every model here relies on:
//   <pad> = 0 (fills batches; the loss ignores it), <bos> = 1 (starts decoding),
//   <eos> = 2 (ends a sentence), <unk> = 3 (any word the vocabulary does not know).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace attn {

class Vocab {
 public:
  static constexpr int pad = 0, bos = 1, eos = 2, unk = 3;

  Vocab();  // the four specials only
  // Specials, then every distinct token of `sentences` in sorted order (deterministic ids).
  static Vocab from_sentences(const std::vector<std::vector<std::string>>& sentences);

  int add(const std::string& token);         // id of token, adding it when new
  int id(const std::string& token) const;    // unk when unknown
  const std::string& token(int id) const;    // throws std::out_of_range
  std::size_t size() const { return tokens_.size(); }
  const std::vector<std::string>& tokens() const { return tokens_; }

  std::vector<int> encode(const std::vector<std::string>& words) const;
  // Stops at the first <eos>; drops <pad> and <bos>.
  std::vector<std::string> decode(const std::vector<int>& ids) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> index_;
};

}  // namespace attn
