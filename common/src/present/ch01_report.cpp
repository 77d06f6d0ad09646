// Chapter 01's reports (see attn/present/ch01_report.hpp).
#include "attn/present/ch01_report.hpp"

#include <algorithm>
#include <utility>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/chapters.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

void report_energies(Narrator& nar, const AttentionStepView& v, const SentencePair& pair) {
  if (v.energies.size() < 2) return;
  std::size_t first = 0, second = 1;
  if (v.energies(second) > v.energies(first)) std::swap(first, second);
  for (std::size_t j = 2; j < v.energies.size(); ++j)
    if (v.energies(j) > v.energies(first)) second = first, first = j;
    else if (v.energies(j) > v.energies(second)) second = j;
  nar.result(_f("look: \"{}\" scores highest ({:.2f}), \"{}\" next ({:.2f}); step 3's softmax turns that gap of {:.2f} "
                "into α = {:.3f} against {:.3f}", pair.src[first], double(v.energies(first)), pair.src[second],
                double(v.energies(second)), double(v.energies(first) - v.energies(second)), double(v.alpha(first)),
                double(v.alpha(second))));
}

void report_alpha(Narrator& nar, const AttentionStepView& v, const SentencePair& pair, std::size_t step) {
  nar.show("alpha", v.alpha, pair.src, _("weights over the source words, summing to 1"));
  const int want = step < pair.alignment.size() ? pair.alignment[step] : kNoSource;
  nar.result(_f("decoder step i = {} looks at \"{}\" (position {}) with α = {:.3f} — the word it must translate is at "
                "position {}",
                step + 1, pair.src[v.top], v.top + 1, double(v.alpha(v.top)), want + 1));
}

void report_alignment(Narrator& nar, const Mat& alignment, const Labels& out_words, const SentencePair& pair,
                      const SentenceAlignmentStudy& s) {
  nar.heatmap("alignment", alignment, out_words, pair.src, _("rows: output words, columns: source words"), {0.0, 1.0});
  Vec reference = Vec::from_shape({pair.alignment.size()});
  for (std::size_t r = 0; r < pair.alignment.size(); ++r) reference(r) = float(pair.alignment[r]);
  nar.record("reference_alignment", reference);
  nar.result(_f("{} of {} output words look hardest at the source word they translate (criterion: at least {:.0f}%: {}); "
                "{} of them off the diagonal",
                s.all.hits, s.all.total, 100.0 * s.is_alignment.bound, outcome_word(s.is_alignment.outcome),
                s.off_diagonal));
  nar.say(_("criterion: the bar this course sets for a verdict before measuring, printed beside it so the verdict can "
            "be checked; holds / fails say which side of the bar the figure is on."));
  if (alignment.shape(0) > s.all.total)
    nar.say(_f("the map has {} rows, {} of them counted: the others translate no source word (<eos>, or a word past "
               "the reference's end), so they have no right word to look at.", alignment.shape(0), s.all.total));
  nar.result(_f("of the {} words the toy language moves, {} look at the word they translate: the reorderings {}",
                s.reordered.total, s.reordered.hits,
                sentence_for(s.follows_reorderings.outcome, _("are followed off the diagonal"),
                             _("are not followed"), _("are followed only in part"))));
  nar.say(_("a moved word: one whose translation stands at another position than the word itself (the target "
            "position differs from the source position)."));
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
                 "from its place in the sentence without reading it (a guess: this run does not test it), and the word "
                 "written is right",
                 translated, word, m.occurrences));
  }
}

void report_test_alignment(Narrator& nar, const TestAlignmentStudy& t) {
  nar.say(_f("one sentence is one example; over all {} test pairs, teacher-forced (the decoder reads the reference's "
             "previous word, so every reference word has a row of α):", t.sentences));
  nar.result(_f("{} of {} target words ({:.1f}%) look hardest at the source word they translate (criterion: at least "
                "{:.0f}%: {})", t.all.hits, t.all.total, 100.0 * t.all.share(), 100.0 * t.is_alignment.bound,
                outcome_word(t.is_alignment.outcome)));
  nar.result(_f("of the {} words the toy language moves, {} ({:.1f}%) do: the reorderings {}", t.reordered.total,
                t.reordered.hits, 100.0 * t.reordered.share(),
                sentence_for(t.follows_reorderings.outcome, _("are followed off the diagonal"), _("are not followed"),
                             _("are followed only in part"))));
  // Two comparisons from the same counts: a map that always looks straight down the diagonal hits
  // exactly the words that do not move; and how the unmoved and the moved words fare apart.
  const std::size_t unmoved = t.all.total - t.reordered.total, unmoved_hits = t.all.hits - t.reordered.hits;
  if (t.all.total > 0 && unmoved > 0 && t.reordered.total > 0)
    nar.result(_f("for comparison: a map that always looks straight down the diagonal would score {:.1f}% (the {} of "
                  "{} words that do not move); the model scores {:.1f}% on those and {:.1f}% on the moved ones, so "
                  "{} of its {} misses are moved words.",
                  100.0 * double(unmoved) / double(t.all.total), unmoved, t.all.total,
                  100.0 * double(unmoved_hits) / double(unmoved), 100.0 * t.reordered.share(),
                  t.reordered.total - t.reordered.hits, t.all.total - t.all.hits));
}

void report_context(Narrator& nar, const AttentionStepView& v, const Mat& H, const SentencePair& pair) {
  nar.show("context", v.context, {}, _f("c_i: this step's own summary of the source (2·{})", v.context.size() / 2));
  double diff = 0.0;
  for (std::size_t k = 0; k < v.context.size(); ++k) diff = std::max(diff, std::abs(double(v.context(k)) - H(v.top, k)));
  nar.result(_f("look: α puts {:.3f} on \"{}\", so c_i is mostly that word's row of H: they differ by at most {:.3f} in "
                "any entry", double(v.alpha(v.top)), pair.src[v.top], diff));
}

void report_parameters(Narrator& nar, const Seq2Seq& m, const Seq2Seq& base) {
  const auto pm = parameter_groups(m), pb = parameter_groups(base);
  auto get = [](const std::map<std::string, std::size_t>& g, const char* k) {
    const auto it = g.find(k);
    return it == g.end() ? std::size_t(0) : it->second;
  };
  const long long total = (long long)parameter_count(m), base_total = (long long)parameter_count(base);
  const long long attn = (long long)get(pm, "attention") - (long long)get(pb, "attention");
  const long long init = (long long)get(pm, "init") - (long long)get(pb, "init");
  const long long enc = (long long)get(pm, "encoder") - (long long)get(pb, "encoder");
  const long long rest = total - base_total - attn - init - enc;
  nar.say(_f("parameters: {} here against chapter 00's {}: attention adds {} (W_a, U_a, v_a); the layer that starts the "
             "decoder, s_0 = tanh(W_s ←h_1), adds {} (W_s: a learned {}->{} layer; ←h_1: the backward state at word 1, "
             "which has read the whole sentence; Bahdanau et al. 2014, App. A.2.2; chapter 00 starts at s_0 = c); the "
             "encoder, 2×{} (one GRU per direction) instead of one of {}, has {} against {} ({:+}); everything else "
             "{:+}: {} {:+} {:+} {:+} {:+} = {}.",
             total, base_total, attn, init, m.cfg.enc_hidden, m.cfg.dec_hidden, m.cfg.enc_hidden, base.cfg.dec_hidden, get(pm, "encoder"), get(pb, "encoder"),
             enc, rest, base_total, attn, init, enc, rest, total));
}

void report_wrong_outputs(Narrator& nar, const WrongOutputs& w, const EvalResult& eval) {
  if (w.wrong == 0) {
    nar.result(_f("every one of the {} test outputs equals its reference.", w.judged));
    return;
  }
  nar.result(_f("{} of the {} test outputs differ from their reference; {} of them run past the reference's end, and "
                "tok % does not count words past that end, so such an output can still score 100% there.",
                w.wrong, w.judged, w.too_long));
  const Tokens &h = eval.hyps[w.example], &r = eval.refs[w.example];
  nar.say(_f("one of them (test pair {}, {} words):", w.example + 1, r.size()));
  if (h.size() > r.size() && std::equal(r.begin(), r.end(), h.begin())) {
    // Only the words past the reference's end: two long wrapped lines could not be compared by eye.
    nar.say(_f("  reference: {}", fmt::join(r, " ")));
    nar.say(_f("  output:    the whole reference, then {} more words: {}", h.size() - r.size(),
               fmt::join(h.begin() + std::ptrdiff_t(r.size()), h.end(), " ")));
    nar.say(_("  with attention the decoder can still miss where to stop."));
    return;
  }
  nar.say(_f("  output:    {}", fmt::join(h, " ")));
  nar.say(_f("  reference: {}", fmt::join(r, " ")));
}

void report_attention_gain(Narrator& nar, const std::vector<NamedResult>& results, const AttentionGainStudy& g,
                           bool baseline_still_improving) {
  const Table by_length = length_table(results);
  nar.table(by_length, /*as_result=*/true);
  if (const std::string note = two_decimals_note(by_length); !note.empty()) nar.say(note);
  nar.block(bleu_chart(results));
  nar.result(_f("Bahdanau: BLEU {} (5-10) -> {} (51-60), {:.1f}% lower (the course's criterion, at most 5%: {}); no "
                "attention at 51-60: {} ({:+.1f} BLEU for attention, the two-direction encoder and the learned s_0 together; criterion, above 5 points: {})",
                format_score(g.attention_first), format_score(g.attention_last), 100.0 * g.attention_drop,
                outcome_word(g.keeps_length.outcome), format_score(g.baseline_last), g.attention_last - g.baseline_last,
                outcome_word(g.helps_long.outcome)));
  nar.say(_("the two models differ in more than attention: chapter 00's encoder reads one direction, this one both "
            "(as in the paper's RNNsearch), and this decoder starts from s_0 = tanh(W_s ←h_1) instead of c; each is "
            "one training run, kept at its best validation step (shown in Step 1/7 of each chapter): the gap is attention, the "
            "bidirectional encoder and that start together."));
  if (baseline_still_improving)
    nar.say(_("chapter 00's model was best at the last of its training steps (see Step 1/7 of chapter 00): it may have been "
              "undertrained, so part of the gap may be that too."));
  const BucketMetrics& all = results.back().second.overall;
  if (as_printed(all.bleu) >= 95.0)
    nar.say(_f("the toy task is solved almost perfectly here (BLEU {} over all {} test sentences, exact match {}%): a "
               "flat line so near 100 is partly a ceiling; on real data Bahdanau et al. 2014, Fig. 2, show RNNsearch-50 "
               "flat and RNNsearch-30 falling as sentences grow (-30, -50: trained on sentences of up to 30 or 50 "
               "words).",
               format_score(all.bleu), all.sentences, format_score(all.exact)));
  nar.say(_f("the source article {} says attention brings BLEU "
             "at length 50 back to 28.5 (from {} without), naming no source. Published: Bahdanau et al. 2014, Table 1: "
             "RNNsearch-50 26.75 vs RNNencdec-50 17.82 BLEU (all sentences; the same table's RNNsearch-50*, trained "
             "longer, scores 28.45 — the article's 28.5, but over all sentences, not at length 50); their Fig. 2: RNNsearch-50 holds its BLEU "
             "as sentences grow while the encoder–decoder without attention falls.",
             source_article(), kArticleBleuAt50));
}

std::vector<std::string> ch01_takeaway(const AttentionGainStudy& g, const TestAlignmentStudy& t) {
  return {
      _f("Additive attention rebuilds the context at every step. With it, a two-direction encoder and a learned "
         "start s_0 (chapter 00's model has none of the three): BLEU {} at 51-60 words vs {}; these runs do not "
         "say how much of the gap each of the three brings{}.",
         format_score(g.attention_last), format_score(g.baseline_last),
         g.helps_long.holds() ? "" : _(" — no clear gain in this run")),
      g.keeps_length.holds()
          ? _f("Its quality barely depends on length here: {} -> {} BLEU from 5-10 to 51-60 words ({:.1f}% lower).",
               format_score(g.attention_first), format_score(g.attention_last), 100.0 * g.attention_drop)
          : _f("Its quality still falls with length: {} -> {} BLEU from 5-10 to 51-60 words ({:.1f}% lower).",
               format_score(g.attention_first), format_score(g.attention_last), 100.0 * g.attention_drop),
      t.is_alignment.holds()
          ? _f("The weights α are an alignment, learned without alignment labels: over the {} test pairs, {:.1f}% of "
               "target words look hardest at the word they translate, {:.1f}% of the moved ones (step 5).",
               t.sentences, 100.0 * t.all.share(), 100.0 * t.reordered.share())
          : _f("The weights α are only partly an alignment here: over the {} test pairs, {:.1f}% of target words "
               "look hardest at the word they translate (step 5).", t.sentences, 100.0 * t.all.share()),
  };
}

}  // namespace attn
