// Chapter 02 · Luong attention — the decoder attends with its new state h_t, and the score is a
// product instead of a small network: dot h_tᵀh̄_s, general h_tᵀW_a h̄_s, concat v_cᵀtanh(W_c[h_t; h̄_s]).
// The three trained scores on one sentence; global vs local-m vs local-p windows; BLEU, exact match
// and token accuracy by length of every Luong model beside Bahdanau, each judged over every metric
// and bucket; and the source article's speed claim measured.
//   build/bin/02_luong           loads data/ch02/luong_{dot,general,concat,local_p}.safetensors + data/ch01/bahdanau
//   build/bin/02_luong --train   retrains the four Luong models (minutes; progress bar on stderr)
// Export names: h_t H W_a h_t_dot H_dot h_t_concat H_concat W_c v_c luong_dot_scores
// luong_general_scores luong_concat_scores alpha_global alpha_local_m alpha_local_p local_p_positions
// alpha_local_m_outside local_p_alignment general_alignment reference_alignment score_times
// score_sizes score_spreads score_ratio_spreads, and with --time-training (step 6: whole training steps timed)
// step_times; DIR/results.json holds the
// by-length figures of every model, DIR/translations.json the test sentences and outputs behind them.
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/present/ch02_report.hpp"
#include "attn/present/chapter_models.hpp"
#include "attn/present/cli.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  // Timing whole training steps (step 6) takes a few seconds more: only with --time-training.
  bool time_training = false;
  ChapterApp ch("02", /*default_seed=*/1, /*total_steps=*/5);
  ch.count_steps([&] { return time_training ? 6 : 5; });
  const std::vector<std::string> own = {"luong_dot", "luong_general", "luong_concat", "luong_local_p"};
  ChapterModels models(ch, own, /*checkpoint_model=*/"luong_general");
  models.add_earlier("--bahdanau", "01", "bahdanau");
  ch.app().add_flag("--time-training", time_training,
                    _("also time one training step of each model (step 6, the source article's 1.5–2× claim; a few "
                      "seconds more)"));
  ch.describe_seed(_("which 10-word test sentence steps 1-3 follow (0 or 1: the first), and the seed of --train"));
  ch.set_question(_("Question: does a cheaper score — a dot product — attend as well as Bahdanau's network, and is it faster?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const ToyCorpus& corpus = models.corpus();
    const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
    std::vector<NamedResult> results;
    std::map<std::string, ChapterModel> luong;
    for (const auto& name : own) luong.emplace(name, models.seq2seq(name, nar));
    const ChapterModel bah = models.seq2seq("bahdanau", nar);
    const Seq2Seq &dot = luong.at("luong_dot").model, &general = luong.at("luong_general").model,
                  &concat = luong.at("luong_concat").model, &lp = luong.at("luong_local_p").model;

    // ---------------------------------------------------------------- three scores, same sentence
    nar.step(_("Attend with the new state"), _("h_t = GRU([E_tgt y_{t−1}; h̃_{t−1}], h_{t−1})"),
             _("Luong et al. 2015, §3"));
    nar.say(_("from here t is the target step, s the source position and h̄_s the encoder's state there (chapter "
              "01's i, j and h_j); s_{t−1} keeps the name of Bahdanau's decoder state."));
    nar.say(_("then score(h_t, h̄_s) for every source position s. The paper's decoder is a stack of LSTMs reading "
              "one direction; here every model keeps chapter 01's bidirectional GRU encoder and a GRU decoder, so "
              "the encoder is the same in all; the attention and the way the decoder uses it differ (Luong: input "
              "feeding, a W_c layer and a smaller output layer; the table below counts each part)."));
    std::vector<const ChapterModel*> described;
    for (const auto& name : own) nar.result(describe_model(luong.at(name), /*times_explained=*/true)), described.push_back(&luong.at(name));
    report_training_records(nar, described);
    const ModelSizes sizes = model_sizes({{"bahdanau", &bah.model}, {"luong_dot", &dot}, {"luong_general", &general},
                                          {"luong_concat", &concat}, {"luong_local_p", &lp}});
    report_model_sizes(nar, sizes, general.cfg);
    nar.say(_("local-p's D: the half-width of its window, which covers 2D + 1 source words around p_t (step 3). "
              "h̃_{t−1}: the previous step's attentional state (defined below)."));
    const SentencePair& ex = pair_of_length(corpus.test, 10, nar.options().seed);
    auto trace = [&](const Seq2Seq& m) { return greedy_trace(m, sv.encode(ex.src), ex.src.size() + 10); };
    const DecodeTrace tr = trace(general);
    const std::size_t t = first_reordered_step(ex.alignment, tr.tape.steps.size());  // the step narrated
    const ScoreView gv = luong_score_view(general, tr, t);
    nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
    nar.say(_f("decoder step t = {} of the global-general model, the first word whose source is elsewhere; Bahdanau "
               "scored with s_{{t−1}}, Luong with h_t", t + 1));
    nar.show("h_t", row_of(gv.h_t, 0), {}, _("the decoder's state after its GRU step"));
    nar.show("H", gv.H, ex.src, {}, _f("encoder states h̄_s (S × {})", gv.H.shape(1)));
    nar.say(_("after attending, h̃_t = tanh(W_c[c_t; h_t]) (the attentional state, eq. 5; this W_c is the paper's output "
            "layer, not the concat score's W_c of step 2) predicts the word and is fed to the next step's input (input "
            "feeding, §3.3)."));
    nar.code("attn/models/seq2seq.hpp: seq2seq_decoder_step; attn/attention/luong_attention.hpp: luong_forward");
    nar.why(_("Luong scores with the new state h_t (Bahdanau with s_{t−1}); the attention result reaches the next "
              "step only through h̃_{t−1} in the GRU input (input feeding)."));

    nar.step(_("Three score functions"), _("dot h_tᵀh̄_s · general h_tᵀW_a h̄_s · concat v_cᵀtanh(W_c[h_t; h̄_s])"),
             _("Luong et al. 2015, §3.1, after eq. 7"));
    nar.say(_("the paper writes concat as v_aᵀtanh(W_a[h_t; h̄_s]); its matrices are named v_c, W_c here, apart from "
              "general's W_a."));
    const DecodeTrace tr_dot = trace(dot), tr_concat = trace(concat);
    const ScoreViews views{luong_score_view(dot, tr_dot, std::min(t, tr_dot.tape.steps.size() - 1)), gv,
                           luong_score_view(concat, tr_concat, std::min(t, tr_concat.tape.steps.size() - 1)),
                           &general, &concat};
    report_scores(nar, views, ex, t);
    nar.code("attn/attention/luong_attention.hpp: luong_scores_forward; attn/studies/seq2seq_study.hpp: luong_score_view");
    nar.why(_("dot and general are one matrix product per step; concat is Bahdanau's network with h_t in place of s_{t−1}."));

    nar.step(_("Global vs local windows"),
             _("local-m: p_t = t · local-p: p_t = S·sigmoid(v_pᵀtanh(W_p h_t))"), _("eq. 9–10"));
    nar.say(_("local-p then weights α by a Gaussian around p_t: α_t(s) × exp(−(s − p_t)² / (2σ²)). Here t counts "
              "from 1 and s from 0, so local-m centres on s = t − 1. Local-m below is not a trained model: it cuts "
              "the global-general model's scores to its window."));
    const std::size_t shown_d = 2;  // local-m's D here: a window visibly narrower than the sentence
    report_windows(nar, {general, tr, lp, trace(lp)}, ex, t, shown_d, tv);
    nar.code("attn/attention/luong_attention.hpp: luong_forward (LuongWindow::LocalM, LocalP)");
    nar.why(_("local attention looks at 2D + 1 words; local-m assumes monotonic order (the step above shows where "
              "that fails); local-p learns where to look, as near as the table above shows."));

    // ---------------------------------------------------------------- quality and cost, measured
    nar.step(_("BLEU by sentence length, beside Bahdanau"), _("same test split, greedy decoding"));
    for (const auto& name : own) results.emplace_back(name, evaluate_model(luong.at(name).model, corpus.test, sv, tv));
    results.emplace_back("bahdanau", evaluate_model(bah.model, corpus.test, sv, tv));
    std::vector<MatchStudy> matches;
    for (const auto& [name, r] : results)
      if (name != "bahdanau") matches.push_back(judge_match(name, r, "bahdanau", result_named(results, "bahdanau")));
    note_checkpoint_steps(matches, luong);
    report_match(nar, results, matches);
    export_results(nar, results, corpus.test);
    nar.code("attn/models/seq2seq_eval.hpp: evaluate_model; attn/studies/seq2seq_study.hpp: judge_match");
    nar.why(_f("{}; each kept its best validation step (step 1) and is one training run: no second seed is "
               "trained here, so how far a gap would move with another seed is not measured. They differ in the attention and where the decoder uses it (Luong after "
               "the GRU step, feeding h̃_t forward; Bahdanau's c_i enters the GRU).",
               shared_sizes_clause(sizes, general.cfg)));

    nar.step(_("Cost of one score function"), _("time per call: scores + softmax + context, batch B = 1"));
    const ScoreCostStudy cost = score_cost_study({{10, 128}, {30, 128}, {60, 128}, {60, 512}});
    report_score_cost(nar, cost);
    nar.code("attn/models/seq2seq_eval.hpp: time_score_rounds; attn/studies/seq2seq_study.hpp: score_ops, judge_score_cost");
    nar.why(score_cost_why(cost));

    std::optional<TrainStepStudy> steps;
    if (!time_training)
      nar.say(_("a whole training step costs more than its score function: --time-training measures it (an extra "
                "step 6) and checks the source article's claim that Luong trains 1.5–2× faster."));
    if (time_training) {
      nar.step(_("Cost of one training step"), _("forward + backward + Adam, batch 64, source length 30"));
      const std::size_t step_len = 30;  // a source length step 5 also times
      steps = train_step_study({"bahdanau", "luong_dot", "luong_general", "luong_concat", "luong_local_p"}, sv.size(),
                               tv.size(), /*batch=*/64, step_len, /*reps=*/5);
      report_train_steps(nar, *steps, judge_step_gain(cost, *steps, step_len),
                         config_for("bahdanau", sv.size(), tv.size()));
      nar.code("attn/models/seq2seq_eval.hpp: time_training_steps; attn/studies/seq2seq_study.hpp: judge_train_steps, "
               "judge_step_gain");
      nar.why(train_step_why(sizes));
    }
    nar.takeaway(ch02_takeaway(matches, cost, steps ? &*steps : nullptr));
  });
}
