// The toy translation language (see attn/data/corpus.hpp): lexicon, grammar, translation rules,
// deterministic generation and the three splits.
#include "attn/data/corpus.hpp"

#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace attn {

namespace {

enum class Cat { Det, Adj, Noun, VerbT, VerbI, Adv, Conj };

struct Word {
  const char* src;
  const char* tgt;  // verbs: the stem; the agreement suffix is added by the rules
  Cat cat;
  bool animate;     // nouns only
};

// 47 words. Target words are invented; verbs take -a (animate subject) or -o (inanimate subject).
const std::vector<Word>& lexicon() {
  static const std::vector<Word> words = {
      {"the", "lo", Cat::Det, false}, {"a", "na", Cat::Det, false}, {"this", "esti", Cat::Det, false},
      {"that", "aqel", Cat::Det, false}, {"every", "kada", Cat::Det, false},
      {"big", "gran", Cat::Adj, false}, {"small", "piko", Cat::Adj, false}, {"red", "roza", Cat::Adj, false},
      {"old", "vetu", Cat::Adj, false}, {"young", "jova", Cat::Adj, false}, {"happy", "fela", Cat::Adj, false},
      {"quick", "rapi", Cat::Adj, false}, {"green", "verda", Cat::Adj, false},
      {"cat", "mau", Cat::Noun, true}, {"dog", "hundo", Cat::Noun, true}, {"bird", "pajo", Cat::Noun, true},
      {"horse", "kaval", Cat::Noun, true}, {"child", "nino", Cat::Noun, true}, {"teacher", "meso", Cat::Noun, true},
      {"farmer", "agro", Cat::Noun, true},
      {"apple", "poma", Cat::Noun, false}, {"book", "libro", Cat::Noun, false}, {"river", "rivo", Cat::Noun, false},
      {"house", "domo", Cat::Noun, false}, {"tree", "arbo", Cat::Noun, false}, {"stone", "petro", Cat::Noun, false},
      {"boat", "navo", Cat::Noun, false},
      {"sees", "vid", Cat::VerbT, false}, {"eats", "manj", Cat::VerbT, false}, {"likes", "am", Cat::VerbT, false},
      {"finds", "trov", Cat::VerbT, false}, {"carries", "port", Cat::VerbT, false},
      {"follows", "seg", Cat::VerbT, false}, {"paints", "pint", Cat::VerbT, false},
      {"sleeps", "dorm", Cat::VerbI, false}, {"runs", "kur", Cat::VerbI, false}, {"sings", "kant", Cat::VerbI, false},
      {"waits", "atend", Cat::VerbI, false},
      {"quickly", "rapide", Cat::Adv, false}, {"slowly", "lente", Cat::Adv, false}, {"often", "ofte", Cat::Adv, false},
      {"today", "hodi", Cat::Adv, false}, {"quietly", "kviete", Cat::Adv, false},
      {"and", "kaj", Cat::Conj, false}, {"but", "sed", Cat::Conj, false}, {"because", "car", Cat::Conj, false},
      {"while", "dum", Cat::Conj, false},
  };
  return words;
}

const char* kAnimateSuffix = "-a";
const char* kInanimateSuffix = "-o";

const std::unordered_map<std::string, const Word*>& by_source() {
  static const auto map = [] {
    std::unordered_map<std::string, const Word*> m;
    for (const auto& w : lexicon()) m.emplace(w.src, &w);
    return m;
  }();
  return map;
}

std::vector<const Word*> of_cat(Cat c) {
  std::vector<const Word*> out;
  for (const auto& w : lexicon())
    if (w.cat == c) out.push_back(&w);
  return out;
}

const Word* pick(Rng& rng, Cat c) {
  static const std::map<Cat, std::vector<const Word*>> by_cat = [] {
    std::map<Cat, std::vector<const Word*>> m;
    for (int k = 0; k <= int(Cat::Conj); ++k) m[Cat(k)] = of_cat(Cat(k));
    return m;
  }();
  const auto& v = by_cat.at(c);
  return v[rng.below(std::uint32_t(v.size()))];
}

// Clause shapes by length: (transitive, adjectives on subject, adjectives on object, adverb).
struct ClauseShape { bool transitive; int adj_s, adj_o; bool adverb; };
std::size_t clause_len(const ClauseShape& c) {
  return 2 + c.adj_s + 1 + (c.transitive ? 2 + c.adj_o : 0) + (c.adverb ? 1 : 0);
}
const std::vector<ClauseShape>& shapes_of_length(std::size_t len) {
  static const auto table = [] {
    std::map<std::size_t, std::vector<ClauseShape>> t;
    for (int tr = 0; tr < 2; ++tr)
      for (int as = 0; as <= 2; ++as)
        for (int ao = 0; ao <= (tr ? 2 : 0); ++ao)
          for (int adv = 0; adv < 2; ++adv) {
            ClauseShape c{tr == 1, as, ao, adv == 1};
            t[clause_len(c)].push_back(c);
          }
    return t;
  }();
  return table.at(len);
}
constexpr std::size_t kMinClause = 3, kMaxClause = 10;

void noun_phrase(std::vector<std::string>& out, Rng& rng, int adjectives) {
  out.push_back(pick(rng, Cat::Det)->src);
  const Word* first = nullptr;
  for (int i = 0; i < adjectives; ++i) {
    const Word* a = pick(rng, Cat::Adj);
    while (a == first) a = pick(rng, Cat::Adj);  // "the big big cat" is not a phrase
    first = a;
    out.push_back(a->src);
  }
  out.push_back(pick(rng, Cat::Noun)->src);
}

void clause(std::vector<std::string>& out, Rng& rng, std::size_t len) {
  const auto& shapes = shapes_of_length(len);
  const ClauseShape c = shapes[rng.below(std::uint32_t(shapes.size()))];
  noun_phrase(out, rng, c.adj_s);
  out.push_back(pick(rng, c.transitive ? Cat::VerbT : Cat::VerbI)->src);
  if (c.transitive) noun_phrase(out, rng, c.adj_o);
  if (c.adverb) out.push_back(pick(rng, Cat::Adv)->src);
}

[[noreturn]] void bad(const std::vector<std::string>& src, std::size_t i, const std::string& why) {
  std::string s;
  for (const auto& w : src) s += (s.empty() ? "" : " ") + w;
  throw std::invalid_argument("toy_translate: word " + std::to_string(i) + " of \"" + s + "\": " + why);
}

}  // namespace

SentencePair toy_sentence(Rng& rng, std::size_t length) {
  if (length < 4) throw std::invalid_argument("toy_sentence: length must be at least 4, got " + std::to_string(length));
  std::vector<std::string> src;
  std::size_t remaining = length;
  while (remaining > kMaxClause) {
    // leave room for a connective and a final clause of at least kMinClause words
    const std::size_t hi = std::min(kMaxClause, remaining - 1 - kMinClause);
    const std::size_t len = kMinClause + rng.below(std::uint32_t(hi - kMinClause + 1));
    clause(src, rng, len);
    src.push_back(pick(rng, Cat::Conj)->src);
    remaining -= len + 1;
  }
  clause(src, rng, remaining);
  return toy_translate(src);
}

SentencePair toy_sentence(std::uint64_t seed, std::size_t length) {
  Rng rng(seed);
  return toy_sentence(rng, length);
}

SentencePair toy_translate(const std::vector<std::string>& src) {
  SentencePair out;
  out.src = src;
  const auto& dict = by_source();
  std::vector<const Word*> w(src.size());
  for (std::size_t i = 0; i < src.size(); ++i) {
    auto it = dict.find(src[i]);
    if (it == dict.end()) bad(src, i, "'" + src[i] + "' is not in the lexicon");
    w[i] = it->second;
  }
  auto emit = [&](std::size_t i, const std::string& t) {
    out.tgt.push_back(t);
    out.alignment.push_back(int(i));
  };
  std::size_t i = 0;
  // NP = Det Adj* Noun -> Det Noun Adj*; returns the noun.
  auto noun_phrase_at = [&](std::vector<std::size_t>& idx) -> const Word* {
    if (i >= src.size() || w[i]->cat != Cat::Det) bad(src, i, "expected a determiner");
    idx.push_back(i++);
    std::vector<std::size_t> adjs;
    while (i < src.size() && w[i]->cat == Cat::Adj) adjs.push_back(i++);
    if (i >= src.size() || w[i]->cat != Cat::Noun) bad(src, i, "expected a noun");
    const Word* noun = w[i];
    idx.push_back(i++);
    idx.insert(idx.end(), adjs.begin(), adjs.end());  // adjectives follow the noun
    return noun;
  };
  while (true) {
    std::vector<std::size_t> subject, object;
    const Word* subj = noun_phrase_at(subject);
    if (i >= src.size() || (w[i]->cat != Cat::VerbT && w[i]->cat != Cat::VerbI)) bad(src, i, "expected a verb");
    const std::size_t verb = i++;
    if (w[verb]->cat == Cat::VerbT) noun_phrase_at(object);
    std::vector<std::size_t> adverb;
    if (i < src.size() && w[i]->cat == Cat::Adv) adverb.push_back(i++);
    // Subject, object, adverb, then the verb with its agreement marker (verb-final clause).
    for (auto k : subject) emit(k, w[k]->tgt);
    for (auto k : object) emit(k, w[k]->tgt);
    for (auto k : adverb) emit(k, w[k]->tgt);
    emit(verb, std::string(w[verb]->tgt) + (subj->animate ? kAnimateSuffix : kInanimateSuffix));
    if (i == src.size()) break;
    if (w[i]->cat != Cat::Conj) bad(src, i, "expected a connective or the end");
    emit(i, w[i]->tgt);
    ++i;
  }
  return out;
}

ToyWordClass toy_word_class(const std::string& source_word) {
  const auto it = by_source().find(source_word);
  if (it == by_source().end()) return ToyWordClass::unknown;
  switch (it->second->cat) {
    case Cat::Det: return ToyWordClass::determiner;
    case Cat::Adj: return ToyWordClass::adjective;
    case Cat::Noun: return ToyWordClass::noun;
    case Cat::VerbT:
    case Cat::VerbI: return ToyWordClass::verb;
    case Cat::Adv: return ToyWordClass::adverb;
    case Cat::Conj: return ToyWordClass::connective;
  }
  return ToyWordClass::unknown;
}

ToyCorpus make_toy_corpus(const CorpusConfig& cfg) {
  if (cfg.min_len < 4 || cfg.max_len < cfg.min_len)
    throw std::invalid_argument("make_toy_corpus: need 4 <= min_len <= max_len, got " + std::to_string(cfg.min_len) +
                                ", " + std::to_string(cfg.max_len));
  Rng rng(cfg.seed, 7);  // own stream: the corpus does not shift any model's initialisation
  ToyCorpus c;
  std::set<std::vector<std::string>> seen;
  auto fill = [&](std::vector<SentencePair>& split, std::size_t n) {
    split.reserve(n);
    while (split.size() < n) {
      const std::size_t len = cfg.min_len + rng.below(std::uint32_t(cfg.max_len - cfg.min_len + 1));
      SentencePair p = toy_sentence(rng, len);
      if (seen.insert(p.src).second) split.push_back(std::move(p));  // splits stay disjoint
    }
  };
  fill(c.train, cfg.n_train);
  fill(c.valid, cfg.n_valid);
  fill(c.test, cfg.n_test);
  c.source_vocab = toy_source_vocab();
  c.target_vocab = toy_target_vocab();
  return c;
}

Vocab toy_source_vocab() {
  std::vector<std::vector<std::string>> words(1);
  for (const auto& w : lexicon()) words[0].push_back(w.src);
  return Vocab::from_sentences(words);
}

Vocab toy_target_vocab() {
  std::vector<std::vector<std::string>> words(1);
  for (const auto& w : lexicon()) {
    if (w.cat == Cat::VerbT || w.cat == Cat::VerbI) {
      words[0].push_back(std::string(w.tgt) + kAnimateSuffix);
      words[0].push_back(std::string(w.tgt) + kInanimateSuffix);
    } else {
      words[0].push_back(w.tgt);
    }
  }
  return Vocab::from_sentences(words);
}

std::string toy_language_rules() {
  std::string s;
  s += R"(Source grammar (English-like):
  sentence = clause (connective clause)*            4-60 words
  clause   = NP verb_i [adverb] | NP verb_t NP [adverb]
  NP       = determiner adjective{0,2} noun
Target language, made from the source by:
  1. a dictionary: one target word per source word
  2. adjectives after their noun:  det adj noun      -> det noun adj
  3. verb-final clauses:           S verb O adverb   -> S O adverb verb
  4. agreement: the verb ends in -a when its subject is animate, -o when not
Example:
  the big cat sees a red apple today  ->  lo mau gran na poma roza hodi vid-a
  the old book waits                  ->  lo libro vetu atend-o
Dictionary:
)";
  const char* names[] = {"determiners", "adjectives", "nouns", "transitive verbs", "intransitive verbs", "adverbs",
                         "connectives"};
  for (int c = 0; c <= int(Cat::Conj); ++c) {
    s += std::string("  ") + names[c] + ":";
    for (const auto& w : lexicon())
      if (int(w.cat) == c) {
        s += std::string(" ") + w.src + "=" + w.tgt;
        if (w.cat == Cat::VerbT || w.cat == Cat::VerbI) s += "-";
        if (w.cat == Cat::Noun) s += w.animate ? "(anim)" : "(inan)";
      }
    s += "\n";
  }
  return s;
}

const SentencePair& pair_of_length(const std::vector<SentencePair>& pairs, std::size_t length, std::uint64_t nth) {
  if (pairs.empty()) throw std::invalid_argument("pair_of_length: no pairs");
  std::vector<const SentencePair*> found;
  for (const auto& p : pairs)
    if (p.src.size() == length) found.push_back(&p);
  if (found.empty()) return pairs.front();
  const std::uint64_t k = nth == 0 ? 0 : (nth - 1) % found.size();  // nth = 1 is the first; wraps
  return *found[std::size_t(k)];
}

}  // namespace attn
