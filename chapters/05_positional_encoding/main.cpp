// Chapter 05 · Positional encodings — why self-attention needs positions (猫 吃 鱼 vs 鱼 吃 猫), then
// sinusoidal, learned, RoPE and ALiBi, each property checked numerically, and length extrapolation
// measured with a tiny model trained once per encoding (shipped checkpoints; --train redoes them).
//   build/bin/05_positional_encoding                the lesson (under 5 s)
//   build/bin/05_positional_encoding --export out   also writes every tensor as .npy + manifest.json
// Export names: X X_swapped output output_swapped sinusoidal_pe sinusoidal_shift pe_similarity
// learned_pe rope_cos rope_sin q k q_rot k_rot rope_bound alibi_slopes alibi_bias alibi_bias_head0
// extrapolation; manifest.json also holds "extrapolation_rows", "_columns" and "_data".
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "attn/data/word_vectors.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/present/ch05_report.hpp"
#include "attn/present/chapters.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/terminal.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("05", /*default_seed=*/5, /*total_steps=*/7);
  std::string sentence = "猫 吃 鱼";
  std::size_t d_model = 8, positions = 16, heads = 8;
  ch.app().add_option("--sentence", sentence, _("words to reverse and attend over (2 to 12 words; default 猫 吃 鱼)"))
      ->check([](const std::string& s) {
        auto n = split_words(s).size();
        return n >= 2 && n <= 12 ? std::string() : _f("needs 2 to 12 words, got {}", n);
      });
  ch.app().add_option("--d-model", d_model, _("embedding size (even)"))->capture_default_str()
      ->check(whole_number_of_parity(4, 64, /*even=*/true));
  ch.app().add_option("--positions", positions, _("length of the position tables shown"))->capture_default_str()->check(CLI::Range(12, 256));
  ch.app().add_option("--heads", heads, _("ALiBi heads"))->capture_default_str()->check(CLI::Range(1, 64));
  bool train = false;
  ExtrapolationConfig xcfg;
  CLI::Option* train_flag =
      ch.app().add_flag("--train", train, _("retrain the five extrapolation models and rewrite data/ch05/*.safetensors"));
  ch.app().add_option("--train-steps", xcfg.steps, _("Adam steps per encoding with --train"))->capture_default_str()
      ->check(CLI::Range(1, 100000))->needs(train_flag);  // alone it would change nothing
  const std::string default_sentence = sentence;
  ch.set_question(_("Question: self-attention cannot tell 猫 吃 鱼 (cat eats fish) from 鱼 吃 猫 (fish eats cat) — how do four "
                    "encodings give it a sense of order?"));
  ch.app().parse_complete_callback([&] {  // another sentence: the question names it
    if (sentence == default_sentence) return;
    const Labels w = split_words(sentence);
    ch.set_question(_f("Question: self-attention cannot tell \"{}\" from \"{}\", its words reversed — how do four "
                       "encodings give it a sense of order?", escape_control(fmt::format("{}", fmt::join(w, " ")), false),
                       escape_control(fmt::format("{}", fmt::join(w.rbegin(), w.rend(), " ")), false)));
  });

  return ch.run(argc, argv, [&](Narrator& nar) {
    // Step 7's five models, one set: checked now (all from one folder and one --train run, or with
    // --train every target), not after six steps of the lesson.
    CheckpointSet models(position_checkpoint_names(), train);
    const Labels words = split_words(sentence);
    const std::size_t n = words.size(), d = d_model;
    Rng rng(nar.options().seed);
    const SelfAttentionWeights W = init_self_attention(rng, d, d, d);

    // ---------------------------------------------------------------- why positions
    nar.step(_("Without positions, order is invisible"), _("Attn(Π·X) = Π·Attn(X)"));
    const Labels swapped(words.rbegin(), words.rend());
    std::vector<std::size_t> reverse(n);
    std::iota(reverse.rbegin(), reverse.rend(), 0);  // row i of the swapped sentence is row n−1−i
    const Mat X = word_vectors(words, d, nar.options().seed), Xs = word_vectors(swapped, d, nar.options().seed);
    nar.record("X", X);
    nar.record("X_swapped", Xs);
    const Mat O = positioned_self_attention(X, W, PositionEncoding::None);
    const Mat Os = positioned_self_attention(Xs, W, PositionEncoding::None);
    nar.show("output", O, words, {}, fmt::format("\"{}\"", sentence));
    nar.show("output_swapped", Os, swapped, {}, fmt::format("\"{}\"", fmt::join(swapped, " ")));
    const PermutationCheck order = check_permutation(O, Os, reverse);
    report_order_blind(nar, order);
    nar.code("attn/position/position_encoding.hpp: positioned_self_attention; attn/studies/lookup.hpp: permute_rows");
    nar.why(_f("each word's row depends on which words are present, never on where: the model sees a bag of words. "
               "This is permutation-EQUIVARIANT (the source article {} says 'invariant'; only a pooled summary is).",
               source_article()));

    nar.step(_("Each encoding breaks the symmetry — almost"), _("max |Attn(Π·X) − Π·Attn(X)|"));
    const Mat learned_demo = learned_position_init(positions, d, rng, 1.0f);  // an untrained table, unit scale to be visible
    const ReversalStudy reversal = reversal_study(X, Xs, W, learned_demo, 0.25f);
    report_reversal(nar, reversal);
    nar.code("attn/studies/position_study.hpp: reversal_study");
    explain_reversal(nar, reversal);

    // ---------------------------------------------------------------- sinusoidal
    nar.step("Sinusoidal", _("PE(pos, 2i) = sin(pos·ω_i), PE(pos, 2i+1) = cos(pos·ω_i), ω_i = 10000^(−2i/d)"),
             _("Vaswani et al. 2017, §3.5"));
    nar.say(_f("d = d_model = {} (--d-model): each position's vector has d numbers, d/2 = {} sin–cos pairs", d, d / 2));
    nar.heatmap("sinusoidal_pe", sinusoidal_table(positions, d), index_labels(positions), {},
                _("rows: positions, columns: dimensions (fast pairs on the left)"), {-1.0, 1.0});
    const long k = 3;
    nar.show("sinusoidal_shift", sinusoidal_shift(d, k), {}, {}, _f("M_{}: one 2×2 rotation per pair, angle {}·ω_i", k, k));
    const ShiftCheck shift = sinusoidal_shift_error(d, k, positions + 100);
    report_shift(nar, shift);
    report_similarity(nar, sinusoidal_similarity_check(d, positions - 1, 0, 7));
    nar.code("attn/position/sinusoidal.hpp: sinusoidal_table, sinusoidal_shift, sinusoidal_similarity; "
             "attn/studies/position_study.hpp: sinusoidal_similarity_check");
    nar.why(_("a fixed linear map turns any position into the one k further, which the paper hoped would let "
            "attention use relative offsets; the table itself is absolute."));

    // ---------------------------------------------------------------- learned
    nar.step(_("Learned positions"), _("y_t = x_t + P[t],  ∂ℓ/∂P[t] += ∂ℓ/∂y_t  (ℓ: the loss)"),
             _("Devlin et al. 2019 (BERT); Radford et al. 2019 (GPT-2)"));
    const Mat P = learned_position_init(positions, d, rng);
    nar.show("learned_pe", P, index_labels(positions), {}, _("N(0, 0.02²) at initialisation; training writes into each row it sees"));
    report_learned_limit(nar, P);
    nar.say(_f("correction: the source article {} says GPT uses RoPE; GPT-2 and GPT-3 use learned absolute positions "
               "like these (Radford et al. 2019; Brown et al. 2020). LLaMA and Qwen use RoPE (Touvron et al. 2023, "
               "\"LLaMA\"; Bai et al. 2023, \"Qwen Technical Report\").", source_article()));
    nar.code("attn/position/learned_position.hpp: learned_position_init, learned_position_forward");
    nar.why(_("each row is trained only by sequences that reach it; a position never seen in training has no row at all."));

    // ---------------------------------------------------------------- RoPE
    nar.step(_("RoPE: rotate q and k by their position"), "(R_m q)·(R_n k) = q·R_(n−m) k", _("Su et al. 2021, RoFormer eq. 16"));
    const RopeTables tab = rope_tables(positions, d);
    nar.record("rope_cos", tab.cos);
    nar.record("rope_sin", tab.sin);
    const SelfAttentionTrace plain = self_attention(X, W);
    const Mat q_rot = rope_rotate(plain.q, tab), k_rot = rope_rotate(plain.k, tab);
    nar.show("q", plain.q, words, {}, _("before rotation"));
    nar.show("q_rot", q_rot, words, {}, _("row t turned by t·θ_i in each pair (2i, 2i+1), θ_i = 10000^(−2i/d)"));
    nar.record("k", plain.k);
    nar.record("k_rot", k_rot);
    nar.say(_("θ_i = 10000^(−2i/d): the same frequencies as step 3's ω_i, used here as rotation angles per position"));
    report_rope_pair(nar, words, plain.q, q_rot);
    const RelativeCheck rope = rope_relative_error(plain.q, plain.k, {1, 10, 1000});
    report_rope_relative(nar, rope);
    nar.record("rope_bound", rope_distance_bound(d, positions - 1));
    report_rope_bound(nar, d, /*big_d=*/d < 64 ? 64 : 128, /*max_distance=*/256);  // a wider head to compare with
    nar.code("attn/position/rope.hpp: rope_tables, rope_rotate, rope_distance_bound");
    nar.why(_("rotations compose: R_mᵀR_n = R_(n−m), so absolute positions cancel in the score and relative ones remain."));

    // ---------------------------------------------------------------- ALiBi
    const AlibiSlopeShape slopes = alibi_slope_shape(heads);
    nar.step(_("ALiBi: a distance penalty per head"), alibi_formula(slopes), _("Press et al. 2021, §3"));
    show_alibi_bias(nar, slopes, positions);
    const ZeroSlopeCheck zero_slope = alibi_zero_slope_check(X, W);
    report_zero_slope(nar, zero_slope);
    nar.code("attn/position/alibi.hpp: alibi_slopes, alibi_bias");
    nar.why(_("no vectors are added; nearby keys simply score higher, with steep heads looking locally and flat ones far."));

    // ---------------------------------------------------------------- extrapolation, measured
    nar.step(_("Length extrapolation, measured"), _("train at L = 16, test at 16, 32, 64"), _("Press et al. 2021"));
    describe_recall_task(nar, xcfg);
    if (!train) nar.say(_("the five models were trained earlier with --train; loaded from data/ch05/<encoding>.safetensors"));
    report_extrapolation_seeds(nar, nar.options().seed, xcfg.seed, train);
    const ExtrapolationStudy x =
        extrapolation_study(xcfg, [&](PositionEncoding e) { return position_model(nar, e, models, train, xcfg); });
    if (train) {
      models.commit();  // the five together, only now that every one is trained and measured
      nar.say(_f("the five models written to {} together, as one set: each records run {}, and a later run "
                 "reads them only when all five agree", escape_control(models.folder(), false), models.run()));
    }
    report_extrapolation(nar, x);
    nar.code("attn/studies/extrapolation.hpp: make_recall_data, train_extrapolation, extrapolation_table_row, "
             "order_blind_vote; "
             "attn/studies/position_study.hpp: extrapolation_study");
    nar.why(_("a relative bias that only says 'nearer is better' means the same thing at any length; absolute "
            "positions past L were never seen in training, and a learned table has no row for them at all."));

    nar.takeaway(ch05_takeaway(order, shift, rope, zero_slope, x,
                               escape_control(fmt::format("{}", fmt::join(words, " ")), false),
                               escape_control(fmt::format("{}", fmt::join(swapped, " ")), false)));
  });
}
