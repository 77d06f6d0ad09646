// A toy translation task, generated in C++ and deterministic by seed, made to need attention:
// a small English-like source language (47 words: determiners, adjectives, nouns of two classes,
// transitive and intransitive verbs, adverbs, connectives) and a target language made from it by
//   1. a dictionary (one target word per source word),
//   2. adjectives after their noun       "the big cat"          -> "lo mau gran",
//   3. verb-final clauses                "cat sees bird today"  -> "mau pajo hodi vid-a",
//   4. one agreement marker: the verb ends in -a when its subject is animate, -o when not, so the
//      verb (at the end of its clause) depends on a noun at the start of the clause.
// Sentences are clauses joined by connectives, 4–60 tokens; source and target have the same
// length and every target token has exactly one source token (`alignment`), which makes the
// expected attention map known. toy_language_rules() prints all of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/tensor/rng.hpp"
#include "attn/data/vocab.hpp"

namespace attn {

struct SentencePair {
  std::vector<std::string> src;
  std::vector<std::string> tgt;
  std::vector<int> alignment;  // alignment[i] = index in src of the word tgt[i] translates
};

struct CorpusConfig {
  std::uint64_t seed = 1;
  std::size_t n_train = 20000, n_valid = 500, n_test = 1200;
  std::size_t min_len = 4, max_len = 60;  // source length, drawn uniformly per sentence
};

struct ToyCorpus {
  std::vector<SentencePair> train, valid, test;  // disjoint: no source sentence appears twice
  Vocab source_vocab, target_vocab;              // every word of the language (not only those seen)
};

ToyCorpus make_toy_corpus(const CorpusConfig& cfg);

// One sentence pair of exactly `length` source tokens (4 ≤ length), drawn from seed.
SentencePair toy_sentence(std::uint64_t seed, std::size_t length);
// The same from a running generator (what make_toy_corpus uses).
SentencePair toy_sentence(Rng& rng, std::size_t length);

// The nth pair (1 = the first; wrapping past the last) whose source has `length` tokens;
// pairs.front() when none has. Chapters pass their --seed as nth to pick the sentence they show.
// Throws std::invalid_argument when pairs is empty.
const SentencePair& pair_of_length(const std::vector<SentencePair>& pairs, std::size_t length,
                                   std::uint64_t nth = 1);

// Translates a source sentence by the rules (throws std::invalid_argument on words or structure
// outside the grammar). toy_sentence(...).tgt == toy_translate(toy_sentence(...).src).tgt.
SentencePair toy_translate(const std::vector<std::string>& src);

// The word class of a source word in the toy grammar (unknown: not in the lexicon).
enum class ToyWordClass { determiner, adjective, noun, verb, adverb, connective, unknown };
ToyWordClass toy_word_class(const std::string& source_word);

// The grammar, the reorderings, the agreement marker and the dictionary, as text for a chapter.
std::string toy_language_rules();

// Vocabularies of the whole language (deterministic ids; specials first).
Vocab toy_source_vocab();
Vocab toy_target_vocab();

}  // namespace attn
