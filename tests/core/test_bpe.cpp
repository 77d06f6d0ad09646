// Byte-level BPE (attn/data/bpe.hpp) and the Bible corpus / LM batches (attn/data/text_corpus.hpp):
// pre-tokenisation, the merge order on a text small enough to count by hand, round trips on any
// bytes, files (good and broken), the chapter split, and batch windows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attn/data/bpe.hpp"
#include "attn/data/text_corpus.hpp"

using namespace attn;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}
void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}
}  // namespace

TEST_CASE("bpe: pre-tokenisation keeps a leading space with its word and splits punctuation") {
  const std::string text = "And God said, Let there be light: 12 lights.\n  x";
  const auto chunks = bpe_pretokenize(text);
  std::string joined;
  for (const auto& c : chunks) joined += c;
  CHECK(joined == text);
  CHECK(chunks[0] == "And");
  CHECK(chunks[1] == " God");
  CHECK(chunks[3] == ",");
  CHECK(std::find(chunks.begin(), chunks.end(), " 12") != chunks.end());
  CHECK(std::find(chunks.begin(), chunks.end(), "\n") != chunks.end());
  CHECK(std::find(chunks.begin(), chunks.end(), " x") != chunks.end());
}

TEST_CASE("bpe: training merges the most frequent pair first, deterministically; round trips") {
  // "ab" occurs 5 times (in "ab" ×3 and "abc" ×2), "bc" twice: ab first, then (ab)c.
  const std::string text = "ab ab ab abc abc";
  const BpeTokenizer tok = bpe_train(text, 260);
  REQUIRE(tok.merges.size() >= 2);
  CHECK(tok.pieces[std::size_t(tok.merges[0].id)] == "ab");   // 5 times; " a" only 4
  CHECK(tok.pieces[std::size_t(tok.merges[1].id)] == " ab");  // then (␣, ab) 4 times beats (ab, c) 2
  const BpeTokenizer again = bpe_train(text, 260);
  for (std::size_t r = 0; r < tok.merges.size(); ++r) {
    CHECK(tok.merges[r].left == again.merges[r].left);
    CHECK(tok.merges[r].right == again.merges[r].right);
  }
  const BpeTokenizer t2 = bpe_train("ab ab ab abc abc", 257);
  REQUIRE(t2.merges.size() == 1);
  CHECK(t2.merges[0].left == 'a');
  CHECK(t2.merges[0].right == 'b');
  CHECK(t2.merges[0].count == 5);
  CHECK(t2.pieces[256] == "ab");
  // Encoding uses the merges; any bytes round-trip, including ones never seen in training.
  const std::string odd = "abc\xff\x01 Ωmega\n\nab";
  CHECK(bpe_decode(tok, bpe_encode(tok, odd)) == odd);
  CHECK(bpe_encode(t2, "ab").size() == 1);
  CHECK(bpe_encode(t2, "ba").size() == 2);
  CHECK(bpe_piece_display(tok, ' ') == "\u2423");
  CHECK(bpe_piece_display(tok, '\n') == "\\n");
  CHECK_THROWS_AS(bpe_decode(tok, {int(tok.vocab_size())}), BpeError);
  CHECK_THROWS_AS(bpe_train(text, 100), BpeError);
  // No pair occurs twice: training stops early.
  CHECK(bpe_train("xy", 300).vocab_size() == 256);
}

TEST_CASE("bpe: files round-trip; broken files are refused with the file's name") {
  const BpeTokenizer tok = bpe_train("the cat the hat the bat that", 270);
  const std::string path = temp_path("attn_test_bpe.json");
  bpe_save(path, tok);
  const BpeTokenizer back = bpe_load(path);
  CHECK(back.vocab_size() == tok.vocab_size());
  CHECK(back.pieces == tok.pieces);
  CHECK(back.merges.back().count == tok.merges.back().count);
  write_file(path, "{\"type\": \"byte-level BPE\", \"merges\": [[1000, 2]]}");
  CHECK_THROWS_WITH_AS(bpe_load(path), doctest::Contains("attn_test_bpe.json"), BpeError);
  write_file(path, "not json");
  CHECK_THROWS_AS(bpe_load(path), BpeError);
  write_file(path, "{\"type\": \"byte-level BPE\", \"vocab_size\": 300, \"merges\": [[1, 2]]}");
  CHECK_THROWS_AS(bpe_load(path), BpeError);
  std::remove(path.c_str());
  CHECK_THROWS_AS(bpe_load(path), BpeError);
}

TEST_CASE("text corpus: the Bible split holds out whole chapters; batches are shifted windows") {
  std::string dump;
  for (int c = 1; c <= 5; ++c)
    for (int v = 1; v <= 2; ++v) dump += "Ge" + std::to_string(c) + ":" + std::to_string(v) + " verse " +
                                         std::to_string(c) + "." + std::to_string(v) + "\n";
  const KjvSplit s = kjv_split(dump, 2);  // chapters 2 and 4 held out
  CHECK(s.chapters_train == 3);
  CHECK(s.chapters_valid == 2);
  CHECK(s.verses == 10);
  CHECK(s.valid == "verse 2.1\nverse 2.2\nverse 4.1\nverse 4.2\n");
  CHECK(s.train.find("verse 5.2\n") != std::string::npos);
  CHECK_THROWS_AS(kjv_split("no reference here\n"), std::invalid_argument);
  // The held-out chapters' names: the 20th, 40th, … chapter in Bible order (1,189 chapters).
  const std::vector<std::string> held = kjv_held_out_chapters();
  REQUIRE(held.size() == kKjvChapters / 20);
  CHECK(held[0] == "Genesis 20");
  CHECK(held[1] == "Genesis 40");
  CHECK(held[2] == "Exodus 10");  // Genesis has 50 chapters
  CHECK(held.back() == "Revelation 13");
  CHECK(kjv_held_out_chapters(1189).empty() == false);
  CHECK(kjv_held_out_chapters(1189).back() == "Revelation 22");  // the 1,189th chapter is the last
  CHECK(kjv_held_out_chapters(2).size() == 594);
  CHECK_THROWS_AS(kjv_held_out_chapters(1), std::invalid_argument);
  CHECK_THROWS_AS(kjv_split(""), std::invalid_argument);
  std::vector<int> toks(50);
  for (int i = 0; i < 50; ++i) toks[std::size_t(i)] = i;
  Rng rng(1);
  const LmBatch b = sample_lm_batch(toks, 3, 7, rng);
  REQUIRE(b.inputs.size() == 21);
  for (std::size_t i = 0; i < 21; ++i) CHECK(b.targets[i] == b.inputs[i] + 1);
  for (std::size_t s0 = 0; s0 < 3; ++s0)
    for (std::size_t t = 1; t < 7; ++t) CHECK(b.inputs[s0 * 7 + t] == b.inputs[s0 * 7 + t - 1] + 1);
  CHECK_THROWS_AS(sample_lm_batch(toks, 1, 50, rng), std::invalid_argument);
  CHECK_THROWS_AS(read_text_file(temp_path("attn_no_such_file.txt")), std::runtime_error);
}
