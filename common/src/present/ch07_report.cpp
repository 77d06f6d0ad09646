// Chapter 07's reports (see attn/present/ch07_report.hpp).
#include "attn/present/ch07_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "attn/data/data_files.hpp"
#include "attn/present/number_format.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/studies/transformer_claims.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {

// A heatmap's grid alone: its first `rows` lines without the 6-column margin of an empty row label.
std::string grid_only(const std::string& heatmap, std::size_t rows) {
  std::string cells;
  for (std::size_t at = 0, r = 0; r < rows; ++r, at = heatmap.find('\n', at) + 1)
    cells += heatmap.substr(at + 6, heatmap.find('\n', at) - at - 6) + "\n";
  return cells;
}
// One character per cell, no labels: for maps drawn side by side.
std::string small_map(const Mat& m) {
  HeatmapStyle st{0.0, 1.0};
  st.cell_width = 1;
  return grid_only(format_heatmap(m, Labels(m.shape(0), ""), {}, st), m.shape(0));
}
// The scale of a heatmap legend ("' ' < 0.20 ≤ … (≤ 1.00)"), without its label and masked-cell note.
std::string shading_scale() {
  HeatmapStyle st{0.0, 1.0};
  const std::string legend = heatmap_legend(Mat(xt::zeros<float>({1, 1})), st);
  const std::size_t from = legend.find("' '"), to = legend.find(')', legend.find("(≤ "));
  return from == std::string::npos || to == std::string::npos ? legend : legend.substr(from, to + 1 - from);
}
Labels numbers(std::size_t n) {  // "1", "2", …
  Labels out;
  for (std::size_t i = 1; i <= n; ++i) out.push_back(std::to_string(i));
  return out;
}
// "1 the  2 cat  …"; a no-break space (U+00A0) inside each entry, so that a wrapped line breaks
// between entries, never between a number and its word.
std::string numbered(const Labels& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += fmt::format("{}{}\u00a0{}", i ? "  " : "", i + 1, words[i]);
  return out;
}
std::string shape_text(const Shape& s) { return s.size() == 2 ? fmt::format("{}×{}", s[0], s[1]) : "?"; }
// "12345678" over a one-character-per-cell map: column j's number (its last digit past 9).
std::string ruler(std::size_t n) {
  std::string r;
  for (std::size_t j = 1; j <= n; ++j) r += char('0' + j % 10);
  return r + "\n";
}
// "all 1.0000" when min and max print alike, else "0.9999 to 1.0000".
std::string range_text(double lo, double hi) {
  const std::string a = fmt::format("{:.4f}", lo), b = fmt::format("{:.4f}", hi);
  return a == b ? _f("all {}", a) : _f("{} to {}", a, b);
}
// A checkpoint's text as a number; NaN when it is not one ("?", "", "12x").
double number_or_nan(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    return used == text.size() && std::isfinite(v) ? v : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}
// Every (layer, head) of a (layers, heads, T, S) tensor as the --html page's layers.
std::vector<Tensor3> layers_of(const Tensor4& w) {
  std::vector<Tensor3> out;
  for (std::size_t l = 0; l < w.shape(0); ++l) out.push_back(Tensor3(xt::view(w, l)));
  return out;
}

}  // namespace

std::string shown_model_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path full = fs::absolute(path, ec).lexically_normal();
  const fs::path here = fs::current_path(ec);
  const fs::path rel = ec ? fs::path() : full.lexically_relative(here);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  for (const DataPlace& p : data_places()) {
    const fs::path dir = fs::path(p.dir).lexically_normal();
    const fs::path inside = full.lexically_relative(dir);
    if (inside.empty() || *inside.begin() == "..") continue;
    const std::string where = p.why == "source tree"           ? _("the source tree this program was built from")
                              : p.why == "next to the program" ? _("the data installed next to the program")
                              : p.why == "install prefix"      ? _("the install prefix")
                                                               : p.why;
    return _f("{} (from {}; ATTN_DATA_DIR=DIR reads another copy)", full.string(), where);
  }
  return full.string();
}

std::string format_share(const AlignmentScore& a) {
  return fmt::format("{}/{} ({:.1f}%)", a.hits, a.total, 100.0 * a.share());
}

void report_cross_row_sums(Narrator& nar, const RowSumCheck& c, std::size_t t, std::size_t s) {
  nar.result(_f("weights are {}×{} (target × source); row sums: min {:.6f}, max {:.6f}: {}", t, s, c.min_sum,
                c.max_sum,
                c.sums_to_one.holds() ? _("every row is a distribution over the source")
                                      : _("a row is off 1 by more than float rounding")));
}

void report_reference(Narrator& nar, const ReferenceCheck& c) {
  nar.result(_f("max |output − reference| = {:.2e}  (reference: the same formula in double, plain loops): {}",
                c.max_diff, c.matches.holds() ? _("the same to float rounding") : _("more than float rounding")));
}

void report_self_case(Narrator& nar, const SelfCaseCheck& c, bool own_weights) {
  if (own_weights) nar.say(_("(d_x ≠ d_y: W_K and W_V do not fit Y, so this step draws square ones of its own)"));
  nar.say(own_weights ? _("cross_attention(Y, Y) against chapter 03's self_attention(Y) with this step's own W_Q, W_K, "
                          "W_V:")
                       : _("cross_attention(Y, Y) against chapter 03's self_attention(Y) with the same W_Q, W_K, W_V:"));
  nar.result(_f("max |Δweights| = {:.1e} (weights {}×{}), max |Δoutput| = {:.1e} (output {}×{}): {}", c.weights_diff,
                c.n, c.n, c.output_diff, c.n, c.d_v, c.same.holds() ? _("the same computation") : _("they differ by more than float rounding")));
}

void report_source_lengths(Narrator& nar, const SourceLengthStudy& s, const Labels& target, std::size_t d_v) {
  const std::size_t t = target.size();
  Table lengths({"S", _("source (first words)"), _("weights"), _("output"), _("row sums"), _("largest weight"),
                 _("uniform 1/S")});
  std::size_t s_max = 0;
  for (const auto& r : s.rows) s_max = std::max(s_max, r.s);
  Mat table = xt::zeros<float>({s.rows.size(), std::size_t(4)});
  Tensor3 weights = xt::zeros<float>({s.rows.size(), t, s_max});
  nlohmann::json sources = nlohmann::json::array();
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const SourceLengthRow& r = s.rows[i];
    const Labels first(r.words.begin(), r.words.begin() + std::ptrdiff_t(std::min<std::size_t>(3, r.words.size())));
    lengths.add({std::to_string(r.s), fmt::format("{}{}", fmt::join(first, " "), r.words.size() > 3 ? " …" : ""),
                 shape_text(shape_of(r.weights)), shape_text(r.output_shape),
                 range_text(r.sums.min_sum, r.sums.max_sum), fmt::format("{:.3f}", r.largest),
                 fmt::format("{:.3f}", 1.0 / double(r.s))});
    const double vals[] = {double(r.s), r.sums.min_sum, r.sums.max_sum, r.largest};
    for (std::size_t c = 0; c < 4; ++c) table(i, c) = float(vals[c]);
    xt::view(weights, i, xt::all(), xt::range(0, r.weights.shape(1))) = r.weights;
    sources.push_back(r.words);
  }
  nar.table(lengths, /*as_result=*/true);
  nar.record("length_table", table);
  nar.record("length_weights", weights);
  for (const auto& r : s.rows)  // the longest source's words label the padded width
    if (r.s == s_max) nar.record_tokens("length_weights", target, r.words);
  nar.manifest_field("length_sources", sources.dump());
  nar.say(_f("each source is the first S words of one {}-word sentence, so a longer one extends the shorter one.",
             s_max));
  nar.say(_("uniform 1/S: the weight of a row that spreads evenly over all S words; the largest weight's distance "
            "above it says how focused a row is"));
  nar.result(_f("the same W_Q, W_K, W_V ({} numbers) read every source; the output stays {}×{} at every S: {}",
                s.parameters, t, d_v, outcome_word(s.one_output_shape.outcome)));
  if (s.rows.size() < 2) return;
  const SourceLengthRow &first = s.rows.front(), &last = s.rows.back();
  nar.say(!s.weight_spreads.holds()
              ? _f("largest weight: {:.3f} at S = {}, {:.3f} at S = {} — not smaller on the longer source here",
                   first.largest, first.s, last.largest, last.s)
          : s.falls_each_step.holds()
              ? _f("largest weight: {:.3f} at S = {}, {:.3f} at S = {}, smaller at every longer source — a row's "
                   "unit of weight is shared by more words", first.largest, first.s, last.largest, last.s)
              : _f("largest weight: {:.3f} at S = {}, {:.3f} at S = {} — a row's unit of weight is shared by more "
                   "words; it does not fall at every step ({:.3f} → {:.3f} at S = {}): a new word can score above "
                   "all the earlier ones and take a larger share", first.largest, first.s, last.largest, last.s,
                   s.rows[s.first_rise - 1].largest, s.rows[s.first_rise].largest, s.rows[s.first_rise].s));
}

void report_padding(Narrator& nar, const PaddingStudy& p, const Mat& x_padded, const Labels& source,
                    const Labels& target) {
  nar.record("padding_X", x_padded);
  nar.say(_f("the source, {} words, padded to S = {} with '<pad>' (a batch of sources shares one length):", p.valid,
             p.padded));
  nar.say(_("'<pad>' is a token like any other here: word_vectors gives it a vector of its own, the same at every "
            "padded position; the −∞ is how Vaswani et al. 2017, §3.2.3 hide future positions, here it hides "
            "padding"));
  // The mask drawn cell by cell: '█' where the query may read the key, '·' where it is padding.
  std::size_t label_w = 0;
  for (const auto& w : target) label_w = std::max(label_w, display_width(w));
  std::string picture = fmt::format("  {:>{}} ", "", label_w);
  for (std::size_t j = 0; j < p.padded; ++j) picture += fmt::format(" {:<2}", j + 1);
  picture += "\n";
  for (std::size_t i = 0; i < target.size(); ++i) {
    picture += "  " + std::string(label_w - display_width(target[i]), ' ') + target[i] + " ";
    for (std::size_t j = 0; j < p.padded; ++j) picture += std::isinf(p.mask(i, j)) ? " · " : " █ ";
    picture += "\n";
  }
  nar.block(fmt::format("  padding_mask ({}×{})\n", target.size(), p.padded) + picture);
  nar.record("padding_mask", p.mask);
  nar.say(_f("columns: {}", numbered(source)));
  nar.say(_("legend: '█' visible (mask 0: a real word), '·' masked (mask −∞: padding, weight exactly 0)"));
  nar.record("padding_weights", p.masked.attn.weights);
  nar.heatmap("padding_weights", p.masked.attn.weights + p.mask, target, source,
              _("softmax(scores + mask); '·': masked"), {0.0, 1.0});
  nar.record_tokens("padding_weights", target, source);
  nar.record("padding_output", p.masked.attn.output);
  nar.record("unpadded_output", p.unpadded_output);
  nar.record("unmasked_weights", p.unmasked.attn.weights);
  nar.record("unmasked_output", p.unmasked.attn.output);
  nar.heatmap("unmasked_weights", p.unmasked.attn.weights, target, source,
              _f("without the mask: '<pad>' takes up to {:.1f}% of a row",
                 100.0 * p.unmasked_pad_share), {0.0, 1.0});
  nar.record_tokens("unmasked_weights", target, source);
  std::vector<std::string> shares;  // a row's pad cells can each be faint while together they are large
  for (std::size_t i = 0; i < target.size() && i < p.unmasked_row_pad_share.size(); ++i)
    shares.push_back(fmt::format("{} {:.1f}%", target[i], 100.0 * p.unmasked_row_pad_share[i]));
  nar.result(_f("without the mask, each row's weight on all the '<pad>' columns together: {}", fmt::join(shares, _(", "))));
  nar.result(_f("with the mask: largest weight on a '<pad>' {:.1e} ({}); output against attention over the {} "
                "real words alone: max |Δ| = {:.1e} ({})", p.masked_pad_weight, outcome_word(p.pads_ignored.outcome),
                p.valid, p.masked_vs_unpadded, outcome_word(p.same_as_unpadded.outcome)));
  nar.result(p.unmasked_leaks.holds()
                 ? _f("without it: up to {:.1f}% of a row's weight lands on '<pad>', and max |Δoutput| against "
                      "the unpadded source = {:.2f}: the padding would change what the decoder reads",
                      100.0 * p.unmasked_pad_share, p.unmasked_vs_unpadded)
                 : _f("without it: {:.1f}% of a row's weight on '<pad>', output moved by {:.1e} — within float "
                      "rounding here", 100.0 * p.unmasked_pad_share, p.unmasked_vs_unpadded));
}

std::string source_words(std::size_t n) { return n == 1 ? _("source word") : _("source words"); }
std::string target_words(std::size_t n) { return n == 1 ? _("target word") : _("target words"); }

void report_image(Narrator& nar, const ImageStudy& s, const ImageConditioningConfig& cfg,
                  const std::vector<ImageStudy>& noisier) {
  const std::vector<float>& noises = cfg.noise_sweep;
  const ImageConditioning& im = s.im;
  const std::size_t n_pos = im.side * im.side;
  Labels pos;
  for (std::size_t p = 0; p < n_pos; ++p) pos.push_back(fmt::format("({},{})", p / im.side, p % im.side));
  nar.say(_("a latent is the small, compressed image a latent-diffusion model denoises; each of its grid positions "
            "is one query."));
  nar.say(_f("Z: {} latent positions (an {}×{} grid) ask; E: the prompt's {} text tokens answer. Built in:", n_pos,
             im.side, im.side, im.words.size()));
  nar.say(_("  · a scene painted on the grid (below, left); each word's region has a content vector, and each"));
  nar.say(_f("    position's latent is its region's vector plus Gaussian noise of standard deviation {:.1f};",
             cfg.noise));
  nar.say(_("  · the text tokens are toy word vectors (a stand-in for the text encoder); W_K, W_V random;"));
  nar.say(_f("  · W_Q solved so that a clean region scores {:.1f} on its own word, 0 on the others", cfg.gain));
  nar.say(_("    (an idealisation built by hand, not learned: this step trains nothing)."));
  nar.say(_f("widths differ: a latent position has d_y = {} numbers, a text token d_x = {}; W_Q is {}×{}, W_K {}×{}, "
             "W_V {}×{}: d_k = {} and d_v = {} in this step.", im.latent.shape(1), im.text.shape(1),
             im.w.w_q.shape(0), im.w.w_q.shape(1), im.w.w_k.shape(0), im.w.w_k.shape(1), im.w.w_v.shape(0),
             im.w.w_v.shape(1), im.w.w_q.shape(1), im.w.w_v.shape(1)));
  nar.say(_("Measured: which words the noisy grid reads."));
  nar.show("image_latent", im.latent, pos, {},
           _f("(positions×d_y) = ({}×{}): queries' input, one row per grid position", n_pos, im.latent.shape(1)));
  const RegionSignal& sig = s.signal;
  if (sig.positions > 0 && sig.word < im.words.size())
    nar.say(_f("look at column {}: the region vector of '{}' has {:.3f} there, its largest entry, and the {} "
               "positions painted '{}' average {:.3f} in it — the region showing through noise of σ = {:.1f}", sig.channel,
               im.words[sig.word], sig.region, sig.positions, im.words[sig.word], sig.mean, cfg.noise));
  nar.show("image_text", im.text, im.words, {},
           _f("(tokens×d_x) = ({}×{}): the prompt \"{}\"", im.words.size(), im.text.shape(1),
              fmt::join(im.words, ", ")));
  nar.record("image_W_Q", im.w.w_q);
  nar.record("image_W_K", im.w.w_k);
  nar.record("image_W_V", im.w.w_v);
  nar.show("image_weights", im.trace.attn.weights, pos, im.words,
           _f("(positions×tokens) = ({}×{}): row p says which words position p reads", n_pos, im.words.size()));
  {  // the --html page draws it too: one map, every grid position a query
    Tensor3 one = Tensor3::from_shape({1, n_pos, im.words.size()});
    std::copy(im.trace.attn.weights.begin(), im.trace.attn.weights.end(), one.begin());
    nar.attention_view({_("image_weights: which words each grid position reads"), pos, im.words, {one}, false});
  }
  nar.record("image_output", im.trace.attn.output);
  Vec layout = xt::zeros<float>({im.layout.size()});
  for (std::size_t p = 0; p < im.layout.size(); ++p) layout(p) = float(im.layout[p]);
  nar.record("image_layout", layout);
  nar.manifest_field("image_config", nlohmann::json{{"words", im.words}, {"gain", cfg.gain}, {"noise", cfg.noise},
                                                    {"side", im.side}}.dump());
  auto letters = [&](const std::vector<int>& cells) {
    std::string out;
    for (const auto& row : grid_letters(cells, im.words, im.side)) out += row + "\n";
    return out;
  };
  std::vector<std::string> maps = {letters(im.layout), letters(im.reads)}, titles = {_("painted"), _("reads most")};
  for (std::size_t w = 0; w < im.words.size(); ++w) {
    Mat per_word = Mat::from_shape({im.side, im.side});
    for (std::size_t p = 0; p < n_pos; ++p) per_word(p / im.side, p % im.side) = im.trace.attn.weights(p, w);
    maps.push_back(small_map(per_word));
    titles.push_back(im.words[w]);
  }
  nar.block(side_by_side(maps, titles));
  nar.say(_("letters: the first letter of the word painted at, and read most by, each position;"));
  nar.say(_("maps: the weight each position puts on one word,"));
  nar.say("      " + shading_scale());
  nar.result(_f("{} of {} positions read most from the word painted there (this course's test: at least {:.0f}%): {}",
                im.hits,
                n_pos, 100.0 * kImageReadsBound, outcome_word(s.reads_painted.outcome)));
  nar.result(_f("mean weight on that word {:.3f} (a clean region's: e^{:.1f} / (e^{:.1f} + {}) = {:.3f})",
                im.mean_own_weight, cfg.gain, cfg.gain, im.words.size() - 1, s.clean_own_weight));
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < noisier.size() && i < noises.size(); ++i)
    rows.push_back(_f("σ = {:.1f}: {} of {} ({})", noises[i], noisier[i].im.hits, n_pos,
                      outcome_word(noisier[i].reads_painted.outcome)));
  // What a region gets back: its output row beside the value row of the word painted there, for the
  // first position painted with the prompt's first word and the first painted with its last.
  Table back({_("row"), "0", "1", "2", "3"});
  const std::size_t dv = im.trace.v.shape(1);
  if (dv >= 4 && !im.words.empty()) {
    for (const std::size_t w : {std::size_t(0), im.words.size() - 1}) {
      const auto at = std::find(im.layout.begin(), im.layout.end(), int(w));
      if (at == im.layout.end()) continue;
      const std::size_t p = std::size_t(at - im.layout.begin());
      auto cells = [&](const std::string& name, const Mat& m, std::size_t r) {
        std::vector<std::string> row = {name};
        for (std::size_t c = 0; c < 4; ++c) row.push_back(fmt::format("{:.3f}", m(r, c)));
        return row;
      };
      back.add(cells(_f("V['{}']", im.words[w]), im.trace.v, w));
      back.add(cells(_f("image_output {}, {:.3f} on '{}'", pos[p], im.trace.attn.weights(p, w), im.words[w]),
                     im.trace.attn.output, p));
    }
    nar.say(dv > 4 ? _f("what a position gets back (the first 4 of d_v = {} columns): its image_output row, Σ_w "
                        "weight_w·V[w], under the V row of the word painted there, with its weight on that word", dv)
                   : _("what a position gets back: its image_output row, Σ_w weight_w·V[w], under the V row of the "
                       "word painted there, with its weight on that word"));
    nar.table(back, /*as_result=*/true);
  }
  if (!rows.empty())
    nar.result(_f("W_Q's margin was built in, so the test above can only fail through the noise; the same grid with "
                  "more noise (σ: the noise's standard deviation, {:.1f} above): {}; chance, a word picked at random "
                  "among {}: {:.1f} of {} on average", cfg.noise, fmt::join(rows, _("; ")), im.words.size(),
                  double(n_pos) / double(im.words.size()), n_pos));
}

std::string word_class_name(ToyWordClass c) {
  switch (c) {
    case ToyWordClass::determiner: return _("determiner");
    case ToyWordClass::adjective: return _("adjective");
    case ToyWordClass::noun: return _("noun");
    case ToyWordClass::verb: return _("verb");
    case ToyWordClass::adverb: return _("adverb");
    case ToyWordClass::connective: return _("connective");
    case ToyWordClass::unknown: break;
  }
  return "?";
}

void report_diagonal(Narrator& nar, const DiagonalReading& d, const SentencePair& p) {
  std::vector<std::string> off, kept;
  for (const DiagonalWord& w : d.off)
    off.push_back(_f("'{}' ({}, row {} translates column {})", p.tgt[w.target], word_class_name(w.word_class),
                     w.target + 1, w.source + 1));
  for (const DiagonalWord& w : d.kept)
    kept.push_back(_f("'{}' ({}; words moved ahead of it: {}, behind it: {})", p.tgt[w.target], word_class_name(w.word_class),
                      w.passed_ahead, w.passed_behind));
  if (off.empty())
    nar.result(_("off the diagonal: no target word; this pair keeps the source's order"));
  else
    nar.result(_f("off the diagonal (row i translates a word that is not column i): {}", fmt::join(off, _(", "))));
  if (!kept.empty())
    nar.result(_f("on the diagonal although words pass them (as many ahead as behind, so they keep their place): {}",
                  fmt::join(kept, _(", "))));
}

void report_bahdanau(Narrator& nar, const ModelAlignment& a, const SentencePair& p, const DiagonalReading& d,
                     const ChapterModel& model) {
  nar.say(_("α_ij (chapter 01): the weight target word i puts on source word j; row i, column j of "
            "bahdanau_weights below"));
  nar.say(_f("source:    {}", fmt::join(p.src, " ")));
  nar.say(_f("reference: {}", fmt::join(p.tgt, " ")));
  nar.say(_("(the course's toy target language, attn/data/corpus.hpp: a dictionary, adjectives after their noun, the "
            "verb at the end of its clause; each target word translates exactly one source word, so the true "
            "alignment is known)"));
  nar.say(_("teacher-forced: the decoder is fed the reference's words, not its own guesses, so row i is the step "
            "that writes reference word i."));
  std::vector<int> one_based;
  for (int j : p.alignment) one_based.push_back(j + 1);
  nar.say(_f("true alignment (target word i translates source word j, words counted from 1): {}",
             fmt::join(one_based, " ")));
  nar.heatmap("bahdanau_weights", a.weights, p.tgt, p.src, _("rows: target words, columns: source words"), {0.0, 1.0});
  report_diagonal(nar, d, p);
  nar.record_tokens("bahdanau_weights", p.tgt, p.src);
  nar.manifest_field("alignment_pair",
                     nlohmann::json{{"source", p.src}, {"target", p.tgt}, {"alignment", p.alignment}}.dump());
  nar.say(_("BLEU (Papineni et al. 2002): the geometric mean of a model's 1- to 4-word precisions against the "
            "reference translations, times a penalty for output shorter than the reference, 0 to 100; chapter 00, "
            "step 5 defines it term by term"));
  nar.say(describe_model(model));  // what its file records of its training
  nar.result(_f("Bahdanau's argmax agrees with the true alignment at {} target words (this course's test: most, at "
                "least {:.0f}%): {}", format_share(a.score), 100.0 * kAlignmentBound,
                outcome_word(a.follows_truth.outcome)));
  nar.result(_f("of the target words whose source word stands elsewhere (off the diagonal): {}",
                format_share(a.off_diagonal)));
  for (const AlignmentMiss& m : a.misses) {
    const std::string& read = p.src[std::size_t(m.read)];
    const std::string& truth = p.src[std::size_t(m.truth)];
    nar.result(_f("missed: '{}' reads '{}' ({:.2f}), not '{}' ({:.2f})", p.tgt[m.target], read, m.weight_read, truth,
                  m.weight_truth));
    if (m.neighbour && m.truth_unread)
      nar.say(_f("  the map: no row's largest weight is on '{}', and '{}' stands next to it. Bahdanau's encoder is "
                 "bidirectional: the annotation h_j of '{}' has read the words on both sides of it, '{}' among "
                 "them (Bahdanau et al. 2014, §3.2). A possible reason, not measured here: the row may reach '{}' "
                 "through its neighbour's annotation.", truth, read, read, truth, truth));
    else if (m.neighbour)
      nar.say(_f("  the map: '{}' stands next to '{}'; each annotation h_j of the bidirectional encoder also "
                 "carries its neighbours (Bahdanau et al. 2014, §3.2).", read, truth));
    const int prev = m.target > 0 ? p.alignment[m.target - 1] : kNoSource;
    if (prev >= 0 && m.read == prev + 1 && m.read_written_at > int(m.target))
      nar.say(_f("  '{}' is also the source word right after '{}', which the previous row translates: the row goes "
                 "on in the source's order, although the target language writes '{}' later, at row {} ('{}').",
                 read, p.src[std::size_t(prev)], read, m.read_written_at + 1, p.tgt[std::size_t(m.read_written_at)]));
  }
}

void report_transformer(Narrator& nar, const TransformerHeads& t, const ModelAlignment& bahdanau,
                        const SentencePair& p, const std::string& model, const Metadata& metadata,
                        double alone_s) {
  const Tensor4& cw = t.weights;
  nar.record("cross_weights", cw);
  nar.record_tokens("cross_weights", p.tgt, p.src);
  nar.attention_view({_("cross_weights: the trained Transformer's cross-attention, every layer and head"), p.tgt, p.src,
                      layers_of(cw), false});
  const std::size_t L = cw.shape(0), H = cw.shape(1);
  const auto md = [&](const char* key) {  // a checkpoint's text, made safe to print; "?" when absent
    const auto it = metadata.find(key);
    return it == metadata.end() ? std::string("?") : escape_control(it->second, false);
  };
  const std::string norm = md("norm");
  nar.say(_("LayerNorm (LN): each row rescaled to mean 0 and variance 1, then scaled and shifted by learned weights "
            "(chapter 08). Post-Norm: LN(x + Sublayer(x)), after the residual add; Pre-Norm: x + Sublayer(LN(x)), "
            "inside the residual branch (Sublayer: the attention or the feed-forward network)"));
  nar.say(_f("model: chapter 08's {} Transformer (d_model {}, {} encoder and {} decoder layers), loaded from {}",
             norm == "post" ? _("Post-Norm") : norm == "pre" ? _("Pre-Norm") : norm, md("d_model"),
             md("enc_layers"), md("dec_layers"), shown_model_path(model)));
  if (metadata.count("steps") == 0)
    nar.say(_("its file records no training run (no steps, seed or validation BLEU)"));
  else
    nar.say(_f("how it was trained, as its file records (08_transformer --train writes this): seed {}, {} steps of "
               "batch {} in {} s on the machine that trained it, kept at step {} (validation BLEU {})", md("seed"),
               md("steps"), md("batch"), md("train_seconds"), md("best_step"), md("valid_bleu")));
  const double recorded_s = number_or_nan(md("train_seconds"));
  const Verdict waited = judge_recorded_waited(alone_s > 0.0 ? recorded_s / alone_s : NAN);
  if (waited.holds())
    nar.say(_f("(mostly waiting on a loaded machine: the same training retrained alone on the idle machine took "
               "{:.1f} s, recorded / alone = {:.1f}×; chapter 08, step 9)", alone_s, waited.measured));
  else if (waited.outcome == Outcome::fails)
    nar.say(_f("(the same training retrained alone on the idle machine took {:.1f} s, recorded / alone = {:.1f}×: "
               "the recorded time is about the work; chapter 08, step 9)", alone_s, waited.measured));
  nar.say(_("training times come from the machines that trained each model, not from this run: step 9's and this "
            "one are not comparable"));
  nar.say(_f("{} decoder layers × {} heads; the same sentence, teacher-forced (as for Bahdanau);", L, H));
  const double d_model = number_or_nan(md("d_model"));
  if (std::isfinite(d_model) && H > 0)
    nar.say(_f("Q_dec: the decoder's states times each head's W_Q; K_enc, V_enc: the encoder's output times its W_K, "
               "W_V; d_k = d_model / heads = {:g} / {} = {:g} per head", d_model, H, d_model / double(H)));
  nar.say(_("layers and heads are numbered from 0, as in chapter 04's tensors: L0H0 is layer 0, head 0; the source "
            "words over the maps are counted from 1, as in step 9's true alignment."));
  nar.say(_f("cross_weights ({}×{}×{}×{}); one map per head, rows: target words, columns: source words", L, H,
             cw.shape(2), cw.shape(3)));
  std::string labels = "\n";  // the first line faces the maps' column rulers
  for (const auto& w : p.tgt) labels += w + "\n";
  for (std::size_t l = 0; l < L; ++l) {
    std::vector<std::string> maps = {labels}, titles = {""};
    for (std::size_t h = 0; h < H; ++h) {
      maps.push_back(ruler(p.src.size()) + small_map(head_map(cw, l, h)));
      titles.push_back(fmt::format("L{}H{}", l, h));
    }
    nar.block(side_by_side(maps, titles));
  }
  nar.say("      " + shading_scale());
  nar.say(_f("columns (the digits over each map): {}", numbered(p.src)));
  Table agree({_("layer"), _("head"), _("argmax = Bahdanau's"), _("argmax = true alignment")});
  for (const HeadAgreement& r : t.rows)
    agree.add({std::to_string(r.layer), r.mean ? _("mean") : std::to_string(r.head), format_share(r.with_bahdanau),
               format_share(r.with_truth)});
  agree.add({"Bahdanau", "", "", format_share(bahdanau.score)});
  nar.table(agree, /*as_result=*/true);
  nar.say(_("(for each target word: is the source word with the largest weight the same?"));
  nar.say(_(" 'mean': the layer's heads averaged)"));
  nar.say(_f("how alike a layer's heads are: the mean total variation ½Σ|p − p'| between two heads' rows, over "
             "every pair of heads (0: the same weights, 1: no overlap; redundant: at most {:.2f}, this course's "
             "cut-off):",
             kRedundantHeadsTvd));
  for (const LayerSimilarity& s : t.similarity) {
    if (s.redundant.holds())
      nar.result(nar.quiet()
                     ? _f("layer {}: mean {:.3f}, largest pair {:.3f} — redundant: its heads read the same words "
                          "with nearly the same weights", s.layer, s.mean_tvd, s.max_tvd)
                     : _f("layer {}: mean {:.3f}, largest pair {:.3f} — redundant: its heads read the same words "
                          "with nearly the same weights, so the maps above look alike", s.layer, s.mean_tvd,
                          s.max_tvd));
    else if (s.redundant.outcome == Outcome::fails)
      nar.result(_f("layer {}: mean {:.3f}, largest pair {:.3f} — distinct: its heads spread their weight "
                    "differently", s.layer, s.mean_tvd, s.max_tvd));
    else
      nar.result(_f("layer {}: one head, nothing to compare", s.layer));
  }
  const Mat best = head_map(cw, t.best_layer, t.best_head);
  HeatmapStyle st{0.0, 1.0};
  st.legend = false;
  nar.block(side_by_side({format_heatmap(bahdanau.weights, p.tgt, numbers(p.src.size()), st),
                          format_heatmap(best, Labels(p.tgt.size(), ""), numbers(p.src.size()), st)},
                         {_("Bahdanau (chapter 01)"), _f("Transformer layer {} head {}", t.best_layer, t.best_head)}));
  nar.say(_f("columns: {}", numbered(p.src)));
  std::vector<std::string> perfect;
  for (std::size_t l = 0; l < t.perfect.size(); ++l) perfect.push_back(_f("layer {}: {} of {}", l, t.perfect[l], H));
  std::vector<std::string> tied;
  for (const auto& [l, h] : t.best_heads) tied.push_back(fmt::format("L{}H{}", l, h));
  if (t.best_heads.size() > 1)
    nar.result(nar.quiet()
                   ? _f("on this one sentence, the best of {} heads (picked after the fact) is a tie: {} heads align "
                        "{} words as the corpus says ({}); Bahdanau's one map: {}.", cw.shape(0) * H,
                        t.best_heads.size(), format_share(t.best), fmt::join(tied, _(", ")), format_share(bahdanau.score))
                   : _f("on this one sentence, the best of {} heads (picked after the fact) is a tie: {} heads align "
                        "{} words as the corpus says ({}; the map above is {}, the first); Bahdanau's one map: {}.",
                        cw.shape(0) * H, t.best_heads.size(), format_share(t.best), fmt::join(tied, _(", ")),
                        tied.front(), format_share(bahdanau.score)));
  else
    nar.result(_f("on this one sentence, the best of {} heads (layer {}, head {}, picked after the fact): {} words "
                  "aligned as the corpus says; Bahdanau's one map: {}.", cw.shape(0) * H, t.best_layer, t.best_head,
                  format_share(t.best), format_share(bahdanau.score)));
  nar.result(_f("heads whose argmax matches the true alignment at every word: {}", fmt::join(perfect, _(", "))));
  report_corpus_alignment(nar, t.many, t.bleu);
}

std::string alignment_and_bleu_sentence(const CorpusAlignment& c, const AlignmentAndBleu& b) {
  if (c.transformer_better.outcome != Outcome::holds && c.transformer_better.outcome != Outcome::fails) return {};
  const bool transformer = c.transformer_better.holds();
  const std::string more = transformer ? _("the Transformer") : _("Bahdanau");
  if (b.same_order.holds())
    return _f("{} aligns more words and its file also records the higher (or equal) validation BLEU", more);
  if (b.same_order.outcome != Outcome::fails) return {};
  const RecordedBleu& r = transformer ? b.transformer : b.bahdanau;
  if (b.at_last_step.holds())
    return _f("here the model that aligns more, {}, has the lower validation BLEU; but its best step was its last "
              "({} of {}), so it may still have been improving: this one pair cannot tell alignment from training "
              "budget — the share asks only where each row's largest attention weight falls, BLEU scores the words "
              "the whole model writes", more, r.step, r.steps);
  return _f("here the model that aligns more, {}, has the lower validation BLEU (its best step, {} of {}, came "
            "before the end of its run): in this one pair, aligning more did not mean translating better — the "
            "share asks only where each row's largest attention weight falls, BLEU scores the words the whole "
            "model writes", more, r.step, r.steps);
}

namespace {
// "95.89 (step 1500 of 1500)": a recorded validation BLEU and the step its run kept.
std::string kept_bleu(const RecordedBleu& r) {
  const std::string bleu = std::isfinite(r.bleu) ? fmt::format("{:.2f}", r.bleu) : std::string("?");
  return r.step == 0 ? _f("{} (the step it was kept at not recorded)", bleu)
                     : _f("{} (step {} of {})", bleu, r.step, r.steps);
}
}  // namespace

void report_corpus_alignment(Narrator& nar, const CorpusAlignment& c, const AlignmentAndBleu& bleu) {
  if (c.sentences == 0) return;
  nar.result(_f("over {} test sentences of {} to {} words ({} target words), teacher-forced: Bahdanau {}; the "
                "Transformer's last layer (layer {}), its heads averaged: {}; {}", c.sentences, c.min_words,
                c.max_words, c.bahdanau.total, format_share(c.bahdanau), c.layer, format_share(c.last_layer_mean),
                sentence_for(c.transformer_better.outcome, _("the Transformer aligns more words"),
                             _("Bahdanau aligns more words"),
                             _("the same within noise (two standard errors of the difference)"))));
  nar.say(_f("(its best single head over these sentences: layer {}, head {}, {})", c.best_layer, c.best_head,
             format_share(c.heads[c.best_layer][c.best_head])));
  nar.result(_f("parameters: the Transformer {}, Bahdanau {}; validation BLEU of the step each run kept, its best on "
                "the validation set, as their files record it: {} and {}",
                format_count(c.transformer_params), format_count(c.bahdanau_params), kept_bleu(bleu.transformer),
                kept_bleu(bleu.bahdanau)));
  nar.say(_("(both BLEUs: greedy translations of the toy corpus's validation split, the same sentences for both "
            "models, scored by their training runs; the alignment shares above are measured in this run on test "
            "sentences)"));
  const std::string both = alignment_and_bleu_sentence(c, bleu);
  if (!both.empty()) nar.result(both);
  nar.say(_("one trained model each, of different sizes and training budgets (chapters 01 and 08): this compares "
            "these two models, not the two kinds of attention"));
}

void report_no_transformer(Narrator& nar) {
  nar.result(_("chapter 08's trained Transformer is not shipped yet (no data/ch08/transformer_post.safetensors):"));
  nar.result(_("its heatmaps and their agreement with Bahdanau and the true alignment are not shown."));
}

std::vector<std::string> ch07_takeaway(std::size_t t, std::size_t s, const SelfCaseCheck& self,
                                       const SourceLengthStudy& lengths, const PaddingStudy& padding,
                                       const ImageStudy& image, const ModelAlignment& bahdanau,
                                       const TransformerHeads* transformer) {
  std::vector<std::string> out;
  out.push_back(self.same.holds()
                    ? _f("Q from one sequence, K and V from another: weights T×S ({}×{} here); X = Y is "
                         "self-attention.", t, s)
                    : _f("Q from one sequence, K and V from another: weights T×S ({}×{} here); X = Y did not "
                         "reproduce self-attention in this run.", t, s));
  if (!lengths.rows.empty())
    out.push_back(lengths.one_output_shape.holds()
                      ? _f("No parameter depends on the source length: the same W_Q, W_K, W_V read {} to {} source "
                           "words.",
                           lengths.rows.front().s, lengths.rows.back().s)
                      : _("The output's shape changed with the source length in this run."));
  out.push_back(padding.pads_ignored.holds() && padding.same_as_unpadded.holds()
                    ? _("A padding mask (−∞ on '<pad>') makes a padded source read exactly like the unpadded one.")
                    : _("The padding mask did not make the padded source read like the unpadded one in this run."));
  out.push_back(_f("{} image positions read a {}-word prompt through a W_Q solved by hand: {} of {} noisy positions "
                   "read the word painted there.",
                   image.im.side * image.im.side, image.im.words.size(), image.im.hits, image.im.side * image.im.side));
  if (transformer != nullptr && transformer->many.sentences > 0) {
    const CorpusAlignment& c = transformer->many;
    out.push_back(_f("Over {} test sentences, the Transformer's last-layer heads averaged align {} words as the corpus "
                     "says, Bahdanau {}: {} (one trained model each: {} and {} parameters).", c.sentences,
                     format_share(c.last_layer_mean), format_share(c.bahdanau),
                     sentence_for(c.transformer_better.outcome, _("the Transformer aligns more"),
                                  _("Bahdanau aligns more"), _("the same within noise")),
                     format_count(c.transformer_params), format_count(c.bahdanau_params)));
    const std::string both = alignment_and_bleu_sentence(c, transformer->bleu);
    if (!both.empty())
      out.push_back(_f("Validation BLEU at each run's best validation step, as their files record it: Transformer "
                       "{}, Bahdanau {}; {}.", kept_bleu(transformer->bleu.transformer),
                       kept_bleu(transformer->bleu.bahdanau), both));
  } else if (transformer != nullptr) {
    out.push_back(_f("On this sentence, the best Transformer head (layer {}, head {}) aligns {} words, Bahdanau {}.",
                     transformer->best_layer, transformer->best_head, format_share(transformer->best),
                     format_share(bahdanau.score)));
  }
  else
    out.push_back(_f("Bahdanau's alignment: {} words as the corpus says.", format_share(bahdanau.score)));
  return out;
}

}  // namespace attn
