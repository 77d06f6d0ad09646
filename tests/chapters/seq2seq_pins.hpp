// Shared by the chapter 00–02 tests: the length buckets, reading a chapter's results.json, checking
// its by-length figures against the values pinned in the test (to the printed precision), and
// recomputing them from the export's translations.json alone.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/seq2seq_eval.hpp"

namespace seq2seq_pins {

inline const std::vector<std::string> kBuckets = {"5-10", "11-20", "21-30", "31-40", "41-50", "51-60"};

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

// figures: BLEU, exact %, token accuracy % for each of the six buckets, as printed (one decimal).
inline void check_pinned(const nlohmann::json& j, const std::string& model,
                         const std::vector<std::array<double, 3>>& figures) {
  REQUIRE(figures.size() == kBuckets.size());
  for (std::size_t b = 0; b < kBuckets.size(); ++b) {
    INFO(model << ", bucket " << kBuckets[b]);
    CHECK(std::abs(j["bleu_by_length"][model][kBuckets[b]].get<double>() - figures[b][0]) < 0.05);
    CHECK(std::abs(j["exact_match_by_length"][model][kBuckets[b]].get<double>() - figures[b][1]) < 0.05);
    CHECK(std::abs(j["token_accuracy_by_length"][model][kBuckets[b]].get<double>() - figures[b][2]) < 0.05);
  }
}

// Every printed line fits 100 columns: code points, less the combining marks U+0300–U+036F (h̄).
inline void check_widths(const std::string& out) {
  std::size_t col = 0;
  std::string line;
  for (std::size_t i = 0; i <= out.size(); ++i) {
    if (i == out.size() || out[i] == '\n') {
      CHECK_MESSAGE(col <= 100, "wider than 100 columns: " << line);
      col = 0, line.clear();
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(out[i]);
    const bool combining = (c == 0xCC || (c == 0xCD && i + 1 < out.size() &&
                                          static_cast<unsigned char>(out[i + 1]) <= 0xAF));
    col += (c & 0xC0) != 0x80 && !combining;
    line += out[i];
  }
}

inline attn::Tokens words_of(const std::string& line) {
  attn::Tokens t;
  std::string w;
  for (char c : line + " ") {
    if (c != ' ') w += c;
    else if (!w.empty()) t.push_back(w), w.clear();
  }
  return t;
}

// The test pairs and one model's outputs as translations.json holds them.
inline std::vector<attn::SentencePair> pairs_of(const nlohmann::json& t) {
  std::vector<attn::SentencePair> pairs;
  for (std::size_t i = 0; i < t["sources"].size(); ++i)
    pairs.push_back({words_of(t["sources"][i]), words_of(t["references"][i]), t["alignments"][i].get<std::vector<int>>()});
  return pairs;
}
inline std::vector<attn::Tokens> hyps_of(const nlohmann::json& t, const std::string& model) {
  std::vector<attn::Tokens> hyps;
  for (const auto& h : t["hypotheses"][model]) hyps.push_back(words_of(h));
  return hyps;
}

// Every by-length figure of `model` in results.json, recomputed from translations.json alone: BLEU
// with attn/data/bleu.hpp, exact match and token accuracy written out here.
inline void check_recomputed(const nlohmann::json& results, const nlohmann::json& translations, const std::string& model) {
  const std::vector<attn::SentencePair> pairs = pairs_of(translations);
  const std::vector<attn::Tokens> hyps = hyps_of(translations, model);
  REQUIRE(hyps.size() == pairs.size());
  const attn::EvalResult e = attn::evaluate_translations(hyps, pairs);
  for (const auto& b : e.buckets) {
    const std::string label = b.bucket.label();
    INFO(model << ", bucket " << label);
    std::size_t n = 0, exact = 0, right = 0, ref_tokens = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (pairs[i].src.size() < b.bucket.lo || pairs[i].src.size() > b.bucket.hi) continue;
      ++n;
      exact += hyps[i] == pairs[i].tgt;
      for (std::size_t k = 0; k < pairs[i].tgt.size(); ++k) right += k < hyps[i].size() && hyps[i][k] == pairs[i].tgt[k];
      ref_tokens += pairs[i].tgt.size();
    }
    REQUIRE(n > 0);
    CHECK(std::abs(results["bleu_by_length"][model][label].get<double>() - b.bleu) < 0.051);
    CHECK(std::abs(results["exact_match_by_length"][model][label].get<double>() - 100.0 * double(exact) / double(n)) < 0.051);
    CHECK(std::abs(results["token_accuracy_by_length"][model][label].get<double>() -
                   100.0 * double(right) / double(ref_tokens)) < 0.051);
  }
}

inline double figure(const nlohmann::json& results, const char* metric, const std::string& model, const std::string& bucket) {
  return results[metric][model][bucket].get<double>();
}

}  // namespace seq2seq_pins
