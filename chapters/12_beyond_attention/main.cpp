// Chapter 12 · Beyond softmax attention — a selective state-space layer (Mamba-2 form) computed as
// a scan, as a masked attention and in chunks; linear attention, decay and the delta rule side by
// side; the recall wall on MQAR with small 2-layer models; what one generated token costs.
//   build/bin/12_beyond_attention                 the lesson from the shipped models (under 10 s)
//   build/bin/12_beyond_attention --train         retrain the 15 MQAR models; rewrites data/ch12/
//   build/bin/12_beyond_attention --export out    every shown tensor + results.json
// Export names: ssd_x ssd_b ssd_c ssd_a ssd_mask ssd_y_scan ssd_y_quadratic ssd_y_chunked
// ssd_y_reference family_q family_k family_v family_softmax family_linear family_decay family_delta
// mqar_accuracy (archs × widths × pairs) mqar_state_bytes; manifest "mqar" holds the axes.
#include <filesystem>

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/present/beyond_report.hpp"
#include "attn/present/cli.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("12", /*default_seed=*/12, /*total_steps=*/7);
  bool train = false;
  RecallTrainConfig tc = recall_shipped_recipe();  // what --train runs; the options below change it
  std::vector<std::string> only;
  CLI::Option* train_flag =
      ch.app().add_flag("--train", train, _("retrain the 15 MQAR models (one thread); rewrites data/ch12/"));
  ch.app().add_option("--train-only", only, _("with --train, only these models (attention window linear ssm "
                                              "hybrid)"))
      ->check(CLI::IsMember({"attention", "window", "linear", "ssm", "hybrid"}))->needs(train_flag);
  ch.app().add_option("--train-steps", tc.max_steps, _("most Adam steps per model with --train"))
      ->capture_default_str()->check(CLI::Range(1, 100000))->needs(train_flag);
  ch.app().add_option("--train-ssm-steps", tc.ssm_max_steps, _("most Adam steps of each SSM model with --train"))
      ->capture_default_str()->check(CLI::Range(1, 100000))->needs(train_flag);
  ch.app().add_option("--train-lr", tc.lr, _("peak learning rate with --train"))
      ->capture_default_str()->check(finite_range(1e-5, 1.0))->needs(train_flag);
  ch.describe_seed(_("the random inputs of step 2's agreement check, and the initial weights and batches of "
                     "--train"));
  ch.set_question(_("Question: can a fixed-size state do what attention does — and where does it fail?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    ScopedBlasThreads one_thread(1);  // timings and training on one core, as the README records them
    // ------------------------------------------------------------------ 1. the recurrence
    nar.step(_("A selective state-space model (SSM)"),
             "h_t = a_t·h_{t−1} + B_t x_tᵀ,  y_t = C_tᵀ h_t", "Dao & Gu 2024, §3");
    nar.say(_("Mamba (Gu & Dao 2023) made a state-space layer's decay and input depend on the token; Mamba-2 "
              "(Dao & Gu 2024) gave each head one scalar decay, the form used here."));
    const SsdExample ex = ssd_tiny_example();
    show_ssd_example(nar, ex);
    nar.code("attn/attention/ssd.hpp: ssd_scan, ssd_scan_step");
    nar.why(_("the state h is N × P whatever the length: the whole past squeezed into a fixed matrix; a_t < 1 "
              "forgets, and B_t, C_t, a_t depend on the token (\"selective\")."));

    // ------------------------------------------------------------------ 2. the same map as masked attention
    nar.step(_("The same map as a masked attention, and in chunks"), "Y = (L ∘ C Bᵀ) X,  L_ts = a_{s+1}…a_t",
             "Dao & Gu 2024, §4-§6");
    show_ssd_forms(nar, ex);
    const SsdAgreement agreement = ssd_agreement(nar.options().seed);
    report_ssd_agreement(nar, agreement);
    nar.code("attn/attention/ssd.hpp: ssd_decay_mask, ssd_quadratic, ssd_chunked, ssd_reference");
    nar.why(_("C plays the queries, B the keys, X the values and L replaces the softmax: a state-space model is "
              "a masked linear attention (the state-space duality)."));

    // ------------------------------------------------------------------ 3. which form is fastest here
    nar.step(_("Which form is fastest here"),
             _("scan O(T·N·P), quadratic O(T²·(N+P)), chunked: linear in T"),
             _("Dao & Gu 2024, abstract: Mamba-2's core layer 2-8× faster than Mamba's selective SSM"));
    const SsdTiming timing = ssd_timing({64, 128, 256, 512, 1024}, 64, 64, 64);
    report_ssd_timing(nar, timing);
    nar.why(_("chunks turn most of the per-token rank-1 updates (each B_t x_tᵀ of step 1) into matrix products, "
              "which the GPU's matrix units run fastest; the table shows what the same rearrangement buys on this "
              "CPU."));

    // ------------------------------------------------------------------ 4. the family
    nar.step(_("The family: what each state forgets"), "S_t = f(S_{t−1}, k_t, v_t),  y_t = S_tᵀ q_t",
             _("linear: Katharopoulos et al. 2020; decay: Dao & Gu 2024; delta: Schlag et al. 2021 (the rule), Yang et "
               "al. 2024 (its chunked training)"));
    const FamilyDemo fam = family_demo();
    nar.record("family_q", fam.q);
    report_family(nar, fam);
    nar.code("attn/attention/linear_attention.hpp, attn/attention/ssd.hpp: ssd_scan, delta_rule_scan");
    nar.why(_("softmax keeps every key and value; the others keep a fixed matrix and differ only in how a new "
              "write treats the old ones: add, decay, or replace."));

    // ------------------------------------------------------------------ 5. the recall task
    nar.step(_("The recall task: multi-query associative recall (MQAR)"), "k₀ v₀ k₁ v₁ … k_σ(0) k_σ(1) …",
             "Arora et al. 2023 (Zoology), Fig. 2");
    const RecallSuite suite;
    show_mqar_task(nar, RecallModelConfig{}.vocab);
    if (train) {
      const std::string dir = data_dir() + "/ch12";
      std::filesystem::create_directories(dir);
      tc.seed = nar.options().seed;
      std::vector<RecallArch> archs;
      for (const std::string& id : only) archs.push_back(parse_recall_arch(id));
      double total = 0;
      const auto trained = train_recall_suite(suite, tc, dir, [&](const RecallTrained& r) {
        total += r.report.seconds;
        nar.result(_f("trained {} d = {}: {} steps in {:.1f} s{}", recall_arch_id(r.arch), r.d_model, r.report.steps,
                      r.report.seconds, r.report.stopped_early ? _(" (stopped early: every n ≥ 0.99)") : ""));
      }, archs);
      nar.result(_f("{} models trained in {:.0f} s on one thread", trained.size(), total));
    }
    const RecallTable table = evaluate_recall_suite(suite, train ? data_dir() + "/ch12" : "");
    show_mqar_recipe(nar, train ? tc : recall_shipped_recipe(), train, table, RecallModelConfig{});
    const RecallCurve ssm_curve = recall_curve_of(RecallArch::ssm, 16, train ? data_dir() + "/ch12" : "");
    report_recall_curve(nar, RecallArch::ssm, 16, ssm_curve, RecallModelConfig{}.vocab / 2,
                        (train ? tc : recall_shipped_recipe()).max_steps);
    nar.code("attn/data/mqar.hpp, attn/models/recall_model.hpp, attn/studies/recall.hpp: train_recall_model");
    nar.why(_("every pair must be held until its query arrives: attention looks it up in the KV cache, a "
              "recurrent model must have kept it in its state."));

    // ------------------------------------------------------------------ 6. the recall wall
    nar.step(_("The recall wall: accuracy vs state bytes"), _("per layer: KV cache 2·T·d, or state H·N·P"),
             _("Arora et al. 2024 (Based): the recall–state-size tradeoff"));
    const RecallVerdicts verdicts = judge_recall(table);
    report_recall(nar, table, verdicts, RecallModelConfig{},
                  train ? _f("this run's training (seed {})", tc.seed)
                        : _("the shipped checkpoints (data/ch12/), trained by --train with seed 12"));
    export_recall(nar, table, verdicts);
    nar.why(_("Zoology reports attention near 1.0 at every width while recurrent models fall as the pairs "
              "outgrow their state; a hybrid keeps one attention layer for the lookup."));

    // ------------------------------------------------------------------ 7. one generated token
    nar.step(_("What one generated token costs"), _("per token: attention O(d² + T·d), SSM O(d² + d·N)"),
             "Lieber et al. 2024; De et al. 2024");
    const DecodeCost cost = decode_cost({256, 1024, 4096, 16384}, 256, 4, 64);
    report_decode_cost(nar, cost);
    nar.say(_("production hybrids: Jamba interleaves 1 attention layer per 7 Mamba layers and needs 4 GB of KV cache "
              "at 256K tokens, against 32 GB for Mixtral (Lieber et al. 2024, Table 1); Griffin repeats two "
              "recurrent blocks and one local-attention block (De et al. 2024, §2)."));
    nar.why(_("the KV cache grows with every token, the state does not: a few attention layers keep the lookup, "
              "the recurrent layers keep the cost flat."));

    nar.takeaway({ssd_takeaway(agreement, timing), recall_takeaway(table, verdicts), decode_cost_takeaway(cost)});
  });
}
