// Chapter 08 · The Transformer — every piece of chapters 03–05 assembled into the encoder–decoder
// of Vaswani et al. 2017, trained on the toy translation corpus of chapters 00–02 and measured
// beside the RNN models: the block diagram, attention maps of one sentence, the causal mask,
// decoder layer 0 in full, the training curves, BLEU by length (greedy, beam search, Post- and
// Pre-Norm, training vs test), the FFN gradients at initialisation (Xiong et al. 2020), costs.
//   build/bin/08_transformer                 loads data/ch08/transformer_post.safetensors (seconds)
//   build/bin/08_transformer --norm pre      narrates the Pre-Norm model instead
//   build/bin/08_transformer --train         retrains the --norm model (minutes; --threads 2 uses both cores)
//   build/bin/08_transformer --norm-study    adds the short warm-up runs of Step 8 (minutes)
// Export names: enc_self_weights dec_self_weights cross_weights (tokens in the manifest)
// example_alignment memory dec0_input dec0_output dec0_{self,cross}_{W,b}_{Q,K,V,O}
// dec0_ffn_{W1,b1,W2,b2} dec0_ln{1,2,3}_{gamma,beta} causal_mask dec_self_L0_H0_drawn; manifest
// "config" and "regenerate"; DIR/results.json holds every printed figure and verdict, and
// DIR/translations.json the sentences behind each BLEU (tests/check_ch08_export.py recomputes them).
// Each step: a study of attn/studies/transformer_claims.hpp measures and judges, a report of
// attn/present/transformer_report.hpp prints.
#include "attn/data/data_files.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/transformer_report.hpp"
#include "attn/studies/peak_flops.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("08", /*default_seed=*/1, /*total_steps=*/9);
  bool train = false, norm_study = false;
  std::string checkpoint, norm = "post";
  int threads = 1;
  TransformerModelConfig cfg;
  TransformerTrainConfig tc;
  ch.app().add_flag("--train", train, _("train the --norm model from scratch (saves to --checkpoint or data/ch08/)"));
  ch.app().add_option("--checkpoint", checkpoint, _("load (or with --train, write) the Transformer here"))
      ->type_name("PATH");
  ch.app().add_option("--norm", norm, _("which model to narrate (and train): post (the paper) or pre"))
      ->capture_default_str()->check(CLI::IsMember({"post", "pre"}));
  ch.app().add_option("--steps", tc.steps, _("training steps with --train"))->capture_default_str()->check(CLI::Range(1, 100000));
  ch.app().add_option("--warmup", tc.warmup, _("warm-up steps with --train"))->capture_default_str()->check(CLI::Range(1, 100000));
  ch.app().add_option("--lr-factor", tc.lr_factor, _("scale of the learning-rate schedule with --train"))
      ->capture_default_str()->check(finite_range(0.01, 10.0));
  ch.app().add_option("--threads", threads, _("OpenBLAS threads for --train and the step timing"))
      ->capture_default_str()->check(CLI::Range(1, 2));
  ch.app().add_flag("--norm-study", norm_study, _("also run the short warm-up study of step 8 (minutes)"));
  ch.set_question(_("Question: what does attention alone — no recurrence — do on the translation task of chapters 00–02?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    tc.seed = nar.options().seed;
    cfg.norm = norm_from_name(norm);
    const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
    const Vocab& tv = corpus.target_vocab;
    const std::string ckpt = !checkpoint.empty() ? checkpoint
                             : train              ? trained_checkpoint("08", transformer_model_name(norm))
                                                  : shipped_checkpoint("08", transformer_model_name(norm));
    const ChapterTransformer ct = [&] {
      const ScopedBlasThreads training_threads(threads);
      return chapter_transformer(corpus, train, ckpt, cfg, tc, threads, !nar.quiet());
    }();
    const SingleThreadBlas one_thread;  // decoding works on a few rows at a time: one thread is faster
    const Transformer& m = ct.model;
    TransformerFindings f;  // what steps 7–9 and the takeaway sum up
    f.norm = norm;
    f.threads = std::size_t(threads);
    f.layers = m.cfg.enc_layers;

    nar.step(_("The model"), _("x = E[w]·√d_model + PE;  N × encoder layer;  N × decoder layer"), "Vaswani et al. 2017, §3");
    report_model(nar, ct, f.parts = parameter_parts(m), corpus);

    const SentencePair& ex = lesson_example(corpus.test);
    const ExampleRun run = run_example(m, ex, corpus.source_vocab);
    nar.step(_("Encoder self-attention"), _("A = softmax(Q·Kᵀ/√d_k),  Q, K from the source words"));
    report_encoder(nar, ex, run, f.sharpness = encoder_sharpness(run.att.enc_self), tv);

    nar.step(_("The decoder's causal mask"), _("M_ij = 0 if j ≤ i, −∞ if j > i;  softmax(Q·Kᵀ/√d_k + M)"));
    report_decoder_mask(nar, run, f.causal = decoder_mask_check(run.att.dec_self), tv);

    nar.step(_("Cross-attention"), _("A = softmax(Q_dec·K_encᵀ/√d_k) (T × S), then A·V_enc"), "Vaswani et al. 2017, §3.2.3");
    f.cross = cross_head_alignment(run.att.cross, ex.alignment);
    f.cross_test = cross_head_alignment(m, corpus.test, corpus.source_vocab, tv);
    report_cross(nar, ex, run, f.cross, f.cross_test, f.cross_test_pairs = corpus.test.size(), tv);

    nar.step(_("Decoder layer 0 in full"), "x → h1 → h2 → y",
             norm == "pre" ? "Xiong et al. 2020, Fig. 1 (Pre-LN)" : "Vaswani et al. 2017, §3.1");
    report_decoder_layer(nar, m, ex, run, tv);

    nar.step(_("Training"), training_formula(), "Vaswani et al. 2017, §5.3–5.4");
    f.training = training_summary(ct.metadata, ct.curves, corpus.train.size(), m.cfg.d_model, m.cfg.tgt_vocab);
    const auto start_seed = std::uint64_t(metadata_number(ct.metadata, "seed"));
    explain_first_loss(f.training, initial_predictions(m.cfg, corpus, 32, start_seed), start_seed, 32);
    report_training(nar, ct, f.training);

    nar.step(_("BLEU by length, beside chapters 00–02"), _("greedy; beam 4, lp = ((5+|Y|)/6)^0.6"),
             "Wu et al. 2016, eq. 14");
    f.evals = evaluate_translators(nar, m, corpus, norm);
    f.translation = translation_findings(f.evals, norm, m, corpus, ct.metadata, ct.curves);
    report_results(nar, f, corpus);

    nar.step(_("Post-Norm vs Pre-Norm at initialisation"), _("‖∂L/∂W2‖ of each layer's FFN"),
             "Xiong et al. 2020, §3.3–3.4, Fig. 3");
    f.norms = norm_placement_study(m.cfg, corpus);
    if (norm_study) f.warmup = warmup_findings(warmup_study(m.cfg, corpus, {}), WarmupStudyConfig{}.steps);
    report_norm_placement(nar, f, m.cfg);

    nar.step(_("What it costs"), _("encoder layer: 4·2·T·d² + 2·2·T²·d + 2·2·T·d·d_ff"));
    f.cost = cost_study(m);
    double load_now = 0.0;
    {
      const ScopedBlasThreads timing_threads(threads);
      f.step = time_transformer_step(m.cfg, corpus, 64, 30, 7);
      load_now = load_average();
    }
    f.time = account_training_time(metadata_number(ct.metadata, "train_seconds"), f.training.steps,
                                   ct.curves.valid_step.size(), f.step,
                                   eval_named(f.evals, transformer_model_name(norm) + "_greedy").cpu_seconds, corpus,
                                   ct.trained || !checkpoint.empty() ? 0.0 : retrained_alone_seconds(norm), load_now);
    if (const auto peer_file = find_data_file("ch08/pytorch_step_time.json")) f.peer = read_peer_step_time(*peer_file);
    report_costs(nar, f);
    export_results(nar, f, corpus);

    nar.takeaway(transformer_takeaway(f));
  });
}
