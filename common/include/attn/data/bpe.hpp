// Byte-level byte-pair encoding (Sennrich et al. 2016 on words; GPT-2 and llama2.c on bytes):
// start from the 256 byte values, then repeatedly merge the most frequent adjacent pair of tokens
// into a new token, until the vocabulary has `vocab_size` entries. Any text encodes (every byte
// is a token), and decode(encode(text)) == text.
//   pre-tokenisation: text is cut into chunks — an optional space followed by a run of letters,
//   an optional space followed by a run of digits, or any other single byte — and merges never
//   cross a chunk boundary (so " the" can become one token, "the." cannot).
//   ties: the pair with the larger count wins; equal counts go to the smaller (left, right) ids,
//   so training is deterministic.
// Saved as JSON: {"type": "byte-level BPE", "vocab_size": 512, "merges": [[116, 104], …],
// "counts": [41230, …]} (counts optional: how often each pair occurred when it was chosen).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn {

class BpeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BpeMerge {
  int left = 0, right = 0;  // the pair merged
  int id = 0;               // the new token: 256 + its rank
  std::int64_t count = 0;   // how often the pair occurred when it was chosen
};

struct BpeTokenizer {
  std::vector<BpeMerge> merges;     // in order of creation; merges[r].id == 256 + r
  std::vector<std::string> pieces;  // the bytes each id stands for (256 + merges.size() entries)
  std::size_t vocab_size() const { return pieces.size(); }
};

// The chunks merges stay within (see above); concatenated they give back `text`.
std::vector<std::string> bpe_pretokenize(const std::string& text);

// Learns vocab_size − 256 merges from text (vocab_size ≥ 256; training stops early, with a
// smaller vocabulary, when no pair occurs twice).
BpeTokenizer bpe_train(const std::string& text, std::size_t vocab_size);
// Rebuilds pieces from merges; throws BpeError when a merge names an id that does not exist yet.
BpeTokenizer bpe_from_merges(const std::vector<std::pair<int, int>>& merges);

// text -> ids, applying merges in the order they were learned (lowest rank first) in each chunk.
std::vector<int> bpe_encode(const BpeTokenizer& tok, const std::string& text);
// ids -> text; an id outside the vocabulary throws BpeError.
std::string bpe_decode(const BpeTokenizer& tok, const std::vector<int>& ids);
// The text of one token with spaces shown as '␣' and control bytes escaped ("\n"), for display.
std::string bpe_piece_display(const BpeTokenizer& tok, int id);

// JSON file; load validates (BpeError naming the file and what is wrong). Writes are atomic.
void bpe_save(const std::string& path, const BpeTokenizer& tok);
// The text bpe_save writes (one line of JSON).
std::string bpe_json(const BpeTokenizer& tok);
BpeTokenizer bpe_load(const std::string& path);

}  // namespace attn
