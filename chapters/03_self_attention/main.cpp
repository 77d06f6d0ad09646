// Chapter 03 · Self-attention — Q, K, V from one sentence; softmax(QKᵀ/√d_k)V step by step;
// the causal mask; why √d_k (measured); permutation equivariance; attention as a soft lookup.
//   build/bin/03_self_attention                 the lesson (under 2 s)
//   build/bin/03_self_attention --export out    also writes every tensor as .npy + manifest.json
// Export names: X W_Q W_K W_V Q K V scores weights output causal_mask causal_weights
// causal_output X_permuted output_permuted scaling lookup_keys lookup_values lookup_query.
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "attn/attention/attention.hpp"
#include "attn/present/cli.hpp"
#include "attn/studies/lookup.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/studies/scaling.hpp"
#include "attn/attention/self_attention.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("03", /*default_seed=*/7, /*total_steps=*/9);
  std::string sentence = "the cat eats fish";
  std::size_t d_model = 8, d_k = 4;
  std::size_t trials = 400;
  ch.app().add_option("--sentence", sentence, _("the words to attend over (2 to 12 words)"))->capture_default_str()
      ->check([](const std::string& s) {
        auto n = split_words(s).size();
        return n >= 2 && n <= 12 ? std::string() : _f("needs 2 to 12 words, got {}", n);
      });
  ch.app().add_option("--d-model", d_model, _("embedding size"))->capture_default_str()->check(CLI::Range(2, 64));
  ch.app().add_option("--d-k", d_k, _("query/key/value size"))->capture_default_str()->check(CLI::Range(1, 64));
  ch.app().add_option("--trials", trials, _("random queries per d_k in the √d_k study"))->capture_default_str()
      ->check(CLI::Range(10, 20000));
  ch.set_question(_("Question: how does every word of a sentence look at every other word — and why divide by √d_k?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels words = split_words(sentence);
    const std::size_t T = words.size();
    Rng rng(nar.options().seed);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step(_("Tokens become vectors"), _("X ∈ ℝ^(T×d_model)"));
    const Mat X = word_vectors(words, d_model, nar.options().seed);  // (T, d_model)
    nar.show("X", X, words, {}, _("one row per word (random toy embeddings, fixed by the seed)"));
    nar.code("attn/data/word_vectors.hpp: word_vectors");
    nar.why(_("attention only ever sees vectors; a word's row is all the model knows about it."));

    nar.step(_("Project to queries, keys and values"), "Q = X·W_Q,  K = X·W_K,  V = X·W_V");
    const SelfAttentionWeights W = init_self_attention(rng, d_model, d_k, d_k);
    nar.show("W_Q", W.w_q, {}, {}, _f("(d_model×d_k), entries N(0, 1/{})", d_model));
    nar.record("W_K", W.w_k);
    nar.record("W_V", W.w_v);
    const SelfAttentionTrace full = self_attention(X, W);
    nar.show("Q", full.q, words, {}, _("what each word is looking for"));
    nar.show("K", full.k, words, {}, _("what each word offers to be found by"));
    nar.show("V", full.v, words, {}, _("what each word hands over when found"));
    nar.code("attn/attention/self_attention.hpp: init_self_attention, self_attention");
    nar.why(_("three different projections let a word ask (Q) for something other than what it advertises (K) or gives (V)."));

    nar.step(_("Score every pair"), "S = Q·Kᵀ / √d_k", _("Vaswani et al. 2017, eq. 1"));
    nar.say(_f("d_k = {}, √d_k = {:.3f}; S[i, j] says how well word i's query matches word j's key", d_k,
                        std::sqrt(double(d_k))));
    nar.show("scores", full.attn.scores, words, words);
    nar.code("attn/attention/attention.hpp: scaled_dot_product_attention");
    nar.why(_("a dot product is large when two vectors point the same way; step 7 measures why we divide by √d_k."));

    nar.step(_("Turn scores into weights"), _("A = softmax(S), row-wise"));
    nar.show("weights", full.attn.weights, words, words, _("row i: how much word i takes from each word"));
    nar.heatmap("weights", full.attn.weights, words, words, "", {0.0, 1.0});
    const Mat row_sums = xt::sum(full.attn.weights, {1}, xt::keep_dims);
    nar.result(_f("row sums: min {:.6f}, max {:.6f} (softmax makes each row a probability distribution)",
                           double(xt::amin(row_sums)()), double(xt::amax(row_sums)())));
    nar.say(_("the weights here come from random W_Q, W_K: these patterns mean nothing yet; chapter 10 reads the heads "
            "of a trained model."));
    nar.code("attn/tensor/softmax.hpp: softmax");
    nar.why(_("softmax subtracts the row max before exp, so even scores of ±10⁴ stay finite."));

    nar.step(_("Mix the values"), "O = A·V");
    nar.show("output", full.attn.output, words, {}, _("row i: a weighted average of V's rows"));
    const Mat reference = xt::cast<float>(attention_reference(full.q, full.k, full.v));
    nar.result(_f("max |O − reference| = {:.2e}  (reference: the same formula in double, plain loops)",
                           max_abs_diff(full.attn.output, reference)));
    nar.code("attn/attention/attention.hpp: scaled_dot_product_attention, attention_reference");
    nar.why(_("each output row is a context-aware version of its word: the same word gets a different row in a different sentence."));

    nar.step(_("Hide the future"), _("A = softmax(S + M),  M_ij = −∞ for j > i"));
    const Mat M = causal_mask(T);
    nar.show("causal_mask", M, words, words, _("0 = may look, −∞ = may not"));
    const SelfAttentionTrace causal = self_attention(X, W, M);
    nar.show("causal_weights", causal.attn.weights, words, words);
    nar.heatmap("causal_weights", causal.attn.weights, words, words, "", {0.0, 1.0});
    nar.show("causal_output", causal.attn.output, words);
    nar.result(_f("first word attends only to itself: weight {:.3f}; last row equals the unmasked one: max diff {:.1e}",
                           double(causal.attn.weights(0, 0)),
                           max_abs_diff(row_of(causal.attn.output, T - 1), row_of(full.attn.output, T - 1))));
    nar.code("attn/tensor/mask.hpp: causal_mask");
    nar.why(_("exp(−∞) = 0, so masked pairs get exactly zero weight; a decoder must not read words it has not produced yet."));

    // ---------------------------------------------------------------- the phenomenon, measured
    nar.step(_("Why √d_k, measured"), _("Var(q·k) = d_k for q, k ~ N(0, I)"), _("Vaswani et al. 2017, footnote 4"));
    const std::size_t n_keys = 16;
    nar.say(_f("{} random queries per row, each against {} random keys; entries N(0, 1)", trials, n_keys));
    Table tbl({"d_k", "Var(q·k)", "Var(q·k/√d_k)", _("max weight"), _("max w. scaled"), "‖∂softmax‖", _("‖∂softmax‖ sc.")});
    const std::vector<std::size_t> dks = {1, 4, 16, 64, 256, 1024};
    Mat scaling = xt::zeros<float>({dks.size(), std::size_t(7)});
    for (std::size_t r = 0; r < dks.size(); ++r) {
      const ScalingRow s = measure_scaling(rng, dks[r], n_keys, trials);
      tbl.add({std::to_string(s.d_k), fmt::format("{:.1f}", s.var_raw), fmt::format("{:.2f}", s.var_scaled),
               fmt::format("{:.3f}", s.max_weight_raw), fmt::format("{:.3f}", s.max_weight_scaled),
               fmt::format("{:.3f}", s.grad_raw), fmt::format("{:.3f}", s.grad_scaled)});
      const double vals[] = {double(s.d_k), s.var_raw, s.var_scaled, s.max_weight_raw, s.max_weight_scaled, s.grad_raw, s.grad_scaled};
      for (std::size_t c = 0; c < 7; ++c) scaling(r, c) = float(vals[c]);
    }
    nar.table(tbl, /*as_result=*/true);
    nar.record("scaling", scaling);
    nar.say(_("max weight: the largest of the 16 softmax weights (1/16 = 0.0625 would be uniform, 1 is one-hot)."));
    nar.say(_("‖∂softmax‖: Frobenius norm of diag(p) − p·pᵀ, the softmax's Jacobian — the gradient that flows back to S."));
    nar.code("attn/studies/scaling.hpp: measure_scaling, softmax_jacobian_norm");
    nar.why(_("without the scale the scores grow like √d_k, softmax goes one-hot and its gradient vanishes; with it, nothing depends on d_k."));
    nar.say(_("note: one source article writes softmax(QKᵀ/d_k); the divisor is √d_k — dividing by d_k would shrink Var to 1/d_k."));

    nar.step(_("Shuffle the words"), "f(P·X) = P·f(X)");
    std::vector<std::size_t> perm(T);
    std::iota(perm.begin(), perm.end(), 0);
    std::reverse(perm.begin(), perm.end());  // reversed order: "fish eats cat the"
    Labels shuffled(T);
    for (std::size_t i = 0; i < T; ++i) shuffled[i] = words[perm[i]];
    const Mat Xp = word_vectors(shuffled, d_model, nar.options().seed);
    const Mat Op = self_attention(Xp, W).attn.output;
    nar.show("X_permuted", Xp, shuffled);
    nar.show("output_permuted", Op, shuffled);
    const double equivariance_err = max_abs_diff(Op, permute_rows(full.attn.output, perm));
    const Mat pooled = xt::mean(full.attn.output, {0}, xt::keep_dims), pooled_p = xt::mean(Op, {0}, xt::keep_dims);
    nar.result(_f("\"{}\" vs \"{}\": max |f(P·X) − P·f(X)| = {:.1e} — the same rows, reordered (equivariant)",
                           sentence, fmt::join(shuffled, " "), equivariance_err));
    nar.result(_f("mean-pooled outputs differ by {:.1e} (invariant); without positions the two sentences look identical",
                           max_abs_diff(pooled, pooled_p)));
    nar.code("attn/studies/lookup.hpp: permute_rows");
    nar.why(_("nothing in softmax(QKᵀ/√d_k)V depends on where a word stands; chapter 05 adds positions. "
            "(An article calls this 'invariant'; per word it is equivariant.)"));

    nar.step(_("A soft database lookup"), _("o = Σ_j softmax_j(q·k_j / τ) v_j"));
    const Labels animals = {"cat", "dog", "fish", "bird"};
    const Mat keys = word_vectors(animals, d_model, nar.options().seed);
    Mat values = {{4.0f, 0.0f}, {4.0f, 0.0f}, {0.0f, 0.0f}, {2.0f, 1.0f}};  // (legs, flies) per animal
    Vec query = row_of(keys, 3);                          // looking for "bird" …
    for (auto& x : query) x += 0.5f * rng.normal();                       // … with a noisy query
    nar.show("lookup_keys", keys, animals);
    nar.show("lookup_values", values, animals, {_("legs"), _("flies")});
    nar.show("lookup_query", query, {}, _("the key of 'bird' plus N(0, 0.25) noise"));
    Table lookup({"τ", "w(cat)", "w(dog)", "w(fish)", "w(bird)", _("legs"), _("flies"), _("|o − v_best|")});
    for (float tau : {16.0f, 4.0f, std::sqrt(float(d_model)), 1.0f, 0.25f, 0.01f}) {
      const SoftLookup r = soft_lookup(query, keys, values, tau);
      const Vec hard = row_of(values, r.best);
      lookup.add({fmt::format("{:.2f}", tau), fmt::format("{:.3f}", r.weights(0)), fmt::format("{:.3f}", r.weights(1)),
                  fmt::format("{:.3f}", r.weights(2)), fmt::format("{:.3f}", r.weights(3)),
                  fmt::format("{:.2f}", r.output(0)), fmt::format("{:.2f}", r.output(1)),
                  fmt::format("{:.1e}", max_abs_diff(r.output, hard))});
    }
    nar.table(lookup, /*as_result=*/true);
    nar.code("attn/studies/lookup.hpp: soft_lookup");
    nar.why(_f("a hard lookup returns one row; attention blends rows by similarity. τ = √d_model = {:.2f} is the "
                        "usual scale; as τ → 0 the blend becomes the hard lookup.", std::sqrt(double(d_model))));

    nar.takeaway({
        _("softmax(QKᵀ/√d_k)V is three matrix products and a row-wise softmax; every row of A sums to 1."),
        _("Var(q·k) grows like d_k (measured above); dividing by √d_k keeps scores at unit variance, so softmax stays soft and its gradient alive."),
        _("Self-attention is permutation-equivariant: shuffle the words and the outputs shuffle with them — positions must be added (chapter 05)."),
    });
  });
}
