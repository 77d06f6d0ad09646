// Chapter 04 · Multi-head attention — project, split into heads, attend per head, concatenate, mix
// with W_O; every intermediate printed (d_model 16, 4 heads); then the original Transformer's
// parameters and FLOPs, and MQA / GQA with their KV-cache bytes per token.
//   build/bin/04_multi_head                  the lesson (under 1 s)
//   build/bin/04_multi_head --export out     also writes every tensor as .npy + manifest.json
// Export names: X W_Q W_K W_V W_O Q Q_heads K_heads V_heads weights heads_out concat output
// (no biases in this chapter's layer; Q = X·W_Q, right-multiplied) and gqa_output mqa_output (the
// same weights, each group's W_K and W_V columns averaged: attn/studies/multi_head_study.hpp);
// manifest.json also holds "figures" (the head difference of step 3).
#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "attn/attention/mha_trace.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/present/ch04_report.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("04", /*default_seed=*/4, /*total_steps=*/6);
  std::string sentence = "the cat eats the fish";
  std::size_t d_model = 16, heads = 4;
  ch.app().add_option("--sentence", sentence, _("the words to attend over (2 to 12 words)"))->capture_default_str()
      ->check([](const std::string& s) {
        auto n = split_words(s).size();
        return n >= 2 && n <= 12 ? std::string() : _f("needs 2 to 12 words, got {}", n);
      });
  ch.app().add_option("--d-model", d_model, _("model width (a multiple of --heads)"))->capture_default_str()->check(CLI::Range(2, 128));
  ch.app().add_option("--heads", heads, _("number of heads (divides --d-model, at most 8)"))->capture_default_str()->check(CLI::Range(1, 8));
  ch.app().parse_complete_callback([&] {  // a relation between two flags: checked before any work, exit 2
    if (d_model % heads != 0) throw CLI::ValidationError("--heads", _f("{} does not divide --d-model {}", heads, d_model));
  });
  ch.set_question(_("Question: why run several small attentions side by side instead of one big one — and what do they cost?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels words = split_words(sentence);
    const std::size_t n = words.size(), d_k = d_model / heads;
    Rng rng(nar.options().seed);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step(_("Tokens and four weight matrices"), _("W_Q, W_K, W_V, W_O ∈ ℝ^(d_model×d_model)"), _("Vaswani et al. 2017, §3.2.2"));
    const Mat X = word_vectors(words, d_model, nar.options().seed);
    nar.show("X", X, words, {}, _f("(n×d_model) = ({}×{})", n, d_model));
    nar.say(_("X: one fixed random N(0, 1) vector per distinct word (fixed by the seed, as in chapter 03), so a word "
              "that appears twice gets two equal rows"));
    nar.say(_f("h = {} heads; W_O: the output matrix that mixes the heads' results (step 4)", heads));
    const MultiHead p = multi_head_init(d_model, heads, heads, rng, /*bias=*/false);
    nar.show("W_Q", p.w_q, {}, {}, _("U(−1/√d_model, 1/√d_model), the rule of PyTorch's nn.Linear"));
    nar.say(_("no biases in the steps shown; step 4's PyTorch check adds them"));
    nar.record("W_K", p.w_k);
    nar.record("W_V", p.w_v);
    nar.record("W_O", p.w_o);
    nar.code("attn/attention/multi_head.hpp: multi_head_init");
    nar.why(_("the same parameter count as one big head: h heads of d_model/h columns each share the four matrices."));

    nar.step(_("Project, then split into heads"), _("Q = X·W_Q  (n×d_model)  →  Q_heads (h×n×d_k)"));
    const MhaTrace t = multi_head_trace(X, p);
    nar.say(_f("d_k = d_model / h = {} / {} = {}; head i owns columns [{}·i, {}·(i+1)) of Q, K and V", d_model, heads, d_k,
               d_k, d_k));
    nar.say(_("heads are numbered from 0 here, in tensors and heatmaps alike (the paper writes head_1 … head_h)"));
    nar.show("Q", t.q, words, {}, _("Q = X·W_Q (n×d_model), before the split"));
    nar.show("Q_heads", t.q_heads, words, {}, _("each head's slice of Q"));
    nar.say(_f("look: head 0 of Q_heads is Q's columns 0–{}, unchanged; head i holds columns {}·i to {}·i + {}",
               d_k - 1, d_k, d_k, d_k - 1));
    nar.show("K_heads", t.k_heads, words);
    nar.show("V_heads", t.v_heads, words);
    nar.code("attn/attention/mha_trace.hpp: multi_head_trace, split_heads");
    nar.why(_("splitting is only a reshape: no new numbers, just h separate (n×d_k) problems."));

    nar.step(_("Attention in every head at once"), _("head_i = softmax(Q_i·K_iᵀ/√d_k)·V_i"));
    show_head_maps(nar, t.weights, words);
    nar.record_tokens("weights", words, words);  // the --html page labels queries and keys with the words
    const HeadDiversity diversity = head_diversity(t.weights);
    const TwoTargets two = two_targets();
    report_near_uniform(nar, near_uniform_rows(t.weights), words);
    report_head_diversity(nar, diversity);
    nar.manifest_field("figures", fmt::format("{{\"most_different_heads\": {:.9g}}}", diversity.most_different));
    nar.say(_("W_Q, W_K, W_V are random: these patterns mean nothing yet; chapter 10 reads the heads of a trained model."));
    nar.show("heads_out", t.heads_out, words, {}, _("each head's weighted sum of its values"));
    report_two_targets(nar, two);
    nar.code("attn/attention/mha_trace.hpp: multi_head_trace; attn/studies/multi_head_study.hpp: head_diversity, "
             "near_uniform_rows, two_targets");
    nar.why(_("different projections make different similarity questions; one softmax could only average them into one map."));

    nar.step(_("Concatenate and mix"), _("MultiHead(X) = Concat(head_0, …, head_{h−1})·W_O"));
    nar.show("concat", t.concat, words, {}, _("heads side by side again: (n×h·d_k)"));
    nar.say(heads > 1 ? _f("look: columns 0–{} are head 0's heads_out from step 3, columns {}–{} head 1's, and so on",
                           d_k - 1, d_k, 2 * d_k - 1)
                      : _("look: with h = 1, concat is the one head's heads_out from step 3"));
    nar.show("output", t.output, words, {}, _("W_O lets every output column read every head"));
    const Agreement layer = trace_vs_layer(X, p);
    std::optional<Agreement> pytorch;
    if (const auto gx_path = find_data_file("golden/mha/X.npy"))  // the whole set comes from X.npy's folder
      pytorch = pytorch_parity(std::filesystem::path(*gx_path).parent_path().string());
    report_layer_agreement(nar, layer, pytorch ? &*pytorch : nullptr);
    report_head_cost(nar, head_cost(n, d_model, heads), head_cost(n, d_model, 1), n, d_model);
    nar.code("attn/attention/mha_trace.hpp: merge_heads; attn/studies/multi_head_study.hpp: trace_vs_layer, "
             "pytorch_parity, head_cost");
    nar.why(_("concatenation alone would keep heads apart; W_O is where their findings are combined."));

    // ---------------------------------------------------------------- the original configuration
    nar.step(_("The original Transformer, counted"),
             _("per layer, d = d_model: 8·n·d² (projections) + 4·n²·d (scores) + 4·n·d·d_ff (feed-forward)"),
             _("Vaswani et al. 2017, Table 3 (base)"));
    const TransformerConfig cfg;
    const std::vector<std::size_t> lengths = {32, 128, 512, 1024, 2048, 8192};
    report_transformer_cost(nar, cfg, lengths);
    nar.code("attn/studies/transformer_cost.hpp: transformer_params, encoder_layer_cost; "
             "attn/studies/multi_head_study.hpp: attention_crossings");
    explain_transformer_cost(nar, cfg, lengths);

    // ---------------------------------------------------------------- MQA and GQA
    nar.step(_("MQA and GQA: share keys and values"), _("query head i reads K/V head ⌊i / (h/g)⌋"), _("Shazeer 2019; Ainslie et al. 2023"));
    const std::size_t g = heads % 2 == 0 ? heads / 2 : heads;
    const MultiHead pg = mean_pool_kv(p, g), pm = mean_pool_kv(p, 1);  // step 1's weights, K/V heads averaged
    define_gqa(nar);
    nar.show("gqa_output", multi_head_trace(X, pg).output, words, {}, gqa_caption(heads, g));
    nar.record("mqa_output", multi_head_trace(X, pm).output);
    report_gqa(nar, gqa_vs_repeated_mha(X, pg), {gqa_pooling_cost(X, p, g), gqa_pooling_cost(X, p, 1)});
    nar.code("attn/attention/gqa.hpp: repeat_kv, attention_param_count, kv_cache_bytes_per_token; "
             "attn/studies/multi_head_study.hpp: mean_pool_kv, gqa_pooling_cost");
    nar.why(_("decoding re-reads the whole cache for every new token; 8 K/V heads make it 8× smaller. In Ainslie et "
              "al. 2023 (Figure 5; not measured here) GQA-8 already performs reasonably right after pooling, while "
              "MQA needs uptraining to be useful; the averaged heads above are not uptrained."));

    nar.takeaway(ch04_takeaway(layer, pytorch ? &*pytorch : nullptr, cfg, two));
  });
}
