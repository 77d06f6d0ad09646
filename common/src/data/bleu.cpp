// Corpus BLEU-4 (see attn/data/bleu.hpp).
#include "attn/data/bleu.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

namespace attn {

void BleuStats::add(const BleuStats& o) {
  for (int n = 0; n < 4; ++n) {
    matches[n] += o.matches[n];
    totals[n] += o.totals[n];
  }
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
}

namespace {
std::map<Tokens, std::size_t> ngram_counts(const Tokens& s, std::size_t n) {
  std::map<Tokens, std::size_t> counts;
  for (std::size_t i = 0; i + n <= s.size(); ++i) ++counts[Tokens(s.begin() + std::ptrdiff_t(i), s.begin() + std::ptrdiff_t(i + n))];
  return counts;
}
}  // namespace

BleuStats bleu_stats(const Tokens& hyp, const Tokens& ref) {
  BleuStats st;
  st.hyp_len = hyp.size();
  st.ref_len = ref.size();
  for (std::size_t n = 1; n <= 4; ++n) {
    const auto h = ngram_counts(hyp, n), r = ngram_counts(ref, n);
    for (const auto& [gram, count] : h) {
      auto it = r.find(gram);
      if (it != r.end()) st.matches[n - 1] += std::min(count, it->second);  // clipped count
      st.totals[n - 1] += count;
    }
  }
  return st;
}

BleuScore bleu_from_stats(const BleuStats& st) {
  BleuScore s;
  s.hyp_len = st.hyp_len;
  s.ref_len = st.ref_len;
  bool any_zero = false;
  double log_sum = 0.0;
  for (int n = 0; n < 4; ++n) {
    s.precisions[n] = st.totals[n] > 0 ? double(st.matches[n]) / double(st.totals[n]) : 0.0;
    if (st.matches[n] == 0) any_zero = true;
    else log_sum += std::log(s.precisions[n]);
  }
  if (st.hyp_len == 0) s.brevity_penalty = 0.0;
  else s.brevity_penalty = st.hyp_len > st.ref_len ? 1.0 : std::exp(1.0 - double(st.ref_len) / double(st.hyp_len));
  s.bleu = any_zero ? 0.0 : s.brevity_penalty * std::exp(log_sum / 4.0);
  return s;
}

BleuScore corpus_bleu(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("corpus_bleu: " + std::to_string(hyps.size()) + " hypotheses but " +
                                std::to_string(refs.size()) + " references (one reference per hypothesis)");
  BleuStats total;
  for (std::size_t i = 0; i < hyps.size(); ++i) total.add(bleu_stats(hyps[i], refs[i]));
  return bleu_from_stats(total);
}

std::string LengthBucket::label() const { return std::to_string(lo) + "-" + std::to_string(hi); }

std::vector<LengthBucket> default_length_buckets() {
  return {{5, 10}, {11, 20}, {21, 30}, {31, 40}, {41, 50}, {51, 60}};
}

std::vector<BucketBleu> bleu_by_length(const std::vector<Tokens>& hyps, const std::vector<Tokens>& refs,
                                       const std::vector<std::size_t>& lengths,
                                       const std::vector<LengthBucket>& buckets) {
  if (hyps.size() != refs.size() || lengths.size() != hyps.size())
    throw std::invalid_argument("bleu_by_length: " + std::to_string(hyps.size()) + " hypotheses, " +
                                std::to_string(refs.size()) + " references and " + std::to_string(lengths.size()) +
                                " lengths: need one of each per sentence");
  std::vector<BucketBleu> out;
  for (const auto& b : buckets) {
    BucketBleu bb{b, 0, {}};
    BleuStats st;
    for (std::size_t i = 0; i < hyps.size(); ++i)
      if (lengths[i] >= b.lo && lengths[i] <= b.hi) {
        st.add(bleu_stats(hyps[i], refs[i]));
        ++bb.sentences;
      }
    bb.score = bleu_from_stats(st);
    out.push_back(bb);
  }
  return out;
}

Tokens split_whitespace(const std::string& line) {
  Tokens out;
  std::string w;
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

}  // namespace attn
