// Chapter 00's reports (see attn/present/ch00_report.hpp).
#include "attn/present/ch00_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/chapters.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
std::string percent_lower(const Verdict& v) {
  return std::isfinite(v.measured) ? _f("{:.0f}% lower", 100.0 * v.measured)
                                   : std::string(_("no relative drop: short sentences already score 0"));
}
}  // namespace

std::string fall_against_article(const Verdict& v) {
  const long ours = std::lround(100.0 * v.measured), theirs = std::lround(100.0 * v.bound);
  return ours > theirs ? _f("steeper than the article's {}%, and over a wider span of lengths — the claim of a fall "
                            "holds; the BLEU values themselves differ (a toy task, other buckets)",
                            theirs)
                       : _f("as steep as the article's {}%, over a wider span of lengths — the claim of a fall "
                            "holds; the BLEU values themselves differ (a toy task, other buckets)",
                            theirs);
}

void report_repeated_word(Narrator& nar, const Mat& rows, const Labels& words) {
  for (std::size_t a = 0; a < words.size(); ++a)
    for (std::size_t b = a + 1; b < words.size(); ++b) {
      if (words[a] != words[b]) continue;
      double diff = 0.0;
      for (std::size_t k = 0; k < rows.shape(1); ++k) diff = std::max(diff, std::abs(double(rows(a, k)) - rows(b, k)));
      nar.result(diff == 0.0 ? _f("look: \"{}\" stands at positions {} and {}; its two rows are identical", words[a],
                                  a + 1, b + 1)
                             : _f("look: \"{}\" stands at positions {} and {}; its two rows differ by at most {:.3f} "
                                  "in any entry",
                                  words[a], a + 1, b + 1, diff));
      return;
    }
}

void report_cosine_to_c(Narrator& nar, const Vec& cos, const Labels& words) {
  nar.show("cosine_to_c", cos, words, _("cos(h_j, c): 1 = the same direction as c"));
  nar.say(_f("look: the grids above are not read by eye; this row is: cos(h_j, c) goes from {:.3f} at \"{}\" to 1 at "
             "\"{}\" (c is that word's state). A low cosine does not say that a word is forgotten "
             "(it measures direction, not content); steps 5 and 6 measure what the decoder gets right.",
             cos(0), words.front(), words.back()));
}

void report_decoding(Narrator& nar, const DecodeTrace& tr, const SentencePair& pair, const Vocab& tv) {
  const Mat states = decoder_state_rows(tr);
  Labels step_labels;
  for (std::size_t i = 0; i < states.shape(0); ++i) step_labels.push_back("s_" + std::to_string(i + 1));
  nar.show("decoder_states", states, step_labels, {}, _("s_0 = c; one state per output word"));
  std::size_t near_limit = 0;  // entries the GRU's tanh has pushed close to ±1
  for (float x : states) near_limit += std::abs(x) > 0.95f;
  nar.say(_f("look: {:.0f}% of all {}×{} entries (the grid shows only some columns) are beyond ±0.95: a GRU state "
             "stays between −1 and 1 (it mixes tanh outputs, which lie in that range), so ±0.95 is near that limit; "
             "the grid is not read by eye: the table below says what each state wrote.",
             100.0 * double(near_limit) / double(states.size()), states.shape(0), states.shape(1)));
  nar.record("decoder_logits", tr.logits);
  Table t({"i", _("reads y_{i−1}"), _("writes y_i"), "p(y_i)", _("reference")});
  const std::vector<DecodeRow> rows = decode_rows(tr);
  for (std::size_t i = 0; i < rows.size(); ++i)
    t.add({std::to_string(i + 1), tv.token(rows[i].input), tv.token(rows[i].output), fmt::format("{:.3f}", rows[i].p),
           i < pair.tgt.size() ? pair.tgt[i] : i == pair.tgt.size() ? "<eos>" : "—"});  // "—": past its end
  nar.table(t);
  nar.say(_f("logits: the {} raw scores W_o[s_i; c] of row i, one per target word; softmax turns them into "
             "probabilities that sum to 1, and p(y_i) is the one at the word written (--export DIR saves the logits "
             "as decoder_logits).", tr.logits.shape(1)));
  if (rows.size() > pair.tgt.size() + 1)
    nar.say(_("—: past the reference's end (its last word is <eos>)."));
  const Tokens out = tv.decode(tr.ids);
  nar.result(_f("output:    {}", fmt::join(out, " ")));
  nar.result(_f("reference: {}   ({})", fmt::join(pair.tgt, " "), out == pair.tgt ? _("exact match") : _("differs")));
  report_output_diff(nar, compare_output(out, pair.tgt), rows);
}

void report_output_diff(Narrator& nar, const OutputDiff& d, const std::vector<DecodeRow>& rows) {
  if (d.exact) {
    nar.say(_("nothing goes wrong in this sentence: the output equals its reference (--seed picks another)."));
    return;
  }
  const std::size_t i = d.first_wrong;
  const std::string p = i < rows.size() ? fmt::format("{:.3f}", rows[i].p) : std::string("–");
  std::string what;
  if (d.written.empty())
    what = _f("look at row {}: the output stops there, where the reference goes on with \"{}\"", i + 1, d.wanted);
  else if (d.wanted.empty())
    what = _f("look at row {}: the output goes on with \"{}\" (p = {}) past the reference's end", i + 1, d.written, p);
  else if (d.written_at_in_ref == kNoSource)
    what = _f("look at row {}: it writes \"{}\" (p = {}) where the reference has \"{}\"; \"{}\" is nowhere in the "
              "reference", i + 1, d.written, p, d.wanted, d.written);
  else
    what = _f("look at row {}: it writes \"{}\" (p = {}) where the reference has \"{}\"; \"{}\" is the reference's "
              "word {}, so a word is written out of its order", i + 1, d.written, p, d.wanted, d.written,
              d.written_at_in_ref + 1);
  nar.result(_f("where it goes wrong: {}.", what));
  nar.result(d.after_first_right == 1
                 ? _f("from there on the decoder reads its own output: 1 of the {} words it writes after that row is "
                      "right at its place", d.after_first)
                 : _f("from there on the decoder reads its own output: {} of the {} words it writes after that row "
                      "are right at their place", d.after_first_right, d.after_first));
  const std::string foreign = d.foreign.empty() ? std::string(_("none")) : fmt::format("{}", fmt::join(d.foreign, _(", ")));
  const std::string missing = d.missing.empty() ? std::string(_("none")) : fmt::format("{}", fmt::join(d.missing, _(", ")));
  if (d.extra.empty())
    nar.result(_f("in all: {} words right at their place; {} reference words written at another place; not in the "
                  "reference: {}; never written: {}", d.in_place, d.elsewhere, foreign, missing));
  else
    nar.result(_f("in all: {} words right at their place; {} reference words written at another place; written more "
                  "often than the reference has it: {}; not in the reference: {}; never written: {}",
                  d.in_place, d.elsewhere, fmt::join(d.extra, " "), foreign, missing));
  for (const auto& [written, wanted] : d.wrong_ending)
    nar.result(_f("{}: the right verb with the wrong ending (the reference has {}): step 1's rule, -a for an animate "
                  "subject, -o for one that is not, is broken here",
                  written, wanted));
  nar.say(d.elsewhere > d.foreign.size() + d.extra.size()
              ? _("in this sentence most wrong words are the reference's own words at another place: the decoder got "
                  "more of the words right than of their places.")
              : _("in this sentence most wrong words are not in the reference at all."));
}

void report_bottleneck_bleu(Narrator& nar, const BottleneckStudy& s) {
  const std::string fall = fall_against_article(s.collapses);
  const std::vector<NamedResult> results = {{"no_attention", s.eval}};
  nar.table(length_table(results), /*as_result=*/true);
  nar.block(bleu_chart(results));
  nar.result(_f("BLEU {} (5-10) -> {} (51-60): {}", format_score(s.first_bleu), format_score(s.last_bleu),
                percent_lower(s.collapses)));
  nar.result(_f("claim of the source article {}: without "
                "attention BLEU falls from {} at length 10 to {} at length 50 ({:.0f}% lower; it names no source). "
                "Here, from {} to {} words, it is {}: {}",
                source_article(), kArticleBleuAt10, kArticleBleuAt50, 100.0 * s.collapses.bound, s.eval.buckets.front().bucket.label(),
                s.eval.buckets.back().bucket.label(), percent_lower(s.collapses),
                sentence_for(s.collapses.outcome,
                             fall.c_str(),
                             _("far less steep — the claim does not hold here"),
                             s.collapses.outcome == Outcome::partly ? _("less steep — it holds only in part")
                                                                    : _("not measurable"))));
  nar.say(_("the closest published figures: Bahdanau et al. 2014, Table 1: RNNencdec-50 (no attention) 17.82 BLEU "
            "on all test sentences, RNNsearch-50 (attention) 26.75; their Fig. 2 plots BLEU against sentence length: "
            "the encoder–decoder without attention falls as sentences grow, RNNsearch-50 holds its BLEU (-50: trained on "
            "sentences of up to 50 words)."));
  nar.say(_("whether the fall is the fixed vector's or the longer sentences' (more clauses, more reorderings): chapter 01 "
            "scores the same buckets with attention, though its model also changes the encoder (two directions) and "
            "the decoder's start, so it narrows the question without settling it."));
}

void report_best_step(Narrator& nar, const ChapterModel& cm) {
  if (!best_at_last_step(cm)) return;
  const std::size_t steps = checkpoint_steps(cm).second;
  nar.say(_f("its validation BLEU was best at the last of its {} steps: it may still have been improving when "
             "training stopped, so a longer run could score higher: the figures below are this model's, after "
             "{} steps.",
             steps, steps));
}

std::string bleu_vs_token_why(const BottleneckStudy& s) {
  // The buckets where BLEU is furthest above and furthest below token accuracy, as printed.
  const BucketMetrics *above = nullptr, *below = nullptr;
  for (const auto& b : s.eval.buckets) {
    const double d = as_printed(b.bleu) - as_printed(b.token_acc);
    if (d > 0 && (!above || d > as_printed(above->bleu) - as_printed(above->token_acc))) above = &b;
    if (d < 0 && (!below || d < as_printed(below->bleu) - as_printed(below->token_acc))) below = &b;
  }
  auto at = [](const BucketMetrics* b) {
    return _f("at {} words (BLEU {} vs tok {}%)", b->bucket.label(), format_score(b->bleu), format_score(b->token_acc));
  };
  const std::string effects = _("BLEU credits right words anywhere in the sentence, which lifts it, but BLEU-4 also "
                                "needs matching runs of 2 to 4 words, which lowers it; token accuracy credits a word "
                                "only at its own position");
  if (above && below)
    return _f("{}. Which wins varies here: BLEU is below token accuracy {} and above it {}.", effects, at(below),
              at(above));
  if (below) return _f("{}. Here BLEU is at or below token accuracy in every bucket, furthest {}.", effects, at(below));
  if (above) return _f("{}. Here BLEU is at or above token accuracy in every bucket, furthest {}.", effects, at(above));
  return _f("{}. Here the two agree in every bucket.", effects);
}

void report_positions(Narrator& nar, const BottleneckStudy& s) {
  const Mat& pa = s.position_acc;
  Labels head = {_("source length")};
  for (const auto& r : s.ranges) head.push_back(_f("pos {}", r.label()));
  Table t(head);
  for (std::size_t b = 0; b < pa.shape(0); ++b) {
    Labels row = {s.eval.buckets[b].bucket.label()};
    for (std::size_t k = 0; k < pa.shape(1); ++k) row.push_back(std::isnan(pa(b, k)) ? "" : format_score(pa(b, k)));
    t.add(row);
  }
  nar.table(t, /*as_result=*/true);
  nar.record("position_accuracy", pa);
  const std::string shortest = s.eval.buckets.front().bucket.label(), longest = s.eval.buckets.back().bucket.label();
  const std::string shared =
      s.shared_ranges == 0 ? "" : fmt::format("{}-{}", s.ranges.front().lo, s.ranges[s.shared_ranges - 1].hi);
  std::vector<std::string> losses;
  for (std::size_t k = 0; k < s.shared_losses.size(); ++k)
    losses.push_back(_f("positions {} lose {:.1f} points", s.ranges[k].label(), s.shared_losses[k]));
  nar.result(_f("positions {} (every bucket has them), from {}- to {}-word sentences: {} ({}); most lost at "
                "positions {}, {}% -> {}%", shared, shortest, longest, fmt::join(losses, _(", ")),
                sentence_for(s.shared_positions_lose.outcome, _("each a drop of at least 5 points, which this chapter counts as a loss"),
                             _("some gain"), _("one loses under 5 points")),
                s.ranges[s.worst_range].label(), format_score(s.worst_from), format_score(s.worst_to)));
  nar.say(_("accuracy is compared position by position: a word dropped or added (look for one in step 4) shifts every later "
            "word off its place and counts it wrong, so part of the later positions' loss is shifts, not "
            "forgetting."));
  // position_acc row 0 is the shortest bucket, column 0 positions 1-5: where the first words start from
  const std::string hold_best = _f("the first words hold best, though they too fall from {}% at {} words",
                                   format_score(s.position_acc(0, 0)), shortest);
  nar.result(_f("in {}-word sentences: positions {} {}% right, the best later range {}% — {}", longest,
                s.ranges.front().label(), format_score(s.first_long), format_score(s.best_other_long),
                sentence_for(s.first_words_hold_best.outcome, hold_best.c_str(),
                             _("a later range holds better than the first words"), _("a tie"))));
  nar.say(_("later positions exist only in longer sentences and are left out of the 'most lost' verdict above; "
            "read their columns down the table."));
}

std::vector<std::string> ch00_takeaway(const BottleneckStudy& s, std::size_t context_size) {
  const auto& first = s.eval.buckets.front();
  const auto& last = s.eval.buckets.back();
  return {
      _f("The model without attention (one fixed vector c = h_S, {} numbers) scores BLEU {} at {} words.",
         context_size, format_score(s.first_bleu), first.bucket.label()),
      s.collapses.holds() || s.collapses.outcome == Outcome::partly
          ? _f("Its BLEU falls as sentences grow: {} at {} words ({}), exact match {}% -> {}%; chapter 01 adds "
               "attention (with a two-direction encoder and a learned start) to narrow down whether the single "
               "vector is why.",
               format_score(s.last_bleu), last.bucket.label(), percent_lower(s.collapses), format_score(first.exact),
               format_score(last.exact))
          : _f("It does not collapse here: BLEU {} at {} words ({}).", format_score(s.last_bleu), last.bucket.label(),
               percent_lower(s.collapses)),
      _f("By target position: the first words {} ({}% -> {}% right from {} to {} words); the largest drop is at positions {} "
         "({}% -> {}%).",
         s.first_words_hold_best.holds() ? _("hold best") : _("do not hold best"),
         format_score(s.position_acc(0, 0)), format_score(s.first_long), first.bucket.label(), last.bucket.label(), s.ranges[s.worst_range].label(), format_score(s.worst_from), format_score(s.worst_to)),
  };
}

}  // namespace attn
