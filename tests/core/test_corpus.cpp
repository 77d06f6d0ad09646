// The toy translation corpus, vocabulary and length-bucketed batches: determinism by seed, the
// grammar's lengths, the translation rules on hand-checked sentences, disjoint splits, batch framing.
#include <doctest/doctest.h>

#include <set>

#include "attn/data/batching.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/vocab.hpp"

using namespace attn;

namespace {
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s + " ") {
    if (c == ' ') { if (!w.empty()) out.push_back(w); w.clear(); }
    else w += c;
  }
  return out;
}
}  // namespace

TEST_CASE("corpus: the rules translate hand-checked sentences") {
  SentencePair p = toy_translate(words("the big cat sees a red apple today"));
  CHECK(p.tgt == words("lo mau gran na poma roza hodi vid-a"));
  CHECK(p.alignment == std::vector<int>{0, 2, 1, 4, 6, 5, 7, 3});
  CHECK(toy_translate(words("the old book waits")).tgt == words("lo libro vetu atend-o"));
  // Agreement follows the subject, not the object; clauses are translated one by one.
  CHECK(toy_translate(words("a stone follows every small green dog and the horse sleeps quietly")).tgt ==
        words("na petro kada hundo piko verda seg-o kaj lo kaval kviete dorm-a"));
  CHECK_THROWS_WITH_AS(toy_translate(words("the cat zebra")), doctest::Contains("'zebra' is not in the lexicon"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(toy_translate(words("cat sees")), doctest::Contains("expected a determiner"), std::invalid_argument);
  const std::string rules = toy_language_rules();
  CHECK(rules.find("verb-final") != std::string::npos);
  CHECK(rules.find("sees=vid-") != std::string::npos);
}

TEST_CASE("corpus: deterministic by seed; lengths 4–60 exactly; disjoint splits; alignments are permutations") {
  CorpusConfig cfg;
  cfg.seed = 3;
  cfg.n_train = 2000;
  cfg.n_valid = 100;
  cfg.n_test = 300;
  ToyCorpus a = make_toy_corpus(cfg), b = make_toy_corpus(cfg);
  REQUIRE(a.train.size() == 2000);
  CHECK(a.train[17].src == b.train[17].src);
  CHECK(a.test.back().tgt == b.test.back().tgt);
  cfg.seed = 4;
  CHECK(make_toy_corpus(cfg).train[0].src != a.train[0].src);

  std::set<std::size_t> lengths;
  std::set<std::vector<std::string>> seen;
  bool non_monotonic = false;
  for (const auto* split : {&a.train, &a.valid, &a.test})
    for (const auto& p : *split) {
      CHECK(seen.insert(p.src).second);  // no sentence in two splits (or twice in one)
      lengths.insert(p.src.size());
      REQUIRE(p.tgt.size() == p.src.size());
      std::vector<int> sorted = p.alignment;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < sorted.size(); ++i) REQUIRE(sorted[i] == int(i));
      for (std::size_t i = 1; i < p.alignment.size(); ++i) non_monotonic |= p.alignment[i] < p.alignment[i - 1];
      CHECK(toy_translate(p.src).tgt == p.tgt);
    }
  CHECK(*lengths.begin() == 4);
  CHECK(*lengths.rbegin() == 60);
  CHECK(lengths.size() == 57);  // every length from 4 to 60 occurs
  CHECK(non_monotonic);
  CHECK(toy_sentence(11, 37).src.size() == 37);
  CHECK(toy_sentence(11, 37).src == toy_sentence(11, 37).src);
}

TEST_CASE("vocab: specials first, sorted ids, unknown words, decode stops at <eos>") {
  Vocab src = toy_source_vocab(), tgt = toy_target_vocab();
  CHECK(src.size() == 4 + 47);
  CHECK(tgt.size() == 4 + 36 + 2 * 11);  // every verb has an -a and an -o form
  CHECK(src.token(Vocab::pad) == "<pad>");
  CHECK(src.token(Vocab::eos) == "<eos>");
  CHECK(src.id("zebra") == Vocab::unk);
  CHECK(src.token(4) == "a");  // sorted after the specials
  std::vector<int> ids = tgt.encode(words("lo mau dorm-a"));
  ids.insert(ids.begin(), Vocab::bos);
  ids.push_back(Vocab::eos);
  ids.push_back(tgt.id("lo"));
  CHECK(tgt.decode(ids) == words("lo mau dorm-a"));
  CHECK_THROWS_AS(tgt.token(999), std::out_of_range);
}

TEST_CASE("batching: one exact source length per batch, teacher-forcing frames, deterministic shuffle") {
  CorpusConfig cfg;
  cfg.n_train = 500;
  cfg.n_valid = cfg.n_test = 10;
  ToyCorpus c = make_toy_corpus(cfg);
  Rng r1(5), r2(5);
  auto batches = make_batches(c.train, c.source_vocab, c.target_vocab, 8, &r1);
  auto again = make_batches(c.train, c.source_vocab, c.target_vocab, 8, &r2);
  REQUIRE(batches.size() == again.size());
  CHECK(batches[3].index == again[3].index);
  std::size_t total = 0;
  for (const auto& b : batches) {
    total += b.size;
    REQUIRE(b.size <= 8);
    REQUIRE(b.src.size() == b.size * b.src_len);
    for (std::size_t r = 0; r < b.size; ++r) {
      const SentencePair& p = c.train[b.index[r]];
      REQUIRE(p.src.size() == b.src_len);
      CHECK(b.tgt_in[r * b.tgt_len] == Vocab::bos);
      CHECK(b.tgt_out[r * b.tgt_len + p.tgt.size()] == Vocab::eos);
      CHECK(b.tgt_in[r * b.tgt_len + 1] == b.tgt_out[r * b.tgt_len]);
      CHECK(c.source_vocab.token(b.src[r * b.src_len]) == p.src[0]);
    }
  }
  CHECK(total == 500);
  auto sorted = make_batches(c.valid, c.source_vocab, c.target_vocab, 4);
  for (std::size_t i = 1; i < sorted.size(); ++i) CHECK(sorted[i].src_len >= sorted[i - 1].src_len);
}

TEST_CASE("pair_of_length: the nth pair of that source length (wrapping), else the first pair") {
  std::vector<SentencePair> pairs(3);
  pairs[0].src = {"a", "b"};
  pairs[1].src = {"a", "b", "c"};
  pairs[2].src = {"x", "y", "z"};
  CHECK(&pair_of_length(pairs, 3) == &pairs[1]);
  CHECK(&pair_of_length(pairs, 2) == &pairs[0]);
  CHECK(&pair_of_length(pairs, 9) == &pairs[0]);
  CHECK(&pair_of_length(pairs, 3, 2) == &pairs[2]);  // the second of length 3
  CHECK(&pair_of_length(pairs, 3, 3) == &pairs[1]);  // wraps to the first
  CHECK(&pair_of_length(pairs, 3, 0) == &pairs[1]);
  CHECK_THROWS_AS(pair_of_length({}, 3), std::invalid_argument);
}
