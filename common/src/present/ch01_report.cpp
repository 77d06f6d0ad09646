// Chapter 01's reports (see attn/present/ch01_report.hpp).
#include "attn/present/ch01_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/chapters.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

void report_alpha(Narrator& nar, const AttentionStepView& v, const SentencePair& pair, std::size_t step) {
  nar.show("alpha", v.alpha, pair.src, _("weights over the source words, summing to 1"));
  const int want = step < pair.alignment.size() ? pair.alignment[step] : kNoSource;
  nar.result(_f("step {} looks at \"{}\" (position {}) with α = {:.3f} — the word it must translate is at position {}",
                step + 1, pair.src[v.top], v.top + 1, double(v.alpha(v.top)), want + 1));
}

void report_alignment(Narrator& nar, const Mat& alignment, const Labels& out_words, const SentencePair& pair,
                      const SentenceAlignmentStudy& s) {
  nar.heatmap("alignment", alignment, out_words, pair.src, _("rows: output words, columns: source words"), {0.0, 1.0});
  Vec reference = Vec::from_shape({pair.alignment.size()});
  for (std::size_t r = 0; r < pair.alignment.size(); ++r) reference(r) = float(pair.alignment[r]);
  nar.record("reference_alignment", reference);
  nar.result(_f("{} of {} output words look hardest at the source word they translate ({}); {} of them off the diagonal",
                s.all.hits, s.all.total, outcome_word(s.is_alignment.outcome), s.off_diagonal));
  nar.result(_f("of the {} words the toy language moves, {} look at the word they translate: the reorderings {}",
                s.reordered.total, s.reordered.hits,
                sentence_for(s.follows_reorderings.outcome, _("are followed off the diagonal"),
                             _("are not followed"), _("are followed only in part"))));
  for (const AlignmentMiss& m : s.misses) {
    const std::string word = out_words[m.row], translated = pair.src[std::size_t(m.translates)],
                      looked = pair.src[std::size_t(m.looks_at)];
    const int away = m.translates - m.looks_at;
    const std::string where = away == 1    ? std::string(_("the word just before it"))
                              : away == -1 ? std::string(_("the word just after it"))
                              : away > 0   ? _f("{} words before it", away)
                                           : _f("{} words after it", -away);
    nar.result(_f("  \"{}\" (translates \"{}\") looks hardest at \"{}\", {}", word, translated, looked, where));
    if (m.looked_word_written_at != kNoSource && std::size_t(m.looked_word_written_at) > m.row)
      nar.say(_f("  \"{}\" is written later, as \"{}\" (row {}): the target postponed it, and this row's weight sits "
                 "on the word the decoder skipped, not the one it writes",
                 looked, out_words[std::size_t(m.looked_word_written_at)], m.looked_word_written_at + 1));
    const bool right = m.row < pair.tgt.size() && word == pair.tgt[m.row];
    if (m.translations == 1 && right)
      nar.say(_f("  \"{}\" has one translation in the training pairs (\"{}\" all {} times): the decoder can write it "
                 "from its place in the sentence without reading it, and the word written is right",
                 translated, word, m.occurrences));
  }
}

void report_attention_gain(Narrator& nar, const std::vector<NamedResult>& results, const AttentionGainStudy& g) {
  nar.table(length_table(results), /*as_result=*/true);
  nar.block(bleu_chart(results));
  nar.result(_f("Bahdanau: BLEU {} (5-10) -> {} (51-60), {:.1f}% lower (the course's criterion, at most 5%: {}); no "
                "attention at 51-60: {} ({:+.1f} BLEU for attention; criterion, above 5 points: {})",
                format_score(g.attention_first), format_score(g.attention_last), 100.0 * g.attention_drop,
                outcome_word(g.keeps_length.outcome), format_score(g.baseline_last), g.attention_last - g.baseline_last,
                outcome_word(g.helps_long.outcome)));
  nar.say(_("the two models differ in more than attention: chapter 00's encoder reads one direction, this one both "
            "(as in the paper's RNNsearch), so the gap is attention and a bidirectional encoder together."));
  nar.say(_f("the source article {} says attention brings BLEU "
             "at length 50 back to 28.5 (from {} without), naming no source. Published: Bahdanau et al. 2014, Table 1: "
             "RNNsearch-50 26.75 vs RNNencdec-50 17.82 BLEU (all sentences; the same table's RNNsearch-50*, trained "
             "longer, scores 28.45 and may be the article's source); their Fig. 2: RNNsearch-50 holds its BLEU "
             "as sentences grow while the encoder–decoder without attention falls.",
             source_article(), kArticleBleuAt50));
}

std::vector<std::string> ch01_takeaway(const AttentionGainStudy& g, const SentenceAlignmentStudy& a) {
  return {
      _f("Additive attention rebuilds the context at every step: BLEU {} at 51-60 words vs {} for chapter 00's "
         "model (no attention, one-direction encoder){}.",
         format_score(g.attention_last), format_score(g.baseline_last),
         g.helps_long.holds() ? "" : _(" — no clear gain in this run")),
      g.keeps_length.holds()
          ? _f("Its quality barely depends on length here: {} -> {} BLEU from 5-10 to 51-60 words ({:.1f}% lower).",
               format_score(g.attention_first), format_score(g.attention_last), 100.0 * g.attention_drop)
          : _f("Its quality still falls with length: {} -> {} BLEU from 5-10 to 51-60 words ({:.1f}% lower).",
               format_score(g.attention_first), format_score(g.attention_last), 100.0 * g.attention_drop),
      a.is_alignment.holds()
          ? _f("The weights α are an alignment, learned without alignment labels: {} of {} words look at the word they "
               "translate, the reorderings off the diagonal.", a.all.hits, a.all.total)
          : _f("The weights α are only partly an alignment here: {} of {} words look at the word they translate.",
               a.all.hits, a.all.total),
  };
}

}  // namespace attn
