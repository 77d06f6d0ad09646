// Chapter 05 · Positional encodings — why self-attention needs positions (猫 吃 鱼 vs 鱼 吃 猫), then
// sinusoidal, learned, RoPE and ALiBi, each property checked numerically, and length extrapolation
// measured with a tiny model trained once per encoding (shipped checkpoints; --train redoes them).
//   build/bin/05_positional_encoding                the lesson (under 5 s)
//   build/bin/05_positional_encoding --export out   also writes every tensor as .npy + manifest.json
// Export names: X X_swapped output output_swapped sinusoidal_pe sinusoidal_shift pe_similarity
// learned_pe rope_cos rope_sin q k q_rot k_rot rope_bound alibi_slopes alibi_bias alibi_bias_head1.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>

#include "attn/position/alibi.hpp"
#include "attn/present/cli.hpp"
#include "attn/data/data_files.hpp"
#include "attn/studies/extrapolation.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/position/learned_position.hpp"
#include "attn/studies/lookup.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/position/position_encoding.hpp"
#include "attn/position/rope.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
// How position enters the model, one line per encoding (the table of step 2).
const char* how_position_enters(PositionEncoding e) {
  switch (e) {
    case PositionEncoding::None: return "—";
    case PositionEncoding::Sinusoidal: return _("X + PE (fixed table)");
    case PositionEncoding::Learned: return _("X + P[pos] (trained table)");
    case PositionEncoding::Rope: return _("rotate Q, K by pos·θ");
    case PositionEncoding::Alibi: return _("scores − m·|i − j|");
  }
  return "?";
}
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("05", /*default_seed=*/5, /*total_steps=*/7);
  std::string sentence = "猫 吃 鱼";
  std::size_t d_model = 8, positions = 16, heads = 8;
  ch.app().add_option("--sentence", sentence, _("words to reverse and attend over (2 to 12 words)"))->capture_default_str()
      ->check([](const std::string& s) {
        auto n = split_words(s).size();
        return n >= 2 && n <= 12 ? std::string() : _f("needs 2 to 12 words, got {}", n);
      });
  ch.app().add_option("--d-model", d_model, _("embedding size (even)"))->capture_default_str()
      ->check(CLI::Range(4, 64) & CLI::Validator([](std::string& s) {
        // Only judges numbers; anything else is CLI::Range's to reject (never throws: exit 2).
        std::size_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && end == s.data() + s.size() && v % 2 != 0 ? _("must be even") : "";
      }, "EVEN"));
  ch.app().add_option("--positions", positions, _("length of the position tables shown"))->capture_default_str()->check(CLI::Range(12, 256));
  ch.app().add_option("--heads", heads, _("ALiBi heads"))->capture_default_str()->check(CLI::Range(1, 64));
  bool train = false;
  ExtrapolationConfig xcfg;
  ch.app().add_flag("--train", train, "retrain the five extrapolation models and rewrite data/ch05/*.safetensors");
  ch.app().add_option("--train-steps", xcfg.steps, _("Adam steps per encoding with --train"))->capture_default_str()->check(CLI::Range(1, 100000));
  ch.set_question(_("Question: self-attention cannot tell 猫 吃 鱼 from 鱼 吃 猫 — how do four encodings give it a sense of order?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels words = split_words(sentence);
    const std::size_t T = words.size(), d = d_model;
    Rng rng(nar.options().seed);
    const SelfAttentionWeights W = init_self_attention(rng, d, d, d);

    // ---------------------------------------------------------------- why positions
    nar.step(_("Without positions, order is invisible"), _("Attn(P·X) = P·Attn(X)"));
    Labels swapped(words.rbegin(), words.rend());
    std::vector<std::size_t> reverse(T);
    std::iota(reverse.rbegin(), reverse.rend(), 0);  // row i of the swapped sentence is row T−1−i
    const Mat X = word_vectors(words, d, nar.options().seed), Xs = word_vectors(swapped, d, nar.options().seed);
    nar.record("X", X);
    nar.record("X_swapped", Xs);
    const Mat O = positioned_self_attention(X, W, PositionEncoding::None);
    const Mat Os = positioned_self_attention(Xs, W, PositionEncoding::None);
    nar.show("output", O, words, {}, fmt::format("\"{}\"", sentence));
    nar.show("output_swapped", Os, swapped, {}, fmt::format("\"{}\"", fmt::join(swapped, " ")));
    nar.result(_f("max |output_swapped − reversed(output)| = {:.1e}: the same set of rows, only reordered",
                           max_abs_diff(Os, permute_rows(O, reverse))));
    nar.code("attn/position/position_encoding.hpp: positioned_self_attention; attn/studies/lookup.hpp: permute_rows");
    nar.why(_("each word's row depends on which words are present, never on where: the model sees a bag of words. "
            "This is permutation-EQUIVARIANT (an article says 'invariant'; only a pooled summary is)."));

    nar.step(_("Each encoding breaks the symmetry — almost"), _("max |Attn(P·X) − P·Attn(X)|"));
    const Mat learned_demo = learned_position_init(positions, d, rng, 1.0f);  // an untrained table, unit scale to be visible
    Table sym({_("encoding"), _("how position enters"), _("max |Δ|, reversed order")});
    auto reversal_gap = [&](PositionEncoding e, const Mat& mask) {
      const Mat a = positioned_self_attention(X, W, e, learned_demo, 0.25f, mask);
      const Mat b = positioned_self_attention(Xs, W, e, learned_demo, 0.25f, mask);
      return max_abs_diff(b, permute_rows(a, reverse));
    };
    for (PositionEncoding e : all_position_encodings())
      sym.add({position_encoding_name(e), how_position_enters(e), fmt::format("{:.3e}", reversal_gap(e, {}))});
    const Mat causal = causal_mask(T);
    sym.add({_("none + causal mask"), _("word t sees words 0 … t"), fmt::format("{:.3e}", reversal_gap(PositionEncoding::None, causal))});
    sym.add({_("alibi + causal mask"), _("the paper's (decoder) form"), fmt::format("{:.3e}", reversal_gap(PositionEncoding::Alibi, causal))});
    nar.table(sym, /*as_result=*/true);
    nar.code("attn/position/position_encoding.hpp: positioned_self_attention");
    nar.why(_("sinusoidal, learned and RoPE give 猫-first and 猫-last different rows. Symmetric ALiBi does not: reading a "
            "sentence backwards keeps every distance |i − j|, so it cannot tell a sentence from its reverse (other "
            "orders it does tell apart); ALiBi is used with a causal mask, and the mask alone already breaks the symmetry. "
            "(learned: a random table here; ALiBi: one head, slope 1/4)"));

    // ---------------------------------------------------------------- sinusoidal
    nar.step("Sinusoidal", _("PE(pos, 2i) = sin(pos·ω_i), PE(pos, 2i+1) = cos(pos·ω_i), ω_i = 10000^(−2i/d)"),
             _("Vaswani et al. 2017, §3.5"));
    const Mat pe = sinusoidal_table(positions, d);
    Labels pos_labels;
    for (std::size_t p = 0; p < positions; ++p) pos_labels.push_back(std::to_string(p));
    nar.heatmap("sinusoidal_pe", pe, pos_labels, {}, _("rows: positions, columns: dimensions (fast pairs on the left)"), {-1.0, 1.0});
    const long k = 3;
    const Mat Mk = sinusoidal_shift(d, k);
    nar.show("sinusoidal_shift", Mk, {}, {}, _f("M_{}: one 2×2 rotation per pair, angle {}·ω_i", k, k));
    const Mat big = sinusoidal_table(positions + 100, d);
    double worst = 0.0;
    for (std::size_t p = 0; p < positions + 100 - std::size_t(k); ++p)
      for (std::size_t r = 0; r < d; ++r) {
        double s = 0.0;
        for (std::size_t c = 0; c < d; ++c) s += double(Mk(r, c)) * big(p, c);
        worst = std::max(worst, std::abs(s - big(p + std::size_t(k), r)));
      }
    nar.result(_f("PE(pos + {}) = M_{}·PE(pos) for every pos in 0 … {}: max error {:.1e} — M_k does not depend on pos",
                           k, k, positions + 96, worst));
    const Vec sim = sinusoidal_similarity(d, positions - 1);
    nar.show("pe_similarity", sim, {}, _("PE(pos)·PE(pos + k) for k = 0, 1, …: a function of k only"));
    nar.code("attn/position/sinusoidal.hpp: sinusoidal_table, sinusoidal_shift, sinusoidal_similarity");
    nar.why(_("a fixed linear map turns any position into the one k further, which the paper hoped would let "
            "attention use relative offsets; the table itself is absolute."));

    // ---------------------------------------------------------------- learned
    nar.step(_("Learned positions"), "y_t = x_t + P[t],  ∂L/∂P[t] += ∂L/∂y_t", _("BERT, GPT-2"));
    const Mat P = learned_position_init(positions, d, rng);
    nar.show("learned_pe", P, pos_labels, {}, _("N(0, 0.02²) at initialisation; training writes into each row it sees"));
    try {
      Mat y;
      learned_position_forward(y, Mat(xt::zeros<float>({positions + 1, d})), P);
    } catch (const PositionLimitError& e) {
      nar.result(_f("a sequence of {} tokens: {}", positions + 1, e.what()));
    }
    nar.say(_("correction: one source article says GPT uses RoPE; GPT-2 and GPT-3 use learned absolute positions like these "
            "(Radford et al. 2019; Brown et al. 2020). LLaMA and Qwen use RoPE."));
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
    nar.show("q_rot", q_rot, words, {}, _("row t turned by t·θ_i in each pair (2i, 2i+1)"));
    nar.record("k", plain.k);
    nar.record("k_rot", k_rot);
    const std::size_t t1 = T - 1;
    const double theta = std::pow(10000.0, 0.0), ang = double(t1) * theta;
    nar.say(_f("one pair by hand: word '{}' (position {}), pair 0, θ_0 = {:.0f}, angle {:.0f} rad", words[t1], t1, theta, ang));
    nar.say(_f("  (x0, x1) = ({:+.4f}, {:+.4f}) → (x0·cos − x1·sin, x0·sin + x1·cos) = ({:+.4f}, {:+.4f})",
                        plain.q(t1, 0), plain.q(t1, 1), q_rot(t1, 0), q_rot(t1, 1)));
    const RopeTables far = rope_tables(positions + 1000, d);
    double rel = 0.0;
    for (std::size_t s : {1u, 10u, 1000u}) {
      const Mat qs = rope_rotate(plain.q, far, s), ks = rope_rotate(plain.k, far, s);
      const Mat qa = rope_rotate(plain.q, far, 0), ka = rope_rotate(plain.k, far, 0);
      for (std::size_t m = 0; m < T; ++m)
        for (std::size_t n = 0; n < T; ++n) {
          double a = 0.0, b = 0.0;
          for (std::size_t c = 0; c < d; ++c) a += double(qa(m, c)) * ka(n, c), b += double(qs(m, c)) * ks(n, c);
          rel = std::max(rel, std::abs(a - b));
        }
    }
    nar.result(_f("scores q_m·k_n vs q_(m+s)·k_(n+s) for s = 1, 10, 1000: max difference {:.1e} — only m − n matters", rel));
    const Vec bound = rope_distance_bound(d, positions - 1);
    nar.record("rope_bound", bound);
    // The long-range bound needs many frequencies to decay: compare this chapter's d with d = 64.
    const std::size_t big_d = 64, far_r = 256;
    const Vec bound_small = rope_distance_bound(d, far_r), bound_big = rope_distance_bound(big_d, far_r);
    Table bt({_("distance m − n"), _f("bound, d = {}", d), _f("bound, d = {}", big_d)},
             _("RoFormer §3.4.3: relative upper bound of |q_m·k_n| as the distance grows"));
    for (std::size_t r : {0u, 1u, 4u, 16u, 64u, 128u, 256u})
      bt.add({std::to_string(r), fmt::format("{:.2f}", bound_small(r)), fmt::format("{:.2f}", bound_big(r))});
    nar.table(bt);
    // The largest bound beyond distance 16, as a fraction of distance 0, and where it is.
    auto rebound = [&](const Vec& b) {
      std::size_t at = 16;
      for (std::size_t r = 16; r <= far_r; ++r)
        if (b(r) > b(at)) at = r;
      return std::make_pair(double(b(at)) / double(b(0)), at);
    };
    const auto [small_max, small_at] = rebound(bound_small);
    const auto [big_max, big_at] = rebound(bound_big);
    nar.result(_f("largest bound beyond distance 16, as a fraction of distance 0: d = {}: {:.0f}% (at distance {}); "
                  "d = {}: {:.0f}% (at distance {})", d, 100.0 * small_max, small_at, big_d, 100.0 * big_max, big_at));
    if (d < big_d)
      nar.say(_f("the decay is an average over the d/2 frequencies falling out of phase: with d = {} there are only "
                 "{} of them, too few to average out; d = {} has {}, and beyond distance 16 its bound stays at or "
                 "below {:.0f}% of its start.", d, d / 2, big_d, big_d / 2, 100.0 * big_max));
    else
      nar.say(_("the decay is an average over the d/2 frequencies falling out of phase: the more frequencies, the "
                "steadier it falls."));
    nar.code("attn/position/rope.hpp: rope_tables, rope_rotate, rope_distance_bound");
    nar.why(_("rotations compose: R_mᵀR_n = R_(n−m), so absolute positions cancel in the score and relative ones remain."));

    // ---------------------------------------------------------------- ALiBi
    nar.step(_("ALiBi: a distance penalty per head"), _("scores_h(i, j) = q_i·k_j/√d_k − m_h·(i − j), j ≤ i;  m_h = 2^(−8h/H)"),
             _("Press et al. 2021, §3"));
    nar.say(_("the paper's form is causal (a query sees only earlier keys, i − j ≥ 0); the heatmap and step 2 also use the "
            "symmetric −m_h·|i − j|, which is the same where j ≤ i."));
    const Vec slopes = alibi_slopes(heads);
    nar.show("alibi_slopes", slopes, {}, _f("H = {}: a geometric sequence", heads));
    const Tensor3 bias = alibi_bias(slopes, positions);
    nar.record("alibi_bias", bias);
    nar.heatmap("alibi_bias_head1", slice_of(bias, 0), pos_labels, pos_labels, _f("slope {:.4g}", slopes(0)));
    const Mat none_out = positioned_self_attention(X, W, PositionEncoding::None);
    const Mat zero_slope = positioned_self_attention(X, W, PositionEncoding::Alibi, {}, 0.0f);
    nar.result(_f("slope 0: max |ALiBi − no positions| = {:.1e} (no positional information at all)",
                           max_abs_diff(zero_slope, none_out)));
    nar.code("attn/position/alibi.hpp: alibi_slopes, alibi_bias");
    nar.why(_("no vectors are added; nearby keys simply score higher, with steep heads looking locally and flat ones far."));

    // ---------------------------------------------------------------- extrapolation, measured
    nar.step(_("Length extrapolation, measured"), _("train at L = 16, test at 16, 32, 64"),
             _("claims: article 000 (RoPE 'naturally' extrapolates); Press et al. 2021 (ALiBi does, sinusoidal does not)"));
    nar.say(_("task: each token is a (key, value) pair, 4 keys × 8 values; predict the value of the latest earlier token "
              "with the same key. One attention layer, 4 heads × 8, strict causal mask; chance = 1/8 = 12.5%."));
    std::vector<std::vector<ExtrapolationResult>> results;
    for (PositionEncoding e : all_position_encodings()) {
      Rng init(xcfg.seed + std::uint64_t(e));
      PositionModel model(e, xcfg, init);
      const std::string file = fmt::format("ch05/{}.safetensors", position_encoding_name(e));
      if (train) {
        const double final_loss = train_extrapolation(model, xcfg);
        std::filesystem::create_directories(data_dir() + "/ch05");
        save_checkpoint(data_dir() + "/" + file, model.registry(),
                        {{"encoding", position_encoding_name(e)}, {"steps", std::to_string(xcfg.steps)},
                         {"final_train_loss", fmt::format("{:.4f}", final_loss)}});
        nar.say(_f("trained {:<10} {} steps, final training loss {:.3f} → {}", position_encoding_name(e), xcfg.steps,
                            final_loss, file));
      } else {
        load_checkpoint(require_data_file(file), model.registry(), false, nullptr,
                        {{"encoding", position_encoding_name(e)}});
      }
      results.push_back(extrapolation_table_row(model, xcfg));
      for (const ExtrapolationResult& r : results.back())  // no verdict from a NaN or ±inf figure
        if (r.available && !(std::isfinite(r.loss) && std::isfinite(r.accuracy)))
          throw std::runtime_error(_f("{}: {} loss {} is not finite; no verdict can be drawn from it", file,
                                               position_encoding_name(e), r.loss));
    }
    Table xt_tbl({_("encoding"), _("loss L"), _("acc L"), _("loss 2L"), _("acc 2L"), _("loss 4L"), _("acc 4L")});
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::vector<std::string> row = {position_encoding_name(all_position_encodings()[i])};
      for (const ExtrapolationResult& r : results[i]) {
        row.push_back(r.available ? fmt::format("{:.3f}", r.loss) : "—");
        row.push_back(r.available ? fmt::format("{:.1f}%", 100.0 * r.accuracy) : _("no row"));
      }
      xt_tbl.add(row);
    }
    nar.table(xt_tbl, /*as_result=*/true);
    const double rope4 = results[3][2].accuracy, rope1 = results[3][0].accuracy;
    const double alibi4 = results[4][2].accuracy, alibi1 = results[4][0].accuracy;
    const double sin4 = results[1][2].accuracy, sin1 = results[1][0].accuracy;
    nar.result(_f("RoPE: {:.1f}% at L → {:.1f}% at 4L; ALiBi: {:.1f}% → {:.1f}%; sinusoidal: {:.1f}% → {:.1f}%; "
                           "learned: no rows past L.", 100 * rope1, 100 * rope4, 100 * alibi1, 100 * alibi4, 100 * sin1, 100 * sin4));
    nar.result(_f("here: the article's 'RoPE extrapolates naturally' {}; Press et al.'s ALiBi-over-sinusoidal {}.",
                           rope1 - rope4 < 0.02 ? _("held") : _("did NOT hold (it lost accuracy past L)"),
                           alibi1 - alibi4 < sin1 - sin4 ? _("held") : _("did not hold")));
    nar.say(_("note: the answer is always the most recent earlier token with the query's key, so this task rewards "
            "recency by construction — exactly what ALiBi's distance penalty encodes; it favours ALiBi."));
    nar.code("attn/studies/extrapolation.hpp: make_recall_data, train_extrapolation, extrapolation_table_row");
    nar.why(_("a relative bias that only says 'nearer is better' means the same thing at any length; absolute "
            "positions past L were never seen in training, and a learned table has no row for them at all."));

    nar.takeaway({
        _("Without positions self-attention is permutation-equivariant: 猫 吃 鱼 and 鱼 吃 猫 give the same rows, reordered."),
        _("Sinusoidal: PE(pos+k) = M_k·PE(pos) with M_k independent of pos; learned tables stop at their trained length."),
        _("RoPE makes q·k depend on m − n only (checked to float precision); ALiBi penalises distance, slope 0 = no positions."),
        _f("Measured here (train L = 16): at 4L ALiBi keeps {:.0f}% accuracy, RoPE {:.0f}%, sinusoidal {:.0f}%, on a "
                    "task that rewards recency (ALiBi's bias); plain RoPE {} 'naturally' here.", 100 * alibi4, 100 * rope4,
                    100 * sin4, rope1 - rope4 < 0.02 ? _("extrapolated") : _("did not extrapolate")),
    });
  });
}
