// Chapter 02 · Luong attention — the decoder attends with its new state h_t, and the score is a
// product instead of a small network: dot h_tᵀh̄_s, general h_tᵀW_a h̄_s, concat v_cᵀtanh(W_c[h_t; h̄_s]).
// The three scores on the same states; global vs local-m vs local-p windows; BLEU by length of
// global-dot, global-general and local-p beside Bahdanau; and the articles' speed claim measured.
//   build/bin/02_luong                 loads data/ch02/luong_{dot,general,local_p}.safetensors + data/ch01/bahdanau
//   build/bin/02_luong --train         retrains the three Luong models (minutes; progress bar on stderr)
// Export names: h_t H W_a W_c v_c luong_dot_scores luong_general_scores luong_concat_scores
// alpha_global alpha_local_m alpha_local_p local_p_positions local_p_alignment score_times, and with
// --time-training (step 6: whole training steps timed) step_times;
// DIR/results.json holds the by-length figures of luong_dot, luong_general, luong_local_p, bahdanau.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/attention/alignment.hpp"
#include "attn/present/chapter_models.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
Vec row0(const Mat& m) { return row_of(m, 0); }
std::string us(double s) { return fmt::format("{:.1f}", s * 1e6); }
}  // namespace

int main(int argc, char** argv) {
  // Timing whole training steps (step 6) takes a few seconds more: only with --time-training.
  bool time_training = false;
  for (int i = 1; i < argc; ++i) time_training = time_training || std::string(argv[i]) == "--time-training";
  ChapterApp ch("02", /*default_seed=*/1, /*total_steps=*/time_training ? 6 : 5);
  ChapterModels models(ch, {"luong_dot", "luong_general", "luong_local_p"}, /*checkpoint_model=*/"luong_general");
  models.add_earlier("--bahdanau", "01", "bahdanau");
  ch.app().add_flag("--time-training", time_training,
                    _("also time one training step of each model (step 6, the articles' 1.5–2× claim; a few seconds more)"));
  ch.app().get_option("--seed")->description(_("which 10-word test sentence steps 1-3 follow (1: the first), the untrained "
                                              "concat weights, and the seed of --train"));
  ch.set_question(_("Question: does a cheaper score — a dot product — attend as well as Bahdanau's network, and is it faster?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const ToyCorpus& corpus = models.corpus();
    const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
    std::vector<ChapterModel> luong;
    for (const char* name : {"luong_dot", "luong_general", "luong_local_p"}) luong.push_back(models.seq2seq(name, nar));
    const ChapterModel bah = models.seq2seq("bahdanau", nar);
    const Seq2Seq &general = luong[1].model, &lp = luong[2].model;  // in the order loaded above

    // ---------------------------------------------------------------- three scores, same states
    nar.step(_("Attend with the new state"), _("h_t = GRU([E y_{t−1}; h̃_{t−1}], h_{t−1}),  then score(h_t, h̄_s)"),
             _("Luong et al. 2015, §3"));
    for (const auto& cm : luong) nar.result(describe_model(cm));
    const SentencePair& ex = pair_of_length(corpus.test, 10, nar.options().seed);
    const DecodeTrace tr = greedy_trace(general, sv.encode(ex.src), ex.src.size() + 10);
    const DecodeTrace& general_trace = tr;
    const std::size_t t = std::min<std::size_t>(3, tr.tape.steps.size() - 1);  // the 4th output word
    const Mat H = slice_of(tr.tape.enc, 0);
    const Mat h_t = tr.tape.steps[t].s;  // (1, Hd)
    nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
    nar.say(_f("decoder step t = {} of the global-general model; Bahdanau scored with s_(t−1), Luong with h_t", t + 1));
    nar.show("h_t", row0(h_t), {}, _f("the decoder's state after its GRU step ({})", h_t.shape(1)));
    nar.show("H", H, ex.src, {}, _f("encoder states h̄_s (S × {})", H.shape(1)));
    nar.say(_("after attending, h̃_t = tanh(W_c[c_t; h_t]) (the attentional state, eq. 5) predicts the word and is fed to "
            "the next step's input (input feeding, §3.3)."));
    nar.code("attn/models/seq2seq.hpp: seq2seq_decoder_step; attn/attention/luong_attention.hpp: luong_forward");
    nar.why(_("attending after the RNN step means the attention is not inside the recurrence's input — it feeds h̃_t forward instead."));

    nar.step(_("Three score functions"), _("dot h_tᵀh̄_s · general h_tᵀW_a h̄_s · concat v_cᵀtanh(W_c[h_t; h̄_s])"), "eq. 8");
    Rng rng(nar.options().seed);
    LuongConfig cc{LuongScore::Concat, LuongWindow::Global, 5};
    const Luong concat = luong_init(cc, general.cfg.dec_hidden, H.shape(1), general.cfg.attn, rng);  // untrained
    const Tensor3 enc = tr.tape.enc;
    LuongStepT<float> sd, sg, sc;
    Mat dot_s, gen_s, cat_s;
    luong_scores_forward(dot_s, sd, h_t, enc, general.luong().attention, LuongScore::Dot);
    luong_scores_forward(gen_s, sg, h_t, enc, general.luong().attention, LuongScore::General);
    luong_scores_forward(cat_s, sc, h_t, enc, concat, LuongScore::Concat);
    nar.record("W_a", general.luong().attention.w_a);
    nar.record("W_c", concat.w_c);
    nar.record("v_c", concat.v_c);
    nar.show("luong_dot_scores", row0(dot_s), ex.src, _("h_tᵀh̄_s: no parameters (needs equal sizes)"));
    const Mat& w_a = general.luong().attention.w_a;
    nar.show("luong_general_scores", row0(gen_s), ex.src,
             _f("h_tᵀW_a h̄_s with the trained W_a ({}×{})", w_a.shape(0), w_a.shape(1)));
    nar.show("luong_concat_scores", row0(cat_s), ex.src,
             _f("v_cᵀtanh(W_c[h_t; h̄_s]), W_c ({}×{}) freshly initialised (seed)", concat.w_c.shape(0), concat.w_c.shape(1)));
    nar.say(_("dot scores this general model's states without its W_a: the two need not agree — the model was trained with W_a."));
    nar.say(_("concat is shown with random weights only: no concat model is trained in this chapter, so its scores mean "
            "nothing yet; the BLEU table below has dot, general and local-p."));
    nar.code("attn/attention/luong_attention.hpp: luong_scores_forward");
    nar.why(_("dot and general are one matrix product per step; concat is Bahdanau's network with h_t in place of s_{t−1}."));

    nar.step(_("Global vs local windows"), _("local-m: p_t = t · local-p: p_t = S·σ(v_pᵀtanh(W_p h_t)), α × exp(−(s−p_t)²/2σ²)"), "eq. 9–10");
    LuongStepT<float> glob, locm;
    Mat ctx;
    luong_forward(ctx, glob, h_t, enc, general.luong().attention, LuongConfig{LuongScore::General, LuongWindow::Global, 5}, t);
    luong_forward(ctx, locm, h_t, enc, general.luong().attention, LuongConfig{LuongScore::General, LuongWindow::LocalM, 2}, t);
    nar.show("alpha_global", row0(glob.alpha), ex.src, _("softmax over every source word"));
    nar.show("alpha_local_m", row0(locm.alpha), ex.src, _f("same scores, window |s − {}| ≤ 2 (p_t = t; 0-based)", t));
    const DecodeTrace tp = greedy_trace(lp, sv.encode(ex.src), ex.src.size() + 10);
    const std::size_t tl = std::min(t, tp.tape.steps.size() - 1);
    nar.show("alpha_local_p", row0(tp.tape.steps[tl].luong.alpha), ex.src,
             _f("the local-p model at step {}: p_t = {:.2f}, D = {}, σ = D/2", tl + 1,
                         double(tp.tape.steps[tl].luong.p(0)), lp.cfg.luong.half_width));
    Mat positions = Mat::from_shape({tp.tape.steps.size(), std::size_t(2)});
    Labels lp_out;
    for (std::size_t r = 0; r < tp.tape.steps.size(); ++r) {
      positions(r, 0) = tp.tape.steps[r].luong.p(0);
      positions(r, 1) = r < ex.alignment.size() ? float(ex.alignment[r]) : float(ex.src.size());
      lp_out.push_back(r < tp.ids.size() ? tv.token(tp.ids[r]) : "<eos>");
    }
    nar.show("local_p_positions", positions, lp_out, {"p_t", _("true s")}, _("predicted centre vs the source word translated (0-based)"));
    nar.heatmap("local_p_alignment", tp.alignment, lp_out, ex.src, _("the local-p model's α (rows: output words)"), {0.0, 1.0});
    // output words whose largest α is on the word they translate
    const AlignmentScore hits_lp = alignment_hits(tp.alignment, ex.alignment);
    const AlignmentScore hits_general = alignment_hits(general_trace.alignment, ex.alignment);
    nar.result(_f("largest α on the word being translated: local-p {} of {}, global general {} of {} output words",
                  hits_lp.hits, hits_lp.total, hits_general.hits, hits_general.total));
    nar.say(_f("D: local-m is shown with D = 2 (5 of the {} words) so its window is visibly narrower than the "
                        "sentence, on the general model's scores — not a trained local-m model; the local-p model was "
                        "trained with D = {} (the paper's D = 10 would cover a whole 10-word sentence).",
                        ex.src.size(), lp.cfg.luong.half_width));
    nar.code("attn/attention/luong_attention.hpp: luong_forward (LuongWindow::LocalM, LocalP)");
    nar.why(_("local attention looks at 2D + 1 words; local-m assumes monotonic order, local-p learns where to look — "
            "which the reorderings here require."));

    // ---------------------------------------------------------------- quality and cost, measured
    nar.step(_("BLEU by sentence length, beside Bahdanau"), _("same test split, greedy decoding"));
    std::vector<NamedResult> results;
    for (const auto& cm : luong) results.emplace_back(model_name(cm.model.cfg), evaluate_model(cm.model, corpus.test, sv, tv));
    results.emplace_back("bahdanau", evaluate_model(bah.model, corpus.test, sv, tv));
    nar.table(length_table(results), /*as_result=*/true);
    nar.block(bleu_chart(results));
    const EvalResult &r_general = result_named(results, "luong_general"), &r_bahdanau = result_named(results, "bahdanau");
    double worst_gap = 0;
    for (std::size_t b = 0; b < r_general.buckets.size(); ++b)
      worst_gap = std::max(worst_gap, std::abs(r_general.buckets[b].bleu - r_bahdanau.buckets[b].bleu));
    nar.result(_f("global-general vs Bahdanau: largest gap in any bucket {:.1f} BLEU", worst_gap));
    nar.export_file("results.json", results_json(results));  // written with the tensors by --export
    nar.code("attn/models/seq2seq_eval.hpp: evaluate_model");
    nar.why(_("all four models share the encoder, sizes, data, steps and seed; only the attention differs."));

    nar.step(_("Cost of one score function"), _("time per call: scores + softmax + context, B = 1"));
    Table st({"S", "hidden", _("Bahdanau µs"), _("dot µs"), "×", _("general µs"), "×", _("concat µs"), "×"});
    const std::vector<std::pair<std::size_t, std::size_t>> sizes = {{10, 128}, {30, 128}, {60, 128}, {60, 512}};
    Mat score_times = Mat::from_shape({sizes.size(), std::size_t(4)});
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const auto [s, hdim] = sizes[k];
      const std::size_t reps = hdim > 256 ? 40 : 150;
      double tm[4];
      const char* kinds[] = {"bahdanau", "dot", "general", "concat"};
      for (int q = 0; q < 4; ++q) score_times(k, std::size_t(q)) = float(tm[q] = time_score_function(kinds[q], s, hdim, hdim / 2, reps));
      st.add({std::to_string(s), std::to_string(hdim), us(tm[0]), us(tm[1]), fmt::format("{:.2f}", tm[0] / tm[1]), us(tm[2]),
              fmt::format("{:.2f}", tm[0] / tm[2]), us(tm[3]), fmt::format("{:.2f}", tm[0] / tm[3])});
    }
    nar.table(st, /*as_result=*/true);
    nar.record("score_times", score_times);
    nar.say(_("× = Bahdanau's time / this one's (above 1: faster than Bahdanau). A = hidden/2; Bahdanau's U_a·h̄_s is "
            "precomputed once per sentence, concat's h̄_s part of W_c is recomputed at every call (as luong_forward does); "
            "median of 7 rounds of 40–150 calls; 1 OpenBLAS thread."));
    auto dot_gain = [&](std::size_t k) { return double(score_times(k, 0)) / double(score_times(k, 1)); };
    nar.result(_f("dot vs Bahdanau: {:.2f}× at S = 10, {:.2f}× at S = 60 (hidden 128); {:.2f}× at hidden 512 (S = 60)",
                  dot_gain(0), dot_gain(2), dot_gain(3)));
    nar.code("attn/models/seq2seq_eval.hpp: time_score_function");
    const double trend = dot_gain(2) / dot_gain(0);
    nar.why(_f("per call Bahdanau pays W_a·s_(t−1) (hidden·A multiply-adds, whatever S) and a tanh on S·A numbers; dot "
               "pays S·hidden multiply-adds: both grow with S from different starting points, so the ratio may move "
               "either way — here it {} from S = 10 to S = 60.",
               trend > 1.1 ? _("rose") : trend < 1.0 / 1.1 ? _("fell") : _("barely moved")));

    if (!time_training)
      nar.say(_("a whole training step costs more than its score function: --time-training measures it (step 6) and "
                "checks the articles' claim that Luong trains 1.5–2× faster."));
    double speedup = 0;
    if (time_training) {
      nar.step(_("Cost of one training step"), _("forward + backward + Adam, batch 64, source length 30"));
      Table tt({_("model"), _("ms / step"), _("Bahdanau ÷ this")});
      std::vector<std::string> timed = {"bahdanau", "luong_dot", "luong_general", "luong_local_p"};
      Vec step_times = Vec::from_shape({timed.size()});
      std::vector<Seq2SeqConfig> timed_cfgs;
      for (const auto& name : timed) timed_cfgs.push_back(config_for(name, sv.size(), tv.size()));
      std::vector<double> ms = time_training_steps(timed_cfgs, 64, 30, 5);
      for (double& x : ms) x *= 1e3;
      for (std::size_t k = 0; k < timed.size(); ++k) {
        step_times(k) = float(ms[k]);
        tt.add({timed[k], fmt::format("{:.1f}", ms[k]), fmt::format("{:.2f}", ms[0] / ms[k])});
      }
      nar.table(tt, /*as_result=*/true);
      nar.record("step_times", step_times);
      speedup = std::round(100.0 * ms[0] / ms[2]) / 100.0;  // as printed, so the verdict matches the figure
      const char* verdict = speedup >= 2.0   ? _("held (at or beyond its upper end)")
                            : speedup >= 1.6 ? _("held")
                            : speedup >= 1.5 ? _("held, at its lower end")
                            : speedup >= 1.4 ? _("did not hold (just short of 1.5×)")
                                             : _("did not hold");
      nar.result(_f("articles: \"Luong trains 1.5–2× faster than Bahdanau\" (no published measurement). Here: "
                             "global-general runs {:.2f}× Bahdanau's speed per training step, global-dot {:.2f}× — in this run "
                             "the claim {}.", speedup, ms[0] / ms[1], verdict));
      nar.say(_("repeated runs on this shared 2-core machine move these ratios by a few hundredths; dot and general "
              "alone are several times faster per call (previous step), the whole step much less so."));
      const Seq2SeqConfig& sz = timed_cfgs.front();
      nar.say(_f("conditions: this CPU, 1 OpenBLAS thread, median of 5 steps per model after a warm-up, the models "
                 "interleaved step by step, the chapter's model sizes (E {}, encoder 2×{}, decoder {}, A {}), other "
                 "programs possibly running at the same time.", sz.emb, sz.enc_hidden, sz.dec_hidden, sz.attn));
      nar.code("attn/models/seq2seq_eval.hpp: time_training_steps");
      nar.why(_("the GRUs, the output layer and every backward pass cost the same in both models, so a training step gains "
              "less than the score function alone."));
    }

    nar.takeaway({
        _f("Luong's global-general attention {} Bahdanau here: largest gap {:.1f} BLEU over the six length buckets.",
                    worst_gap <= 3.0 ? _("matches") : _("does not match"), worst_gap),
        time_training
            ? _f("Dot/general scores are cheaper per call (table above), but a whole training step is {:.2f}× Bahdanau's speed.", speedup)
            : _f("Dot/general scores are cheaper per call: {:.2f}× Bahdanau's speed for dot at S = 60 (step 5); "
                 "--time-training times whole training steps.", dot_gain(2)),
        _("Local-p predicts where to look (p_t) and reads only a Gaussian window around it; local-m's p_t = t ignores reordering."),
    });
  });
}
