// Chapter 07 · Cross-attention — queries from one sequence, keys and values from another: a decoder
// reading its encoder, an image its caption; X = Y as self-attention, sources of any length, a padded
// source and its mask, an 8×8 image latent, a trained Transformer's cross-attention beside Bahdanau's.
//   build/bin/07_cross_attention [--export out]  the lesson (under 5 s); --export: .npy + manifest.json
// Export names: each report of attn/present/ch07_report.hpp lists what it records (the tiny example:
// Y X W_Q W_K W_V Q K V scores weights output); studies: attn/studies/cross_attention_study.hpp.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/present/ch07_report.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/studies/transformer_claims.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
CLI::Validator words_between(std::size_t lo, std::size_t hi) {
  return CLI::Validator([lo, hi](const std::string& s) {
    const Labels words = split_words(s);
    const auto n = words.size();
    if (std::find(words.begin(), words.end(), "<pad>") != words.end())
      return std::string(_("'<pad>' is the padding token step 7 appends (--pads), not a word"));
    return n >= lo && n <= hi ? std::string() : _f("needs {} to {} words, got {}", lo, hi, n);
  }, _f("{} to {} words", lo, hi));
}
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("07", /*default_seed=*/7, /*total_steps=*/10);
  std::string source = "the cat is sleeping", target = "le chat dort";
  std::size_t d_y = 8, d_x = 8, d_k = 4, pads = 2;
  std::string transformer_path, bahdanau_path;
  ch.app().add_option("--source", source, _("the sequence that is read: keys and values (2 to 12 words)"))
      ->capture_default_str()->check(words_between(2, 12));
  ch.app().add_option("--target", target, _("the sequence that asks: queries (1 to 12 words)"))
      ->capture_default_str()->check(words_between(1, 12));
  ch.app().add_option("--d-model", d_y, _("width d_y of the target's vectors (Y)"))->capture_default_str()
      ->check(CLI::Range(2, 64));
  ch.app().add_option("--d-source", d_x, _("width d_x of the source's vectors (X)"))
      ->capture_default_str()->check(CLI::Range(2, 64));
  ch.app().add_option("--d-k", d_k, _("query/key/value width"))->capture_default_str()->check(CLI::Range(1, 64));
  ch.app().add_option("--pads", pads, _("'<pad>' tokens step 7 appends to the source"))->capture_default_str()
      ->check(CLI::Range(1, 8));
  // Both files are only read: a wrong path is named before anything is printed (exit 2).
  ch.app().add_option("--transformer", transformer_path, _("chapter 08's model (default: the shipped one in data/ch08/)"))
      ->type_name("PATH")->check(existing_input_file());
  ch.app().add_option("--bahdanau", bahdanau_path, _("chapter 01's model (default: data/ch01/bahdanau.safetensors)"))
      ->type_name("PATH")->check(existing_input_file());
  ch.set_question(_("Question: how does a decoder read a sentence it did not write — and an image being generated read its "
                   "prompt?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels src = split_words(source), tgt = split_words(target);
    const std::size_t S = src.size(), T = tgt.size();
    const std::uint64_t seed = nar.options().seed;
    Rng rng(seed);
    // The trained models of steps 9 and 10, loaded before step 1: a file that is not a model stops
    // the run here, not after eight steps.
    const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
    const ChapterModel bm = chapter_model("01", "bahdanau", corpus, false, bahdanau_path, TrainConfig{});
    const bool shipped_transformer = transformer_path.empty();  // its idle-machine training time is known
    if (shipped_transformer) transformer_path = find_data_file("ch08/transformer_post.safetensors").value_or("");
    std::optional<Transformer> tm;
    Metadata trained_how;  // what the file records of its training
    if (!transformer_path.empty()) tm = load_transformer(transformer_path, nullptr, &trained_how);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step(_("Two sequences"), _("X ∈ ℝ^(S×d_x) is read,  Y ∈ ℝ^(T×d_y) asks"));
    const Mat X = word_vectors(src, d_x, seed), Y = word_vectors(tgt, d_y, seed);
    const std::string src_words = source_words(S), tgt_words = target_words(T);
    nar.show("X", X, src, {}, _f("(S×d_x) = ({}×{}), S = {} {}: the encoder's output, a row each", S, d_x, S, src_words));
    nar.show("Y", Y, tgt, {}, _f("(T×d_y) = ({}×{}), T = {} {}: the decoder's states, a row each", T, d_y, T, tgt_words));
    const ImageConditioningConfig image_widths;  // step 8's: the latent's d_y and the prompt's d_x
    nar.say(d_y == d_x ? _f("W_Q has d_y rows, W_K and W_V have d_x rows, so the two widths may differ (equal here: "
                            "d_y = d_x = {}; step 8's image uses {} and {})", d_y, image_widths.d_latent,
                            image_widths.d_text)
                       : _f("W_Q has d_y rows, W_K and W_V have d_x rows, so the two widths may differ (here d_y = "
                            "{}, d_x = {}; step 8's image uses {} and {})", d_y, d_x, image_widths.d_latent,
                            image_widths.d_text));
    nar.say(_("(toy vectors fixed by the seed; in a trained model they come out of the encoder and decoder)"));
    nar.code("attn/data/word_vectors.hpp: word_vectors");
    nar.why(_("self-attention mixed one sequence with itself; a translator mixes what it writes with what it reads."));

    nar.step(_("Queries from Y, keys and values from X"), "Q = Y·W_Q, K = X·W_K, V = X·W_V", "Vaswani et al. 2017, §3.2.3");
    const CrossAttentionWeights W = init_cross_attention(rng, d_y, d_x, d_k, d_k);
    nar.show("W_Q", W.w_q, {}, {}, _f("(d_y×d_k) = ({}×{}); W_K and W_V are (d_x×d_k) = ({}×{})", d_y, d_k, d_x, d_k));
    nar.record("W_K", W.w_k);
    nar.record("W_V", W.w_v);
    const CrossAttentionTrace tr = cross_attention(Y, X, W);
    nar.show("Q", tr.q, tgt, {}, _f("(T×d_k) = ({}×{}): what each target word is looking for", T, d_k));
    nar.show("K", tr.k, src, {}, _f("(S×d_k) = ({}×{}): what each source word offers", S, d_k));
    nar.show("V", tr.v, src, {}, _f("(S×d_v) = ({}×{}), d_v = d_k here: what each source word hands over", S, d_k));
    nar.code("attn/attention/cross_attention.hpp: init_cross_attention, cross_attention");
    nar.why(_("the only change from chapter 03: Q is computed from a different sequence than K and V."));

    nar.step(_("Score every target word against every source word"), "scores = Q·Kᵀ / √d_k  (T×S)",
             "Vaswani et al. 2017, eq. 1");
    nar.show("scores", tr.attn.scores, tgt, src, _f("rows: {} {}, columns: {} {}", T, tgt_words, S, src_words));
    nar.show("weights", tr.attn.weights, tgt, src, _("softmax of each row"));
    nar.heatmap("weights", tr.attn.weights, tgt, src, "", {0.0, 1.0});
    report_cross_row_sums(nar, check_row_sums(tr.attn.weights), T, S);
    nar.code("attn/attention/cross_attention.hpp: cross_attention; attn/studies/self_attention_study.hpp: check_row_sums");
    nar.why(_("row i is a distribution over the source: where target word i looks."));
    nar.say(_("(W_Q, W_K, W_V are random here, so the pattern means nothing yet; steps 9 and 10 show trained ones)"));

    nar.step(_("Mix the source's values"), "output = weights·V  (T×d_v)");
    nar.show("output", tr.attn.output, tgt, {}, _f("(T×d_v) = ({}×{}): one row per target word", T, d_k));
    report_reference(nar, check_against_reference(tr));
    nar.code("attn/studies/cross_attention_study.hpp: check_against_reference");
    nar.why(_("each target word receives a blend of the source; the output has the target's length."));

    nar.step(_("Self-attention is the case X = Y"), "SelfAttn(Y) = CrossAttn(Y, Y)");
    const SelfCaseCheck self = self_case_check(Y, d_x == d_y ? W : init_cross_attention(rng, d_y, d_y, d_k, d_k));
    report_self_case(nar, self, d_x != d_y);
    nar.code("attn/studies/cross_attention_study.hpp: self_case_check");
    nar.why(_("one function serves both; a Transformer decoder layer uses it twice: first on (Y, Y) with a causal "
              "mask, then on (Y, X) (Vaswani et al. 2017, §3.2.3)."));

    nar.step(_("A source of any length"), _("weights ∈ ℝ^(T×S): S is free"));
    const SourceLengthStudy lengths = source_length_study(Y, W, {2, 4, 8, 16, 32, 60}, d_x, seed);
    report_source_lengths(nar, lengths, tgt, d_k);
    nar.code("attn/studies/cross_attention_study.hpp: source_length_study; attn/data/corpus.hpp: toy_sentence");
    nar.why(_("no parameter has a dimension of size S, so one decoder reads 2 or 60 source words alike; only the "
              "attention weights' width and the cost (T·S scores) grow with the source."));

    nar.step(_("Padding: many sources, one length"), _("M_ij = 0 (a word) or −∞ ('<pad>')"));
    Labels padded_src = src;
    padded_src.resize(S + pads, "<pad>");
    const Mat Xp = word_vectors(padded_src, d_x, seed);
    const PaddingStudy padding = padding_study(Y, Xp, S, W);
    report_padding(nar, padding, Xp, padded_src, tgt);
    nar.code("attn/tensor/mask.hpp: padding_mask; attn/studies/cross_attention_study.hpp: padding_study");
    nar.why(_("a batch stacks sources of different lengths into one tensor, so the short ones are filled with '<pad>'; "
              "the mask gives those columns exactly zero weight, and exercise 07.2 builds it."));

    // ---------------------------------------------------------------- text conditions an image
    nar.step(_("Text steers an image"), "Q = Z·W_Q (64×d_k), K = E·W_K, V = E·W_V", "Rombach et al. 2022, §3.3");
    const ImageConditioningConfig icfg;
    const ImageStudy image = image_study(seed, icfg);
    report_image(nar, image, icfg, image_noise_sweep(seed, icfg));
    nar.code("attn/studies/cross_attention_study.hpp: image_study, image_noise_sweep; attn/studies/image_conditioning.hpp: "
             "image_conditioning_example");
    nar.why(_("each region asks the prompt its own question; the values it gets back (image_output, 64×d_v, in the "
              "--export files) are how the words change that region."));

    // ---------------------------------------------------------------- a trained model
    nar.step(_("A trained model's alignment: Bahdanau (chapter 01)"), _("α_ij, teacher-forced on the reference"));
    const SentencePair& ex = reordered_test_pair(corpus.test);
    const ModelAlignment bahdanau = bahdanau_alignment(bm.model, ex, corpus.source_vocab, corpus.target_vocab);
    report_bahdanau(nar, bahdanau, ex, diagonal_reading(ex), bm);
    nar.code("attn/studies/cross_attention_study.hpp: bahdanau_alignment, diagonal_reading, alignment_misses");
    nar.why(_("the target language puts an adjective after its noun and the verb at the end of its clause; every word "
              "such a move passes shifts by one place, and a row leaves the diagonal where the shifts do not cancel."));

    nar.step(_("A trained Transformer's cross-attention, per layer and head"), "softmax(Q_dec·K_encᵀ/√d_k)");
    std::optional<TransformerHeads> heads;
    if (tm) heads = transformer_heads(*tm, bm.model, ex, corpus, bahdanau, trained_how, bm.metadata);
    const double alone_s =
        shipped_transformer && trained_how.count("norm") ? retrained_alone_seconds(trained_how.at("norm")) : 0.0;
    heads ? report_transformer(nar, *heads, bahdanau, ex, transformer_path, trained_how, alone_s)
          : report_no_transformer(nar);
    nar.code("attn/studies/cross_attention_study.hpp: transformer_heads, layer_similarity");
    nar.why(_("every decoder layer has its own cross-attention, every head its own weights over the source."));

    nar.takeaway(ch07_takeaway(T, S, self, lengths, padding, image, bahdanau, heads ? &*heads : nullptr));
  });
}
