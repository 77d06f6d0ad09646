// Corpus BLEU-4 (Papineni, Roukos, Ward & Zhu 2002), one reference per sentence, no smoothing:
//   p_n  = Σ_sentences clipped n-gram matches / Σ_sentences hypothesis n-grams,  n = 1…4
//          (clipped: a hypothesis n-gram counts at most as often as it occurs in the reference)
//   BP   = 1 if c > r, else exp(1 − r/c)      c = total hypothesis length, r = total reference length
//   BLEU = BP · exp(¼ Σ_n log p_n)            0 when any p_n is 0 or the hypotheses are empty
// Scores are on the 0–1 scale here; tools and chapters print ×100. Sums are corpus-level, as in the
// paper and sacreBLEU — not an average of sentence scores.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace attn {

using Tokens = std::vector<std::string>;

struct BleuStats {
  std::array<std::size_t, 4> matches{};  // clipped n-gram matches, n = 1…4
  std::array<std::size_t, 4> totals{};   // hypothesis n-grams
  std::size_t hyp_len = 0, ref_len = 0;
  void add(const BleuStats& other);
};

struct BleuScore {
  double bleu = 0.0;                     // 0–1
  std::array<double, 4> precisions{};    // p_1…p_4, 0–1 (0 when there is no n-gram)
  double brevity_penalty = 0.0;
  std::size_t hyp_len = 0, ref_len = 0;
};

// One sentence's counts.
BleuStats bleu_stats(const Tokens& hyp, const Tokens& ref);
// The score from accumulated counts.
BleuScore bleu_from_stats(const BleuStats& stats);
// hyps[i] is scored against refs[i]; different counts throw std::invalid_argument.
BleuScore corpus_bleu(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs);

// Inclusive length range, e.g. {11, 20} labelled "11-20".
struct LengthBucket {
  std::size_t lo, hi;
  std::string label() const;
};
// 5-10, 11-20, 21-30, 31-40, 41-50, 51-60 (the chapters' table).
std::vector<LengthBucket> default_length_buckets();

struct BucketBleu {
  LengthBucket bucket;
  std::size_t sentences = 0;
  BleuScore score;
};
// Corpus BLEU within each bucket; lengths[i] (usually the source length) places sentence i.
// Sentences outside every bucket are left out.
std::vector<BucketBleu> bleu_by_length(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs,
                                       const std::vector<std::size_t>& lengths,
                                       const std::vector<LengthBucket>& buckets = default_length_buckets());

// Whitespace tokenisation (spaces, tabs), as attn-bleu reads its files.
Tokens split_whitespace(const std::string& line);

}  // namespace attn
