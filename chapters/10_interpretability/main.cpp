// Chapter 10 · Interpretability — what attention weights do and do not tell us, measured on models
// this course trained: every head of a model drawn, induction heads found and knocked out, then the
// articles' five claims about attention weights (by-layer patterns, alignment, collapse,
// perturbation, gradients) each measured here beside what the papers report.
//   build/bin/10_interpretability                  the lesson from the shipped models (under 15 s)
//   build/bin/10_interpretability --html heads.html  also an offline head view of every model
//   build/bin/10_interpretability --train          retrains the two induction models (minutes)
// Export names: attn_weights_induction (layers × heads × T × T, tokens in the manifest),
// previous_token, prefix_matching (layers × heads, the drawn sequence), previous_token_eval,
// head_entropy, head_distance (layers × heads, the evaluation set), copying (layers × heads),
// eval_tokens (sequences × length), eval_periods (sequences), alignment_accuracy (chapter 08's
// cross-attention: decoder layers × heads, when shipped), alignment_accuracy_bahdanau (1),
// kendall_tau (layers: τ(attention, LOO)); manifest.json's "evaluation_set" names the models and
// how the evaluation set was drawn. Each step: a study of attn/studies/interpretability_claims.hpp
// measures and judges, a report of attn/present/interpretability_report.hpp prints.
// Chapters 08 and 09's models are measured when their checkpoints are in data/; otherwise the
// chapter says so and measures the rest.
#include <optional>

#include "attn/data/data_files.hpp"
#include "attn/data/text_corpus.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/interpretability_report.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("10", /*default_seed=*/1, /*total_steps=*/8);
  bool train = false;
  InductionTrainConfig tc;
  tc.model = {48, 48, 4, 2, 48};  // vocabulary 48, d_model 48, 4 heads of 12, 2 layers, context 48
  tc.task = {48, 40, 5, 16};      // 40 tokens, a period of 5 to 16 distinct tokens
  tc.batch = 24;
  std::size_t eval_n = 64;
  std::string norm = "post";
  ch.app().add_option("--norm", norm, _("which chapter 08 Transformer to measure"))->capture_default_str()
      ->check(CLI::IsMember({"post", "pre"}));
  CLI::Option* train_flag = ch.app().add_flag("--train", train, _("retrain both induction models (seeds S and S + 1) and rewrite data/ch10/"));
  ch.app().add_option("--train-steps", tc.steps, _("Adam steps per model with --train"))->capture_default_str()
      ->check(CLI::Range(1, 200000))->needs(train_flag);
  ch.app().add_option("--eval", eval_n, _("evaluation sequences"))->capture_default_str()->check(CLI::Range(4, 1024));
  ch.describe_seed(_f("the seed of --train only (it trains models S and S + 1); without --train the lesson loads "
                      "the shipped models and a fixed evaluation set (drawn with the PCG32 random number generator, seed {}): the seed changes only the "
                      "header", kEvalSeed));
  ch.set_question(_("Question: attention weights are easy to draw — what do they actually tell us about a model?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    tc.seed = nar.options().seed;
    const InductionModel im = load_or_train_induction(0, train, tc, !nar.quiet());
    const InductionModel other_seed = load_or_train_induction(1, train, tc, !nar.quiet());
    require_two_seeds(im, other_seed);
    const InductionBatch eval = evaluation_set(tc.task, eval_n), drawn = drawn_sequence(tc.task);
    nar.manifest_field("evaluation_set", evaluation_manifest(tc.task, eval, im, other_seed));
    const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
    const std::vector<SentencePair> pairs(corpus.test.begin(), corpus.test.begin() + 150);
    const ExampleChoice choice = pick_alignment_example(corpus.test);  // step 4 prints why this pair
    const SentencePair& example = corpus.test[choice.index];
    std::optional<Transformer> tf;  // chapter 08's and chapter 09's models, when shipped
    if (const auto p = find_data_file("ch08/transformer_" + norm + ".safetensors")) tf = load_transformer(*p);
    std::optional<TinyLm> lm;
    if (find_data_file("ch09/decoder_lm.safetensors")) lm = load_tiny_lm();
    InterpretabilityFindings f;  // what steps 8 and the takeaway sum up
    f.circuit = find_induction_heads(im.model, tc.task, eval, drawn);

    nar.step(_("Looking: every layer × head"), "P = softmax(QKᵀ/√d_k + M)", "Vig 2019 (BertViz)");
    if (!train)  // the header's seed is --seed's; these models' seeds are in their files
      nar.say(_f("models: data/{} and data/{}, shipped, trained from seeds {} and {}; without --train, --seed (here "
                 "{}) changes none of this lesson's numbers, only the header", im.file, other_seed.file,
                 metadata_count(im.metadata, "seed"), metadata_count(other_seed.metadata, "seed"), tc.seed));
    if (tf) add_transformer_views(nar, *tf, corpus, example);  // the --html page only
    show_every_head(nar, im, drawn, f.circuit, tf ? norm : "");

    nar.step(_("Induction heads"), "… A B … A → B", "Elhage et al. 2021; Olsson et al. 2022");
    if (lm) f.lm_induction = lm_induction_study(lm->model, lm->valid_tokens);
    if (lm) f.lm_tokens_seen = metadata_count(lm->metadata, "train_tokens_seen");
    report_induction(nar, im, f.circuit, eval, f.lm_induction, lm ? lm->metadata : Metadata{});

    nar.step(_("Claim 1: shallow heads look near, deep far"), "Σ_j P_ij |i − j|", "Dosovitskiy et al. 2021");
    const ChapterModel bahdanau = chapter_model("01", "bahdanau", corpus, false, "", TrainConfig{});
    f.alignment = alignment_study(bahdanau.model, tf ? &*tf : nullptr, pairs, example, corpus.source_vocab,
                                  corpus.target_vocab);
    std::vector<HeadStat> lm_text;  // the LM's heads on held-out text (claim 3 counts them too)
    if (lm) lm_text = decoder_lm_text_stats(lm->model, lm->valid_tokens, kLmTextWindows, kLmTextTokens);
    f.distance = distance_claim(f.circuit.eval_stats, {eval.len}, /*causal=*/true);
    if (lm) f.lm_distance = distance_claim(lm_text, {kLmTextTokens}, true);
    if (f.alignment.cross)
      f.encoder_distance = distance_claim(f.alignment.cross->enc, f.alignment.cross->enc_lengths, false);
    report_distances(nar, f, norm, pairs.size());

    nar.step(_("Claim 2: attention learns word alignments"), "argmax_j α_ij = a(i)", "Bahdanau et al. 2014");
    report_alignment(nar, f.alignment, example, choice);

    nar.step(_("Claim 3: some heads collapse to uniform"), "H_h / log n ≥ 0.95, per head", "Clark et al. 2019");
    nar.say(_f("H_h / log n: head h's entropy over its largest value, averaged over the rows (step 3); a head is "
               "within 5% of uniform when it is ≥ {:.2f}; verdict (step 8): holds for a model when at least one of "
               "its heads is within 5% of uniform", kUniformAt));
    report_uniform(nar, _("induction model"), f.uniform = uniform_heads(im.model, eval, f.circuit.eval_stats),
                   &f.circuit.eval_stats);
    if (lm) report_uniform(nar, _("chapter 09 LM on held-out text"), *(f.lm_uniform = uniform_heads(lm_text)), nullptr);
    if (f.alignment.cross) {
      report_uniform(nar, _("chapter 08 encoder"), *(f.encoder_uniform = uniform_heads(f.alignment.cross->enc)), nullptr);
      explain_uniform_encoder(nar, *f.encoder_uniform, f.alignment);
    }
    nar.code("attn/attention/attention_stats.hpp: uniformity; attn/studies/interpretability_claims.hpp: uniform_heads");
    nar.why(_("a head with uniform weights averages everything it can see (a bag of words): it points at no token, "
              "so its weights cannot say which token mattered."));

    nar.step(_("Claim 4: perturbed weights, same output"), "TVD = ½ Σ|p − p'|", "Jain & Wallace 2019 §4.2.1");
    report_perturbation(nar, f.perturbation = perturbation_sweep(im.model, other_seed.model, eval), im, other_seed);

    nar.step(_("Claim 5: gradients beat attention"), "τ(P,LOO) vs τ(|∂L/∂x·x|,LOO)", "Jain & Wallace 2019 §4.1");
    report_importance(nar, f.importance = importance_claim(im.model, eval));

    nar.step(_("What held here"), "", _("on this course's models"));
    report_claims(nar, f);
    nar.takeaway(interpretability_takeaway(f));
  });
}
