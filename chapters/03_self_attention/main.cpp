// Chapter 03 · Self-attention — Q, K, V from one sentence; softmax(QKᵀ/√d_k)V step by step;
// the causal mask; why √d_k (measured); permutation equivariance; attention as a soft lookup;
// and why attention replaced recurrence: the path from the first token to the last, measured.
//   build/bin/03_self_attention                 the lesson (under 2 s)
//   build/bin/03_self_attention --export out    also writes every tensor as .npy + manifest.json
// Export names: X W_Q W_K W_V Q K V scores weights output causal_mask causal_weights
// causal_output X_permuted output_permuted scaling lookup_keys lookup_values lookup_query
// lookup_taus lookup_weights path_length; manifest.json also holds "scaling_source".
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "attn/data/word_vectors.hpp"
#include "attn/present/ch03_report.hpp"
#include "attn/present/cli.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("03", /*default_seed=*/7, /*total_steps=*/10);
  std::string sentence = "the cat eats fish";
  std::size_t d_model = 8, d_k = 4;
  std::size_t trials = 1200;  // 3 standard errors of Var at d_k = 1: 0.133, inside the 15% tolerance
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
    const std::size_t n = words.size();
    Rng rng(nar.options().seed);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step(_("Tokens become vectors"), _("X ∈ ℝ^(n×d_model)"));
    const Mat X = word_vectors(words, d_model, nar.options().seed);  // (n, d_model)
    nar.show("X", X, words, {}, _("one row per word (random toy embeddings, fixed by the seed)"));
    const EntryStats x_stats = entry_stats(X);
    nar.say(_f("n = {} words, d_model = {} numbers per word; each entry drawn from N(0, 1) (this X's {} entries: "
               "mean {:.2f}, variance {:.2f}).", n, d_model, X.size(), x_stats.mean, x_stats.variance));
    nar.code("attn/data/word_vectors.hpp: word_vectors");
    nar.why(_("attention only ever sees vectors; a word's row is all the model knows about it."));

    nar.step(_("Project to queries, keys and values"), "Q = X·W_Q,  K = X·W_K,  V = X·W_V");
    const SelfAttentionWeights W = init_self_attention(rng, d_model, d_k, d_k);
    nar.show("W_Q", W.w_q, {}, {}, _f("(d_model×d_k), entries N(0, 1/{})", d_model));
    nar.say(_f("d_k = {}: the size of each query and key (and here of each value).", d_k));
    nar.record("W_K", W.w_k);
    nar.record("W_V", W.w_v);
    const SelfAttentionTrace full = self_attention(X, W);
    nar.say(_f("N(0, 1/{}): mean 0, variance 1/d_model, so each entry of Q, K and V (a sum of d_model products) has "
               "expected variance Var(X), about 1; measured here: Q {:.2f}, K {:.2f}, V {:.2f} (X: {:.2f}), each "
               "from only {} entries and one random W, so they scatter.", d_model, entry_stats(full.q).variance,
               entry_stats(full.k).variance, entry_stats(full.v).variance, x_stats.variance, full.q.size()));
    nar.show("Q", full.q, words, {}, _("what each word is looking for"));
    nar.show("K", full.k, words, {}, _("what each word offers to be found by"));
    nar.show("V", full.v, words, {}, _("what each word hands over when found"));
    nar.code("attn/attention/self_attention.hpp: init_self_attention, self_attention");
    nar.why(_("three different projections let a word ask (Q) for something other than what it advertises (K) or gives (V)."));

    nar.step(_("Score every pair"), "S = Q·Kᵀ / √d_k", _("Vaswani et al. 2017, eq. 1"));
    nar.say(_f("d_k = {}, √d_k = {:.3f}; S[i, j] says how well word i's query matches word j's key (S here: the "
               "score matrix, not chapters 00–02's source length)", d_k,
                        std::sqrt(double(d_k))));
    nar.show("scores", full.attn.scores, words, words);
    nar.code("attn/attention/attention.hpp: scaled_dot_product_attention");
    nar.why(_("a dot product is large when two vectors point the same way; step 7 measures why we divide by √d_k."));

    nar.step(_("Turn scores into weights"), _("A = softmax(S), row-wise"));
    nar.show("weights", full.attn.weights, words, words, _("row i: how much word i takes from each word"));
    show_weights_heatmap(nar, full.attn.weights, words);
    const RowSumCheck sums = check_row_sums(full.attn.weights);
    report_row_sums(nar, sums);
    nar.say(_("the weights here come from random W_Q, W_K: these patterns mean nothing yet; chapter 10 reads the heads "
            "of a trained model."));
    nar.say(_("note: softmax subtracts the row max before exp, so even scores of ±10⁴ stay finite (not run here: "
              "tests/core/test_softmax.cpp checks it)."));
    nar.code("attn/tensor/softmax.hpp: softmax");
    nar.why(_("softmax makes every weight positive and every row sum to 1, so step 5's A·V is a weighted average of "
              "V's rows."));

    nar.step(_("Mix the values"), "O = A·V");
    nar.show("output", full.attn.output, words, {}, _("row i: a weighted average of V's rows"));
    const Mat reference = xt::cast<float>(attention_reference(full.q, full.k, full.v));
    report_reference(nar, check_reference(full.attn.output, reference));
    nar.code("attn/attention/attention.hpp: scaled_dot_product_attention, attention_reference");
    nar.why(_("each output row mixes the values its row of A weights: change what a word sees and its row changes (step 6)."));

    nar.step(_("Hide the future"), _("A = softmax(S + M),  M_ij = −∞ for j > i"));
    const Mat M = causal_mask(n);
    nar.show("causal_mask", M, words, words, _("0 = may look, −∞ = may not"));
    const SelfAttentionTrace causal = self_attention(X, W, M);
    nar.show("causal_weights", causal.attn.weights, words, words);
    nar.show("causal_output", causal.attn.output, words);
    report_causal(nar, causal.attn.weights, M, words,
                  check_causal(causal.attn.weights, causal.attn.output, full.attn.output, M));
    nar.code("attn/tensor/mask.hpp: causal_mask");
    nar.why(_("exp(−∞) = 0, so masked pairs get exactly zero weight; a decoder must not read words it has not produced yet."));

    // ---------------------------------------------------------------- the phenomenon, measured
    nar.step(_("Why √d_k, measured"), _("Var(q·k) = d_k for q, k ~ N(0, I)"), _("Vaswani et al. 2017, footnote 4"));
    const ScalingStudy scaling = scaling_study(rng, {1, 4, 16, 64, 256, 1024}, /*n_keys=*/16, trials);
    report_scaling(nar, scaling, 16, trials);
    nar.manifest_field("scaling_source", fmt::format("\"measure_scaling(Rng({}) after steps 1-6, d_k = 1 … 1024, "
                                                     "16 keys, {} trials): random draws, not exported\"",
                                                     nar.options().seed, trials));
    nar.code("attn/studies/scaling.hpp: measure_scaling, softmax_jacobian_norm; attn/studies/self_attention_study.hpp: judge_scaling");
    nar.why(_f("without the scale the scores grow like √d_k and softmax goes one-hot, where its gradient vanishes; "
               "with it, the gradient stays within {:.2f}× across d_k.", scaling.scaled_steady.measured));

    nar.step(_("Shuffle the words"), "f(P·X) = P·f(X)");
    nar.say(_("f: the self-attention layer of steps 2–5 (the same W_Q, W_K, W_V); P: a permutation matrix, which "
              "reorders the rows (here it reverses them)."));
    std::vector<std::size_t> perm(n);
    std::iota(perm.rbegin(), perm.rend(), 0);  // reversed order: "fish eats cat the"
    Labels shuffled(n);
    for (std::size_t i = 0; i < n; ++i) shuffled[i] = words[perm[i]];
    const Mat Xp = word_vectors(shuffled, d_model, nar.options().seed);
    const Mat Op = self_attention(Xp, W).attn.output;
    nar.show("X_permuted", Xp, shuffled);
    nar.show("output_permuted", Op, shuffled);
    const PermutationCheck permutation = check_permutation(full.attn.output, Op, perm);
    report_permutation(nar, permutation, sentence, fmt::format("{}", fmt::join(shuffled, " ")));
    report_masked_permutation(nar, check_permutation(causal.attn.output, self_attention(Xp, W, M).attn.output, perm));
    nar.code("attn/studies/self_attention_study.hpp: check_permutation; attn/studies/lookup.hpp: permute_rows");
    nar.why(_f("without a mask, nothing in softmax(QKᵀ/√d_k)V depends on where a word stands; chapter 05 adds positions. The source "
               "article {} writes that self-attention is \"排列不变的（permutation-invariant）\" and that swapping two "
               "words leaves its output unchanged; per word it is equivariant, and only a pooled summary is invariant.",
               source_article()));

    nar.step(_("A soft database lookup"), _("o = Σ_j softmax_j(q·k_j / τ) v_j"));
    const Labels animals = {"cat", "dog", "fish", "bird"};
    const Mat keys = word_vectors(animals, d_model, nar.options().seed);
    const Mat values = {{4.0f, 0.0f}, {4.0f, 0.0f}, {0.0f, 0.0f}, {2.0f, 1.0f}};  // (legs, flies) per animal
    const Vec query = row_of(keys, 3) + rng.normal_vec(d_model, 0.5f);  // the key of "bird", noisy
    report_lookup_setup(nar, animals, words);
    nar.show("lookup_keys", keys, animals);
    nar.show("lookup_values", values, animals, {_("legs"), _("flies")});
    nar.show("lookup_query", query, {}, _("the key of 'bird' plus N(0, 0.25) noise (variance 0.25, sd 0.5)"));
    const LookupStudy lookup =
        lookup_study(query, keys, values, {16.0f, 4.0f, std::sqrt(float(d_model)), 1.0f, 0.25f, 0.01f}, /*bird*/ 3);
    report_lookup(nar, lookup, animals, d_model);
    nar.code("attn/studies/lookup.hpp: soft_lookup");
    nar.why(_("a hard lookup returns one row; attention blends rows by similarity, and a lower τ sharpens the blend."));

    // ---------------------------------------------------------------- leaving recurrence behind
    nar.step(_("Path length"), _("RNN: n − 1 steps; attention: 1 layer"), _("Vaswani et al. 2017, §4 and Table 1"));
    const PathLengthStudy paths = path_length_study({4, 16, 64, 256}, d_model, /*window=*/4, nar.options().seed);
    report_path_length(nar, paths);
    nar.code("attn/studies/self_attention_study.hpp: recurrent_path, attention_path_layers, attention_influence");
    nar.why(_("a recurrent network must pass token 0 through every state in between, one step after another; "
              "attention connects every pair in one layer, and all rows are computed at once — at O(n²) cost."));

    nar.takeaway(ch03_takeaway(sums, scaling, permutation, paths));
  });
}
