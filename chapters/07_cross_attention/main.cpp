// Chapter 07 · Cross-attention — the queries come from one sequence, the keys and values from
// another: a decoder reading its encoder, an image reading its caption. A tiny example with real
// words (every tensor labelled), self-attention as the case X = Y, sources of any length, text
// conditioning an 8×8 image latent, then a trained Transformer's cross-attention beside Bahdanau's.
//   build/bin/07_cross_attention                 the lesson (under 5 s)
//   build/bin/07_cross_attention --export out    also writes every tensor as .npy + manifest.json
// Export names: Y X W_Q W_K W_V Q K V scores weights output (the tiny example); image_latent
// image_text image_W_Q image_W_K image_W_V image_weights image_output (the image); cross_weights
// (layers × heads × T × S) and bahdanau_weights (T × S) for the trained models' sentence.
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/attention/cross_attention.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/attention/alignment.hpp"
#include "attn/data/batching.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/models/transformer_decode.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/studies/image_conditioning.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
CLI::Validator words_between(std::size_t lo, std::size_t hi) {
  return CLI::Validator(
      [lo, hi](const std::string& s) {
        const auto n = split_words(s).size();
        return n >= lo && n <= hi ? std::string() : _f("needs {} to {} words, got {}", lo, hi, n);
      },
      _f("{} to {} words", lo, hi));
}
std::pair<double, double> row_sum_range(const Mat& w) {  // (min, max) of the row sums
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < w.shape(0); ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < w.shape(1); ++j) s += w(i, j);
    lo = std::min(lo, s), hi = std::max(hi, s);
  }
  return {lo, hi};
}

// A word that can stand between "the" and "cat" in the toy grammar is an adjective.
bool is_adjective(const std::string& w) {
  try {
    toy_translate({"the", w, "cat", "sleeps"});
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}
// The first test pair of 8 to 12 words with an adjective (which moves behind its noun) and a verb
// that moves at least two places to the end of its clause.
const SentencePair& reordered_test_pair(const std::vector<SentencePair>& test) {
  for (const auto& p : test) {
    if (p.src.size() < 8 || p.src.size() > 12) continue;
    bool adjective = false, verb_moved = false;
    for (const auto& w : p.src) adjective = adjective || is_adjective(w);
    for (std::size_t i = 0; i < p.alignment.size(); ++i) verb_moved = verb_moved || int(i) - p.alignment[i] >= 2;
    if (adjective && verb_moved) return p;
  }
  throw std::runtime_error(_("no test sentence of 8-12 words with an adjective and a moved verb"));
}
// Bahdanau's α for each reference target word, with the reference fed to the decoder (teacher
// forcing): (T, S), row i = where the model looks while writing target word i.
Mat bahdanau_weights(const Seq2Seq& m, const SentencePair& p, const Vocab& sv, const Vocab& tv) {
  const Batch b = make_batches({p}, sv, tv, 1).front();
  Seq2SeqTape tape;
  seq2seq_forward(tape, m, b);
  Mat w = Mat::from_shape({p.tgt.size(), p.src.size()});
  for (std::size_t i = 0; i < p.tgt.size(); ++i)
    for (std::size_t j = 0; j < p.src.size(); ++j) w(i, j) = tape.steps[i].alpha()(0, j);
  return w;
}
// A heatmap's grid alone: its first `rows` lines without the 6-column margin of an empty row label.
std::string grid_only(const std::string& heatmap, std::size_t rows) {
  std::string cells;
  for (std::size_t at = 0, r = 0; r < rows; ++r, at = heatmap.find('\n', at) + 1)
    cells += heatmap.substr(at + 6, heatmap.find('\n', at) - at - 6) + "\n";
  return cells;
}
HeatmapStyle one_char_cells() {
  HeatmapStyle st{0.0, 1.0};
  st.cell_width = 1;
  return st;
}
// The trained Transformer's cross-attention over the pair, teacher-forced: (layers, heads, T, S), row i
// being the step that writes target word i (the map's last row, the step writing <eos>, is dropped).
Tensor4 reference_cross_weights(const Transformer& m, const SentencePair& p, const Vocab& sv, const Vocab& tv) {
  const Tensor4 all = transformer_attention(m, sv.encode(p.src), tv.encode(p.tgt)).cross;
  Tensor4 w = Tensor4::from_shape({all.shape(0), all.shape(1), p.tgt.size(), p.src.size()});
  for (std::size_t l = 0; l < w.shape(0); ++l)
    for (std::size_t h = 0; h < w.shape(1); ++h)
      for (std::size_t i = 0; i < w.shape(2); ++i)
        for (std::size_t j = 0; j < w.shape(3); ++j) w(l, h, i, j) = all(l, h, i, j);
  return w;
}
Mat head_of(const Tensor4& w, std::size_t l, std::size_t h) {  // (L, H, T, S) -> (T, S)
  Mat m = Mat::from_shape({w.shape(2), w.shape(3)});
  for (std::size_t i = 0; i < w.shape(2); ++i)
    for (std::size_t j = 0; j < w.shape(3); ++j) m(i, j) = w(l, h, i, j);
  return m;
}
Labels numbers(std::size_t n) {  // "1", "2", …
  Labels out;
  for (std::size_t i = 1; i <= n; ++i) out.push_back(std::to_string(i));
  return out;
}
std::string numbered(const Labels& words) {  // "1 the  2 cat  …"
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += fmt::format("{}{} {}", i ? "  " : "", i + 1, words[i]);
  return out;
}
// The scale of a heatmap legend ("' ' < 0.20 ≤ … (≤ 1.00)"), without its label and masked-cell note.
std::string legend_scale(const std::string& legend) {
  const std::size_t from = legend.find("' '"), to = legend.find(')', legend.find("(≤ "));
  return from == std::string::npos || to == std::string::npos ? legend : legend.substr(from, to + 1 - from);
}
// Target words whose argmax misses the true source word: "lo (reads finds, not the)".
std::string misses(const std::vector<int>& argmax, const SentencePair& p) {
  std::string out;
  for (std::size_t i = 0; i < p.alignment.size() && i < argmax.size(); ++i)
    if (argmax[i] != p.alignment[i])
      out += (out.empty() ? "" : ", ") + _f("{} (reads '{}', not '{}')", p.tgt[i], p.src[std::size_t(argmax[i])],
                                            p.src[std::size_t(p.alignment[i])]);
  return out;
}
std::string percent(const AlignmentScore& a) {
  return fmt::format("{}/{} ({:.0f}%)", a.hits, a.total, 100.0 * a.share());
}
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("07", /*default_seed=*/7, /*total_steps=*/9);
  std::string source = "the cat is sleeping", target = "le chat dort";
  std::size_t d_model = 8, d_k = 4;
  std::string transformer_path, bahdanau_path;
  ch.app().add_option("--source", source, _("the sequence that is read: keys and values (2 to 12 words)"))
      ->capture_default_str()->check(words_between(2, 12));
  ch.app().add_option("--target", target, _("the sequence that asks: queries (1 to 12 words)"))
      ->capture_default_str()->check(words_between(1, 12));
  ch.app().add_option("--d-model", d_model, _("width of both sequences' vectors"))->capture_default_str()->check(CLI::Range(2, 64));
  ch.app().add_option("--d-k", d_k, _("query/key/value width"))->capture_default_str()->check(CLI::Range(1, 64));
  ch.app().add_option("--transformer", transformer_path, _("chapter 08's model (default: the shipped one in data/ch08/)"))
      ->type_name("PATH");
  ch.app().add_option("--bahdanau", bahdanau_path, _("chapter 01's model (default: data/ch01/bahdanau.safetensors)"))
      ->type_name("PATH");
  ch.set_question(_("Question: how does a decoder read a sentence it did not write — and a picture read its caption?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels src = split_words(source), tgt = split_words(target);
    const std::size_t S = src.size(), T = tgt.size();
    Rng rng(nar.options().seed);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step(_("Two sequences"), _("X ∈ ℝ^(S×d) is read,  Y ∈ ℝ^(T×d) asks"));
    const Mat X = word_vectors(src, d_model, nar.options().seed), Y = word_vectors(tgt, d_model, nar.options().seed);
    nar.show("X", X, src, {}, _f("(S×d) = ({}×{}): the encoder's output, one row per source word", S, d_model));
    nar.show("Y", Y, tgt, {}, _f("(T×d) = ({}×{}): the decoder's states, one row per target word", T, d_model));
    nar.say(_("(toy vectors fixed by the seed; in a trained model they come out of the encoder and decoder)"));
    nar.code("attn/data/word_vectors.hpp: word_vectors");
    nar.why(_("self-attention mixed one sequence with itself; a translator mixes what it writes with what it reads."));

    nar.step(_("Queries from Y, keys and values from X"), "Q = Y·W_Q, K = X·W_K, V = X·W_V", "Vaswani et al. 2017, §3.2.3");
    const CrossAttentionWeights W = init_cross_attention(rng, d_model, d_model, d_k, d_k);
    nar.show("W_Q", W.w_q, {}, {}, _f("(d×d_k) = ({}×{}); W_K and W_V have the same shape", d_model, d_k));
    nar.record("W_K", W.w_k);
    nar.record("W_V", W.w_v);
    const CrossAttentionTrace tr = cross_attention(Y, X, W);
    nar.show("Q", tr.q, tgt, {}, _f("(T×d_k) = ({}×{}): what each target word is looking for", T, d_k));
    nar.show("K", tr.k, src, {}, _f("(S×d_k) = ({}×{}): what each source word offers", S, d_k));
    nar.show("V", tr.v, src, {}, _f("(S×d_v) = ({}×{}): what each source word hands over", S, d_k));
    nar.code("attn/attention/cross_attention.hpp: init_cross_attention, cross_attention");
    nar.why(_("the only change from chapter 03: Q is computed from a different sequence than K and V."));

    nar.step(_("Score every target word against every source word"), "scores = Q·Kᵀ / √d_k  (T×S)",
             "Vaswani et al. 2017, eq. 1");
    nar.show("scores", tr.attn.scores, tgt, src, _f("rows: {} target words, columns: {} source words", T, S));
    nar.show("weights", tr.attn.weights, tgt, src, _("softmax of each row"));
    nar.heatmap("weights", tr.attn.weights, tgt, src, "", {0.0, 1.0});
    const auto [lo, hi] = row_sum_range(tr.attn.weights);
    nar.result(_f("weights are {}×{} (target × source); row sums: min {:.6f}, max {:.6f}", T, S, lo, hi));
    nar.code("attn/attention/cross_attention.hpp: cross_attention");
    nar.why(_("row i is a distribution over the source: where target word i looks."));
    nar.say(_("(W_Q, W_K, W_V are random here, so the pattern means nothing yet; steps 8 and 9 show trained ones)"));

    nar.step(_("Mix the source's values"), "output = weights·V  (T×d_v)");
    nar.show("output", tr.attn.output, tgt, {}, _f("(T×d_v) = ({}×{}): one row per target word", T, d_k));
    const Mat reference = xt::cast<float>(attention_reference(tr.q, tr.k, tr.v));
    nar.result(_f("max |output − reference| = {:.2e}  (reference: the same formula in double, plain loops)",
                  max_abs_diff(tr.attn.output, reference)));
    nar.code("attn/attention/cross_attention.hpp: cross_attention; attn/attention/attention.hpp: attention_reference");
    nar.why(_("each target word receives a blend of the source; the output has the target's length."));

    nar.step(_("Self-attention is the case X = Y"), "SelfAttn(Y) = CrossAttn(Y, Y)");
    const SelfAttentionTrace self = self_attention(Y, SelfAttentionWeights{W.w_q, W.w_k, W.w_v});
    const CrossAttentionTrace same = cross_attention(Y, Y, W);
    nar.say(_("cross_attention(Y, Y) against chapter 03's self_attention(Y) with the same W_Q, W_K, W_V:"));
    nar.result(_f("max |Δweights| = {:.1e}, max |Δoutput| = {:.1e}; both {}×{}",
                  max_abs_diff(same.attn.weights, self.attn.weights), max_abs_diff(same.attn.output, self.attn.output), T,
                  T));
    nar.code("attn/attention/self_attention.hpp: self_attention; attn/attention/cross_attention.hpp: cross_attention");
    nar.why(_("one function serves both; a Transformer decoder layer uses it twice: on Y, then on X."));

    nar.step(_("A source of any length"), _("weights ∈ ℝ^(T×S): S is free"));
    std::vector<double> largest;
    Table lengths({"S", _("source (first words)"), _("weights"), _("output"), _("row sums"), _("largest weight")});
    for (std::size_t s_len : {2u, 4u, 8u, 16u, 32u, 60u}) {
      const SentencePair p = toy_sentence(nar.options().seed, std::max<std::size_t>(s_len, 4));
      const Labels words(p.src.begin(), p.src.begin() + std::ptrdiff_t(s_len));
      const CrossAttentionTrace t = cross_attention(Y, word_vectors(words, d_model, nar.options().seed), W);
      const auto [rlo, rhi] = row_sum_range(t.attn.weights);
      const Labels first(words.begin(), words.begin() + std::ptrdiff_t(std::min<std::size_t>(3, s_len)));
      lengths.add({std::to_string(s_len), fmt::format("{}{}", fmt::join(first, " "), s_len > 3 ? " …" : ""),
                   fmt::format("{}×{}", t.attn.weights.shape(0), t.attn.weights.shape(1)),
                   fmt::format("{}×{}", t.attn.output.shape(0), t.attn.output.shape(1)),
                   fmt::format("{:.4f}-{:.4f}", rlo, rhi), fmt::format("{:.3f}", double(xt::amax(t.attn.weights)()))});
      largest.push_back(double(xt::amax(t.attn.weights)()));
    }
    nar.table(lengths, /*as_result=*/true);
    nar.result(_f("the same W_Q, W_K, W_V ({} numbers) read every source; the output stays {}×{}",
                  W.w_q.size() + W.w_k.size() + W.w_v.size(), T, d_k));
    nar.say(_f("largest weight: {:.3f} at S = 2, {:.3f} at S = 60 — a row's unit of weight is shared by more words",
               largest.front(), largest.back()));
    nar.code("attn/data/corpus.hpp: toy_sentence; attn/attention/cross_attention.hpp: cross_attention");
    nar.why(_("no weight has a dimension of size S, so one decoder reads 2 or 60 source words alike; only the "
              "weights' width and the cost (T·S scores) grow with the source."));

    // ---------------------------------------------------------------- text conditions an image
    nar.step(_("Text steers an image"), "Q = Z·W_Q (64×d_k), K = E·W_K, V = E·W_V", "Rombach et al. 2022, §3.3");
    const ImageConditioningConfig icfg;
    const ImageConditioning im = image_conditioning_example(nar.options().seed, icfg);
    const double others = double(im.words.size() - 1), clean_own = std::exp(icfg.gain) / (std::exp(icfg.gain) + others);
    const std::size_t n_pos = im.side * im.side;
    Labels pos;
    for (std::size_t p = 0; p < n_pos; ++p) pos.push_back(fmt::format("({},{})", p / im.side, p % im.side));
    nar.say(_("a latent is the small, compressed image a latent-diffusion model denoises; each of its grid positions "
              "is one query."));
    nar.say(_f("Z: {} latent positions (an {}×{} grid) ask; E: the prompt's {} text tokens answer. Built in:", n_pos,
               im.side, im.side, im.words.size()));
    nar.say(_("  · a scene painted on the grid (below, left); each word's region has a content vector, and each"));
    nar.say(_f("    position's latent is its region's vector plus N(0, {:.1f}²) noise;", icfg.noise));
    nar.say(_("  · the text tokens are toy word vectors (a stand-in for the text encoder); W_K, W_V random;"));
    nar.say(_f("  · W_Q solved so that a clean region scores {:.1f} on its own word, 0 on the others", icfg.gain));
    nar.say(_("    (the association a trained U-Net learns from captioned images)."));
    nar.say(_("Measured: which words the noisy grid reads."));
    nar.show("image_latent", im.latent, pos, {}, _f("({}×{}): queries' input, one row per grid position", n_pos,
                                                    im.latent.shape(1)));
    nar.show("image_text", im.text, im.words, {}, _f("({}×{}): the prompt \"{}\"", im.words.size(), im.text.shape(1),
                                                     fmt::join(im.words, ", ")));
    nar.record("image_W_Q", im.w.w_q);
    nar.record("image_W_K", im.w.w_k);
    nar.record("image_W_V", im.w.w_v);
    nar.show("image_weights", im.trace.attn.weights, pos, im.words,
             _f("({}×{}): row p says which words position p reads", n_pos, im.words.size()));
    nar.record("image_output", im.trace.attn.output);
    if (!nar.quiet()) {
      std::vector<std::string> maps, titles;
      std::string legend;
      auto letters = [&](const std::vector<int>& cells) {
        std::string s;
        for (const auto& row : grid_letters(cells, im.words, im.side)) s += row + "\n";
        return s;
      };
      maps.push_back(letters(im.layout)), titles.push_back(_("painted"));
      maps.push_back(letters(im.reads)), titles.push_back(_("reads most"));
      for (std::size_t w = 0; w < im.words.size(); ++w) {
        Mat per_word = Mat::from_shape({im.side, im.side});
        for (std::size_t p = 0; p < n_pos; ++p) per_word(p / im.side, p % im.side) = im.trace.attn.weights(p, w);
        const std::string map = format_heatmap(per_word, Labels(im.side, ""), {}, one_char_cells());
        legend = legend_scale(map);
        maps.push_back(grid_only(map, im.side));
        titles.push_back(im.words[w]);
      }
      std::fputs(side_by_side(maps, titles).c_str(), stdout);
      nar.say(_("letters: the first letter of the word painted at, and read most by, each position;"));
      nar.say(_("maps: the weight each position puts on one word,"));
      nar.say("      " + legend);
    }
    nar.result(_f("{} of {} positions read most from the word painted there", im.hits, n_pos));
    nar.result(_f("mean weight on that word {:.3f} (a clean region's: {:.3f})", im.mean_own_weight, clean_own));
    nar.code("attn/studies/image_conditioning.hpp: image_conditioning_example, grid_letters");
    nar.why(_("each region asks the prompt its own question; the values it gets back (image_output) are how the "
              "words change that region. Stable Diffusion v1 reads 77 CLIP tokens of 768 numbers."));

    // ---------------------------------------------------------------- a trained model
    nar.step(_("A trained model's alignment: Bahdanau (chapter 01)"), _("α_ij, teacher-forced on the reference"));
    const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
    const SentencePair& ex = reordered_test_pair(corpus.test);
    const ChapterModel bm = chapter_model("01", "bahdanau", corpus, false, bahdanau_path, TrainConfig{});
    const Mat bw = bahdanau_weights(bm.model, ex, corpus.source_vocab, corpus.target_vocab);
    const std::vector<int> b_align = argmax_alignment(bw);
    nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
    nar.say(_("teacher-forced: the decoder is fed the reference's words, not its own guesses, so row i is the step "
              "that writes reference word i."));
    std::vector<int> one_based;
    for (int j : ex.alignment) one_based.push_back(j + 1);
    nar.say(_f("true alignment (target word i translates source word j, words counted from 1): {}",
               fmt::join(one_based, " ")));
    nar.heatmap("bahdanau_weights", bw, ex.tgt, ex.src, _("rows: target words, columns: source words"), {0.0, 1.0});
    nar.say(_f("model: {}", bm.path));
    const AlignmentScore b_score = alignment_hits(b_align, ex.alignment);
    nar.result(_f("Bahdanau's argmax agrees with the true alignment at {} target words", percent(b_score)));
    if (b_score.hits < b_score.total) nar.result(_f("missed: {}", misses(b_align, ex)));
    nar.code("attn/models/seq2seq.hpp: seq2seq_forward; attn/attention/alignment.hpp: argmax_alignment, alignment_hits");
    nar.why(_("adjectives move behind their nouns and verbs to the end: the bright cells leave the diagonal."));

    nar.step(_("A trained Transformer's cross-attention, per layer and head"), "softmax(Q_dec·K_encᵀ/√d_head)");
    const std::optional<std::string> shipped = find_data_file("ch08/transformer_post.safetensors");
    std::string transformer_summary = _("Chapter 08's trained Transformer is not shipped yet.");
    if (transformer_path.empty() && !shipped) {
      nar.result(_("chapter 08's trained Transformer is not shipped yet (no data/ch08/transformer_post.safetensors):"));
      nar.result(_("its heatmaps and their agreement with Bahdanau and the true alignment are not shown."));
    } else {
      const std::string tpath = transformer_path.empty() ? *shipped : transformer_path;
      const Transformer tm = load_transformer(tpath);
      const Tensor4 cw = reference_cross_weights(tm, ex, corpus.source_vocab, corpus.target_vocab);
      nar.record("cross_weights", cw);
      const std::size_t L = cw.shape(0), H = cw.shape(1);
      nar.say(_f("model: {}", tpath));
      nar.say(_f("{} decoder layers × {} heads; the same sentence, teacher-forced (as for Bahdanau);", L, H));
      nar.say(_("layers and heads are numbered from 0, as in chapter 04's tensors: L0H0 is layer 0, head 0."));
      nar.say(_f("cross_weights ({}×{}×{}×{}); one map per head, rows: target words, columns: source words",
                 L, H, cw.shape(2), cw.shape(3)));
      Table agree({_("layer"), _("head"), _("argmax = Bahdanau's"), _("argmax = true alignment")});
      std::size_t best_l = 0, best_h = 0, best_hits = 0;
      std::vector<std::string> perfect;  // per layer: "layer l: n of H"
      std::string legend;
      for (std::size_t l = 0; l < L; ++l) {
        std::vector<std::string> maps, titles;
        std::string labels;
        for (const auto& w : ex.tgt) labels += w + "\n";
        maps.push_back(labels), titles.push_back("");
        Mat mean = xt::zeros<float>({ex.tgt.size(), ex.src.size()});
        std::size_t all_words = 0;
        for (std::size_t h = 0; h < H; ++h) {
          const Mat m = head_of(cw, l, h);
          mean += m / float(H);
          const std::string map = format_heatmap(m, Labels(m.shape(0), ""), {}, one_char_cells());
          legend = legend_scale(map);
          maps.push_back(grid_only(map, m.shape(0))), titles.push_back(fmt::format("L{}H{}", l, h));
          const std::vector<int> a = argmax_alignment(m);
          const AlignmentScore vt = alignment_hits(a, ex.alignment);
          agree.add({std::to_string(l), std::to_string(h), percent(alignment_hits(a, b_align)), percent(vt)});
          if (vt.hits > best_hits) best_hits = vt.hits, best_l = l, best_h = h;
          all_words += vt.hits == vt.total;
        }
        perfect.push_back(_f("layer {}: {} of {}", l, all_words, H));
        const std::vector<int> am = argmax_alignment(mean);
        agree.add({std::to_string(l), _("mean"), percent(alignment_hits(am, b_align)),
                   percent(alignment_hits(am, ex.alignment))});
        if (!nar.quiet()) std::fputs(side_by_side(maps, titles).c_str(), stdout);
      }
      nar.say("      " + legend);
      agree.add({"Bahdanau", "", "", percent(b_score)});
      nar.table(agree, /*as_result=*/true);
      nar.say(_("(for each target word: is the source word with the largest weight the same?"));
      nar.say(_(" 'mean': the layer's heads averaged)"));
      const Mat best = head_of(cw, best_l, best_h);
      if (!nar.quiet()) {
        const HeatmapStyle st{0.0, 1.0};
        auto no_legend = [](const std::string& map) { return map.substr(0, map.rfind("\n    ") + 1); };
        std::fputs(side_by_side({no_legend(format_heatmap(bw, ex.tgt, numbers(ex.src.size()), st)),
                                 no_legend(format_heatmap(best, Labels(ex.tgt.size(), ""), numbers(ex.src.size()), st))},
                                {_("Bahdanau (chapter 01)"), _f("Transformer layer {} head {}", best_l, best_h)})
                       .c_str(),
                   stdout);
        nar.say(_f("columns: {}", numbered(ex.src)));
      }
      transformer_summary = _f("Best Transformer head (layer {}, head {}): {}/{} words aligned as the corpus says; "
                               "Bahdanau: {}/{}.", best_l, best_h, best_hits, ex.tgt.size(), b_score.hits, ex.tgt.size());
      nar.result(transformer_summary);
      nar.result(_f("heads whose argmax matches the true alignment at every word: {}", fmt::join(perfect, ", ")));
    }
    nar.code("attn/models/transformer_decode.hpp: transformer_attention");
    nar.why(_("every decoder layer has its own cross-attention, every head its own weights over the source."));

    nar.takeaway({
        _f("Q from one sequence, K and V from another: weights T×S ({}×{} here); X = Y is self-attention.", T, S),
        _("No weight depends on the source length: the same W_Q, W_K, W_V read 2 or 60 source words."),
        _f("{} image positions read a {}-word prompt: {} of {} read the word painted there.", n_pos, im.words.size(),
           im.hits, n_pos),
        transformer_summary,
    });
  });
}
