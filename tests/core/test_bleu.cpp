// Corpus BLEU-4 on hand-computed fixtures (to 1e-6) and its edge cases: empty hypothesis, shorter
// than the reference (brevity penalty), no 4-gram match (BLEU 0), clipping, mismatched counts,
// per-length buckets. The worked numbers are in the comments so they can be checked by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "attn/data/bleu.hpp"

using namespace attn;

TEST_CASE("bleu: clipped n-gram counts of the classic example; no 4-gram match gives 0") {
  // ref "the cat is on the mat", hyp "the cat the cat on the mat":
  // 1-grams: the ×3 (clipped to 2), cat ×2 (clipped to 1), on, mat -> 5/7
  // 2-grams: the cat (×2, clipped to 1), cat the, cat on, on the, the mat -> 3/6
  // 3-grams: only "on the mat" -> 1/5;  4-grams: none of 4 -> 0/4, so BLEU = 0
  BleuStats st = bleu_stats(split_whitespace("the cat the cat on the mat"), split_whitespace("the cat is on the mat"));
  CHECK(st.matches == std::array<std::size_t, 4>{5, 3, 1, 0});
  CHECK(st.totals == std::array<std::size_t, 4>{7, 6, 5, 4});
  BleuScore s = bleu_from_stats(st);
  CHECK(s.precisions[0] == doctest::Approx(5.0 / 7).epsilon(1e-12));
  CHECK(s.bleu == 0.0);
  CHECK(s.brevity_penalty == 1.0);  // 7 > 6: no penalty
}

TEST_CASE("bleu: two-sentence corpus, precisions summed over the corpus, brevity penalty") {
  // S1: perfect, 6 tokens: matches 6,5,4,3 of 6,5,4,3.
  // S2: ref "a b c d e", hyp "a b x d": 1-grams 3/4, 2-grams ("a b") 1/3, 3-grams 0/2, 4-grams 0/1.
  // Corpus: p = 9/10, 6/8, 4/6, 3/4; c = 10, r = 11 -> BP = exp(1 − 11/10) = 0.9048374180359595
  // BLEU = BP · (0.9 · 0.75 · 2/3 · 0.75)^¼ = 0.6896662857896071
  std::vector<Tokens> refs{split_whitespace("a b c d e f"), split_whitespace("a b c d e")};
  std::vector<Tokens> hyps{split_whitespace("a b c d e f"), split_whitespace("a b x d")};
  BleuScore s = corpus_bleu(hyps, refs);
  CHECK(s.bleu == doctest::Approx(0.6896662857896071).epsilon(1e-9));
  CHECK(std::abs(s.bleu - 0.6896662857896071) < 1e-6);
  CHECK(s.brevity_penalty == doctest::Approx(0.9048374180359595).epsilon(1e-12));
  CHECK(s.precisions[2] == doctest::Approx(4.0 / 6).epsilon(1e-12));
  CHECK(s.hyp_len == 10);
  CHECK(s.ref_len == 11);
  // Corpus BLEU is not the mean of sentence BLEUs (S2 alone scores 0).
  CHECK(corpus_bleu({hyps[1]}, {refs[1]}).bleu == 0.0);
  CHECK(corpus_bleu({hyps[0]}, {refs[0]}).bleu == doctest::Approx(1.0));
}

TEST_CASE("bleu: edge cases — shorter hypothesis, empty hypothesis, empty corpus, mismatched counts") {
  // A correct prefix of 5 of 8 words: every precision is 1, BP = exp(1 − 8/5) = 0.5488116360940264.
  BleuScore s = corpus_bleu({split_whitespace("a b c d e")}, {split_whitespace("a b c d e f g h")});
  CHECK(std::abs(s.bleu - 0.5488116360940264) < 1e-6);
  // An empty hypothesis: no n-grams, BP = 0, BLEU = 0 (and no NaN).
  BleuScore e = corpus_bleu({Tokens{}}, {split_whitespace("a b c d")});
  CHECK(e.bleu == 0.0);
  CHECK(e.brevity_penalty == 0.0);
  CHECK(e.precisions[0] == 0.0);
  CHECK(corpus_bleu({}, {}).bleu == 0.0);
  CHECK_THROWS_WITH_AS(corpus_bleu({Tokens{"a"}}, {}), doctest::Contains("1 hypotheses but 0 references"),
                       std::invalid_argument);
  // Longer hypothesis: no brevity penalty, precision pays instead.
  BleuScore l = corpus_bleu({split_whitespace("a b c d e")}, {split_whitespace("a b c d")});
  CHECK(l.brevity_penalty == 1.0);
  CHECK(l.precisions[0] == doctest::Approx(0.8));
  CHECK(split_whitespace("  a\tb  c \r") == Tokens{"a", "b", "c"});
}

TEST_CASE("bleu: per-length buckets") {
  std::vector<Tokens> refs{split_whitespace("a b c d e f"), split_whitespace("a b c d e"), split_whitespace("x y z w v u t s r q p")};
  std::vector<Tokens> hyps{split_whitespace("a b c d e f"), split_whitespace("a b x d"), split_whitespace("x y z w v u t s r q p")};
  auto buckets = bleu_by_length(hyps, refs, {6, 5, 11});
  REQUIRE(buckets.size() == 6);
  CHECK(buckets[0].bucket.label() == "5-10");
  CHECK(buckets[0].sentences == 2);
  CHECK(std::abs(buckets[0].score.bleu - 0.6896662857896071) < 1e-6);  // same as the two-sentence corpus
  CHECK(buckets[1].sentences == 1);
  CHECK(buckets[1].score.bleu == doctest::Approx(1.0));
  CHECK(buckets[5].sentences == 0);
  CHECK(buckets[5].score.bleu == 0.0);
  CHECK_THROWS_AS(bleu_by_length(hyps, refs, {6}), std::invalid_argument);
}
