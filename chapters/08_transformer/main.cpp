// Chapter 08 · The Transformer — every piece of chapters 03–05 assembled into the encoder–decoder
// of Vaswani et al. 2017, trained on the toy translation corpus of chapters 00–02 and measured
// beside the RNN models: attention maps of one sentence, the causal mask, decoder layer 0 in full,
// the training curves, BLEU by length (greedy and beam search), Post-Norm vs Pre-Norm, costs.
//   build/bin/08_transformer                 loads data/ch08/transformer_post.safetensors (seconds)
//   build/bin/08_transformer --norm pre      narrates the Pre-Norm model instead
//   build/bin/08_transformer --train         retrains the --norm model (minutes; --threads 2 uses both cores)
//   build/bin/08_transformer --norm-study    adds the short warm-up runs of Step 8 (minutes)
// Export names: enc_self_weights dec_self_weights cross_weights memory dec0_input dec0_output
// dec0_{self,cross}_{W,b}_{Q,K,V,O} dec0_ffn_{W1,b1,W2,b2} dec0_ln{1,2,3}_{gamma,beta} causal_mask;
// manifest "config"; DIR/results.json holds the table's figures, parameters and train_ms_per_step.
#include <algorithm>
#include <future>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "attn/data/data_files.hpp"
#include "attn/models/transformer_decode.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/sparkline.hpp"
#include "attn/present/transformer_report.hpp"
#include "attn/studies/transformer_cost.hpp"
#include "attn/studies/transformer_study.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
Labels words_of(const Vocab& v, const std::vector<int>& ids, bool eos) {
  Labels w;
  for (int id : ids) w.push_back(v.token(id));
  if (eos) w.push_back("<eos>");
  return w;
}
Mat slice2(const Tensor4& t, std::size_t a, std::size_t b) { return Mat(xt::view(t, a, b)); }
std::string millions(double x) { return x >= 1e6 ? fmt::format("{:.1f}M", x / 1e6) : fmt::format("{:.0f}K", x / 1e3); }
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("08", /*default_seed=*/1, /*total_steps=*/9);
  bool train = false, norm_study = false;
  std::string checkpoint, norm = "post";
  int threads = 1;
  TransformerModelConfig cfg;
  TransformerTrainConfig tc;
  ch.app().add_flag("--train", train, _("train the --norm model from scratch (saves to --checkpoint or data/ch08/)"));
  ch.app().add_option("--checkpoint", checkpoint, _("load (or with --train, write) the Transformer here"));
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
    const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
    set_blas_threads(threads);
    const std::string ckpt = !checkpoint.empty() ? checkpoint : shipped_checkpoint("08", "transformer_" + norm);
    const ChapterTransformer ct = chapter_transformer(corpus, train, ckpt, cfg, tc, threads, !nar.quiet());
    const Transformer& m = ct.model;
    const TransformerModelConfig& mc = m.cfg;
    auto meta = [&](const char* k) { return ct.metadata.count(k) ? ct.metadata.at(k) : std::string("?"); };
    set_blas_threads(1);  // decoding works on a few rows at a time: one thread is faster

    // ---------------------------------------------------------------- 1. the model
    nar.step(_("The model"), "x = E[w]·√d + PE;  N × [self-attn, FFN];  N × [causal self-attn, cross-attn, FFN]",
             "Vaswani et al. 2017, §3");
    Table parts({_("part"), _("parameters")});
    std::size_t emb = 0, enc = 0, dec = 0, rest = 0;
    for_each_param([&](const std::string& n, const auto& x) {
      (n.rfind("src_emb", 0) == 0 || n.rfind("tgt_emb", 0) == 0 ? emb : n.rfind("enc.", 0) == 0 ? enc
       : n.rfind("dec.", 0) == 0 ? dec : rest) += x.size(); }, m);
    parts.add({_("embeddings (source, target; target tied to the output)"), std::to_string(emb)});
    parts.add({_f("{} encoder layers", mc.enc_layers), std::to_string(enc)});
    parts.add({_f("{} decoder layers", mc.dec_layers), std::to_string(dec)});
    parts.add({_("output bias and final norms"), std::to_string(rest)});
    parts.add({_("total"), std::to_string(parameter_count(m))});
    nar.table(parts);
    nar.say(_f("d_model {}, {} heads of {}, d_ff {}, {}-Norm, LayerNorm ε = 1e-5, sinusoidal positions",
                        mc.d_model, mc.n_heads, mc.d_model / mc.n_heads, mc.d_ff, mc.norm == NormPlacement::Post ? "Post" : "Pre"));
    nar.say(_("Post-Norm (the paper's): LayerNorm after each residual sum, LN(x + sublayer(x)); Pre-Norm: before "
              "each sub-layer, x + sublayer(LN(x)); step 5 writes decoder layer 0 out in full"));
    nar.result(_f("{}: {} ({} steps of batch {}, {} s of training on {} thread(s), best at step {}, valid BLEU {}) {} {}",
                           norm == "post" ? _("Post-Norm Transformer") : _("Pre-Norm Transformer"),
                           ct.trained ? _("trained now") : _("loaded"),
                           meta("steps"), meta("batch"), meta("train_seconds"), meta("threads"), meta("best_step"),
                           meta("valid_bleu"), ct.trained ? "->" : "<-", ct.path));
    nar.manifest_field("config", nlohmann::json{{"d_model", mc.d_model}, {"heads", mc.n_heads}, {"d_ff", mc.d_ff},
                                                {"enc_layers", mc.enc_layers}, {"dec_layers", mc.dec_layers},
                                                {"norm", norm_name(mc.norm)}}.dump());
    nar.code("attn/models/transformer.hpp: transformer_init, transformer_forward; attn/models/transformer_train.hpp: load_transformer");
    nar.why(_("no recurrence: every position reads every other through attention, so a layer is a few matrix products."));

    // ---------------------------------------------------------------- 2. encoder self-attention
    const SentencePair* ex = &corpus.test.front();
    for (const auto& p : corpus.test) {
      std::size_t moved = 0;
      for (std::size_t i = 0; i < p.alignment.size(); ++i) moved += std::size_t(p.alignment[i]) != i;
      if (p.src.size() == 10 && moved >= 4) { ex = &p; break; }
    }
    const std::vector<int> src = sv.encode(ex->src);
    const std::vector<int> out = transformer_greedy(m, src, 1, src.size(), src.size() + 10).front();
    const TransformerAttention att = transformer_attention(m, src, out);
    const Labels in_words = [&] { Labels w{"<bos>"}; for (int id : out) w.push_back(tv.token(id)); return w; }();
    const Labels out_words = words_of(tv, out, true);
    nar.step(_("Encoder self-attention"), _("A = softmax(Q·Kᵀ/√d_k),  Q, K from the source words"));
    nar.say(_f("source:    {}", fmt::join(ex->src, " ")));
    nar.say(_f("reference: {}", fmt::join(ex->tgt, " ")));
    nar.say(_f("greedy:    {}", fmt::join(words_of(tv, out, false), " ")));
    nar.record("enc_self_weights", att.enc_self);
    // How sharply each encoder head reads: the mean over rows of the row's largest weight.
    std::vector<std::string> sharpness;
    std::size_t sharp_l = 0, sharp_h = 0;
    double sharpest = -1.0;
    for (std::size_t l = 0; l < att.enc_self.shape(0); ++l)
      for (std::size_t h = 0; h < att.enc_self.shape(1); ++h) {
        const double v = double(xt::mean(xt::amax(slice2(att.enc_self, l, h), {1}))());
        sharpness.push_back(fmt::format("L{}H{} {:.2f}", l, h, v));
        if (v > sharpest) sharpest = v, sharp_l = l, sharp_h = h;
      }
    nar.say(_f("{} encoder layers × {} heads, numbered from 0 as in chapter 04's tensors (L0H0: layer 0, head 0)",
               att.enc_self.shape(0), att.enc_self.shape(1)));
    nar.say(_f("a row's largest weight, averaged over the rows (uniform over {} words: {:.2f}):", ex->src.size(),
               1.0 / double(ex->src.size())));
    nar.say("  " + fmt::format("{}", fmt::join(sharpness, "  ")));
    nar.heatmap(fmt::format("enc_self_L{}_H{}", sharp_l, sharp_h), slice2(att.enc_self, sharp_l, sharp_h), ex->src, ex->src,
                _f("layer {}, head {}, the sharpest: rows attend to columns", sharp_l, sharp_h), {0.0, 1.0});
    nar.code("attn/models/transformer_decode.hpp: transformer_greedy, transformer_attention");
    nar.why(_("each source word's row mixes the whole sentence before the decoder ever looks; most of this encoder's "
              "heads spread their weight widely (chapter 10 measures how close to uniform)."));

    // ---------------------------------------------------------------- 3. the causal mask
    nar.step(_("The decoder's causal mask"), _("M_ij = 0 if j ≤ i, −∞ if j > i;  softmax(Q·Kᵀ/√d_k + M)"));
    nar.show("causal_mask", causal_mask(4), {}, {}, _("T = 4: −∞ above the diagonal, so exp(−∞) = 0"));
    nar.record("dec_self_weights", att.dec_self);
    nar.heatmap("dec_self_L0_H0", slice2(att.dec_self, 0, 0), in_words, in_words, _("layer 0, head 0"), {0.0, 1.0});
    double above = 0.0;
    for (std::size_t l = 0; l < att.dec_self.shape(0); ++l)
      for (std::size_t h = 0; h < att.dec_self.shape(1); ++h)
        for (std::size_t i = 0; i < att.dec_self.shape(2); ++i)
          for (std::size_t j = i + 1; j < att.dec_self.shape(3); ++j) above += att.dec_self(l, h, i, j);
    nar.result(_f("total weight above the diagonal, all layers and heads: {}", above));
    nar.code("attn/tensor/mask.hpp: causal_mask; attn/models/transformer.hpp: decoder_layer_forward");
    nar.why(_("training feeds the whole reference at once; the mask keeps position i from reading words it must predict."));

    // ---------------------------------------------------------------- 4. cross-attention
    nar.step(_("Cross-attention"), "softmax(Q_dec·K_encᵀ/√d_k)·V_enc  (T × S)", "Vaswani et al. 2017, §3.2.3");
    nar.record("cross_weights", att.cross);
    Table agree_t({_("layer"), _("head"), _("argmax = aligned source word")});
    std::size_t best_l = 0, best_h = 0, best_hits = 0;
    const std::size_t rows = std::min(out.size(), ex->alignment.size());
    for (std::size_t l = 0; l < att.cross.shape(0); ++l)
      for (std::size_t h = 0; h < att.cross.shape(1); ++h) {
        std::size_t hits = 0;
        for (std::size_t i = 0; i < rows; ++i) {
          std::size_t arg = 0;
          for (std::size_t j = 0; j < src.size(); ++j) if (att.cross(l, h, i, j) > att.cross(l, h, i, arg)) arg = j;
          hits += arg == std::size_t(ex->alignment[i]);
        }
        agree_t.add({std::to_string(l), std::to_string(h), _f("{} of {}", hits, rows)});
        if (hits > best_hits) best_l = l, best_h = h, best_hits = hits;
      }
    nar.table(agree_t);
    nar.heatmap("cross_best", slice2(att.cross, best_l, best_h), out_words, ex->src,
                _f("layer {}, head {}: rows write output words, columns are source words", best_l, best_h), {0.0, 1.0});
    nar.result(_f("layer {}, head {} looks hardest at the aligned source word for {} of {} output words",
                  best_l, best_h, best_hits, rows));
    nar.code("attn/models/transformer_decode.hpp: transformer_attention");
    nar.why(_("row i is the query of the step that writes word i: the reordering (adjective after noun, verb last) shows off the diagonal."));

    // ---------------------------------------------------------------- 5. decoder layer 0 in full
    nar.step(_("Decoder layer 0 in full"), mc.norm == NormPlacement::Post
             ? "h1 = LN1(x + SelfAttn(x));  h2 = LN2(h1 + CrossAttn(h1, memory));  y = LN3(h2 + FFN(h2))"
             : "h1 = x + SelfAttn(LN1(x));  h2 = h1 + CrossAttn(LN2(h1), memory);  y = h2 + FFN(LN3(h2))");
    const TransformerTape tape = transformer_teacher_forced(m, src, out);
    nar.show("memory", slice_of(tape.memory, 0), ex->src, {}, _("the encoder's output, S × d"));
    nar.record("dec0_input", slice_of(tape.tgt_x, 0));
    nar.show("dec0_output", slice_of(tape.dec[0].y, 0), in_words, {}, "T × d");
    const DecoderLayerT<float>& d0 = m.dec[0];
    for (const auto& [pre, mh] : {std::pair<std::string, const MultiHead*>{"dec0_self_", &d0.self}, {"dec0_cross_", &d0.cross}}) {
      nar.record(pre + "W_Q", mh->w_q); nar.record(pre + "W_K", mh->w_k); nar.record(pre + "W_V", mh->w_v); nar.record(pre + "W_O", mh->w_o);
      nar.record(pre + "b_Q", mh->b_q); nar.record(pre + "b_K", mh->b_k); nar.record(pre + "b_V", mh->b_v); nar.record(pre + "b_O", mh->b_o);
    }
    nar.record("dec0_ffn_W1", d0.ff1.w); nar.record("dec0_ffn_b1", d0.ff1.b);
    nar.record("dec0_ffn_W2", d0.ff2.w); nar.record("dec0_ffn_b2", d0.ff2.b);
    for (const auto& [n, p] : {std::pair<std::string, const Norm*>{"ln1", &d0.ln1}, {"ln2", &d0.ln2}, {"ln3", &d0.ln3}}) {
      nar.record("dec0_" + n + "_gamma", p->gamma);
      nar.record("dec0_" + n + "_beta", p->beta);
    }
    nar.say(_("--export writes this layer's input, memory, output and every parameter (Q = X·W_Q, right-multiplied):"));
    nar.say(_("tests/chapters/test_ch08.cpp recomputes dec0_output from those files alone."));
    nar.code("attn/models/transformer.hpp: decoder_layer_forward; attn/models/transformer_decode.hpp: transformer_teacher_forced");
    nar.why(_("a decoder layer is three sub-layers, each wrapped in a residual and a LayerNorm; nothing else."));

    // ---------------------------------------------------------------- 6. training
    nar.step(_("Training"), _("Adam (β2 0.98), lr = d^−½·min(step^−½, step·warmup^−³ᐟ²), label smoothing 0.1"),
             "Vaswani et al. 2017, §5.3–5.4");
    const TrainingCurves& cv = ct.curves;
    if (!cv.train_loss.empty()) {
      nar.say(_f("loss        {}  {:.3f} -> {:.3f} (log scale)", sparkline(cv.train_loss, 50, true),
                          cv.train_loss.front(), cv.train_loss.back()));
      nar.say(_f("grad norm   {}  {:.2f} -> {:.2f}", sparkline(cv.grad_norm, 50), cv.grad_norm.front(), cv.grad_norm.back()));
      nar.say(_f("valid BLEU  {}  {:.1f} at step {:.0f} -> {:.1f} at step {:.0f}", sparkline(cv.valid_bleu, 50),
                          cv.valid_bleu.front(), cv.valid_step.front(), cv.valid_bleu.back(), cv.valid_step.back()));
    }
    nar.say(_("label smoothing 0.1: the target puts 0.9 + 0.1/V on the right word and 0.1/V on every other word of "
              "the V (Szegedy et al. 2016); warm-up: the learning rate grows linearly, then decays as step^−½"));
    nar.say(_f("{} steps of {} sentences = {:.1f} passes over the {} training pairs; warm-up {} steps",
                        meta("steps"), meta("batch"), std::stod(meta("steps") == "?" ? "0" : meta("steps")) *
                        std::stod(meta("batch") == "?" ? "0" : meta("batch")) / double(corpus.train.size()), corpus.train.size(),
                        meta("warmup")));
    nar.code("attn/models/transformer_train.hpp: train_transformer");
    nar.why(_("the curves are recorded during training and stored in the checkpoint beside the weights."));

    // ---------------------------------------------------------------- 7. results
    nar.step(_("BLEU by length, beside chapters 00–02"), _("same test split; greedy, and beam 4 with lp = ((5+|Y|)/6)^0.6"),
             "Wu et al. 2016, eq. 14");
    // Five independent evaluations of the test split, run concurrently (both cores; each one
    // single-threaded BLAS): the three RNN models of chapters 00–02, greedy and beam 4.
    TrainConfig none;
    std::vector<ChapterModel> rnn;
    for (const auto& [chn, name] : {std::pair<std::string, std::string>{"00", "no_attention"}, {"01", "bahdanau"}, {"02", "luong_general"}})
      rnn.push_back(chapter_model(chn, name, corpus, false, "", none));
    std::vector<std::future<EvalResult>> jobs;
    for (const ChapterModel& cm : rnn)
      jobs.push_back(std::async(std::launch::async, [&, &model = cm.model] { return evaluate_model(model, corpus.test, sv, tv); }));
    for (std::size_t beam : {std::size_t(1), kBeamSize})
      jobs.push_back(std::async(std::launch::async, [&, beam] {
        return evaluate_translator([&](const std::vector<SentencePair>& ps) { return transformer_translate_pairs(m, ps, sv, tv, beam); },
                                   corpus.test); }));
    const std::string tname = "transformer_" + norm;
    std::vector<NamedResult> results;
    Table cost_t({_("model"), _("parameters"), _("training")});
    for (std::size_t i = 0; i < rnn.size(); ++i) {
      const ChapterModel& cm = rnn[i];
      results.push_back({model_name(cm.model.cfg), jobs[i].get()});
      cost_t.add({model_name(cm.model.cfg), std::to_string(parameter_count(cm.model)),
                  _f("{} steps, {} s", cm.metadata.count("steps") ? cm.metadata.at("steps") : "?",
                              cm.metadata.count("train_seconds") ? cm.metadata.at("train_seconds") : "?")});
    }
    const EvalResult tg = jobs[3].get(), tb = jobs[4].get();
    results.push_back({tname + "_greedy", tg});
    results.push_back({tname + "_beam4", tb});
    cost_t.add({tname, std::to_string(parameter_count(m)), _f("{} steps, {} s", meta("steps"), meta("train_seconds"))});
    const std::vector<std::string> titles = {_("none"), "Bahdanau", "Luong-gen", _("T greedy"), _("T beam 4")};
    nar.table(metric_table(results, titles, LengthMetric::Bleu), /*as_result=*/true);
    nar.table(metric_table(results, titles, LengthMetric::Exact), /*as_result=*/true);
    nar.table(metric_table(results, titles, LengthMetric::TokenAccuracy), /*as_result=*/true);
    nar.say(_("beam 4: the 4 best partial translations are kept at every step instead of 1; lp divides each "
              "one's log-probability so that longer translations are not penalised for their length"));
    nar.say(_("none = chapter 00, Bahdanau = chapter 01, Luong-gen = chapter 02 (global, general score); T = this model"));
    nar.table(cost_t, /*as_result=*/true);
    const EvalResult& bah = std::find_if(results.begin(), results.end(), [](const NamedResult& r) { return r.first == "bahdanau"; })->second;
    std::size_t at_least = 0;
    double worst = 100.0;
    for (std::size_t b = 0; b < tg.buckets.size(); ++b) {
      at_least += tg.buckets[b].bleu >= bah.buckets[b].bleu;
      worst = std::min(worst, tg.buckets[b].bleu);
    }
    nar.result(_f("Transformer (greedy): lowest bucket BLEU {}; at least Bahdanau's score in {} of {} buckets",
                           format_score(worst), at_least, tg.buckets.size()));
    auto count_len = [&](const EvalResult& r, int sign) {
      std::size_t n = 0;
      for (std::size_t i = 0; i < r.hyps.size(); ++i)
        n += sign > 0 ? r.hyps[i].size() > r.refs[i].size() : r.hyps[i].size() < r.refs[i].size();
      return n;
    };
    nar.result(_f("beam 4 vs greedy, all lengths: BLEU {} vs {}; outputs shorter than their reference: {} vs {}, "
                           "longer: {} vs {} (of {})", format_score(tb.overall.bleu), format_score(tg.overall.bleu),
                           count_len(tb, -1), count_len(tg, -1), count_len(tb, 1), count_len(tg, 1), tg.hyps.size()));
    nar.say(_f("Dropout is not needed at this scale: the corpus is generated by fixed rules, so there is no "
                        "noise to memorise; validation BLEU {} and test BLEU {} agree.", meta("valid_bleu"),
                        format_score(tg.overall.bleu)));
    nar.code("attn/models/transformer_decode.hpp: transformer_translate_pairs, transformer_beam; attn/models/seq2seq_eval.hpp: evaluate_translator");
    const BucketMetrics &t_long = tg.buckets.back(), &b_long = bah.buckets.back();
    if (t_long.exact < b_long.exact)
      nar.result(_f("longest sentences ({} words): {}% exactly right for the Transformer, {}% for Bahdanau",
                    t_long.bucket.label(), format_score(t_long.exact), format_score(b_long.exact)));
    nar.why(t_long.exact < b_long.exact
                ? _("attention reads any source position in one step, but that alone does not make long sentences "
                    "easy: this small model, trained for the steps above, slips more often as the length grows.")
                : _("attention reads any source position in one step, whatever the sentence length."));

    // ---------------------------------------------------------------- 8. Post-Norm vs Pre-Norm
    nar.step(_("Post-Norm vs Pre-Norm at initialisation"), _("‖∂L/∂θ_layer‖ for 6 + 6 layers, one batch"),
             "Xiong et al. 2020, §3");
    TransformerModelConfig deep = mc;
    deep.enc_layers = deep.dec_layers = 6;
    Table gn({_("layer"), "Post-Norm", "Pre-Norm"});
    deep.norm = NormPlacement::Post;
    const LayerGradNorms post = grad_norms_at_init(deep, corpus, 32, nar.options().seed);
    deep.norm = NormPlacement::Pre;
    const LayerGradNorms pre = grad_norms_at_init(deep, corpus, 32, nar.options().seed);
    auto norm_of = [](const LayerGradNorms& g, const std::string& n) {
      for (std::size_t i = 0; i < g.layers.size(); ++i) if (g.layers[i] == n) return g.norms[i];
      return 0.0;
    };
    bool empty_group = false;  // a group with no parameters (Post-Norm has no final norms): its norm is exactly 0
    auto cell = [&](double v) {
      empty_group = empty_group || v == 0.0;
      return v == 0.0 ? std::string("-") : fmt::format("{:.4f}", v);
    };
    static const char* const group_names[] = {N_("embeddings"), N_("final norms"), N_("out")};  // the others: enc.i, dec.i
    (void)group_names;
    for (const std::string& layer : pre.layers) gn.add({tr(layer), cell(norm_of(post, layer)), cell(norm_of(pre, layer))});
    nar.table(gn, true);
    if (empty_group) nar.say(_("-: no such parameters (Post-Norm has no final LayerNorm: every sub-layer already ends in one)"));
    // Xiong et al.: at initialisation, Post-Norm's gradients grow toward the output layer; Pre-Norm's stay level.
    auto spread = [&](const LayerGradNorms& g, const char* part) {  // (smallest, largest) over enc.* or dec.*
      double lo = INFINITY, hi = 0.0;
      for (std::size_t i = 0; i < g.layers.size(); ++i)
        if (g.layers[i].rfind(part, 0) == 0) lo = std::min(lo, g.norms[i]), hi = std::max(hi, g.norms[i]);
      return std::pair<double, double>{lo, hi};
    };
    const double post_ratio = norm_of(post, "dec.5") / norm_of(post, "dec.0");
    const double pre_ratio = norm_of(pre, "dec.5") / norm_of(pre, "dec.0");
    const double post_enc = norm_of(post, "enc.5") / norm_of(post, "enc.0");
    const double pre_enc = norm_of(pre, "enc.5") / norm_of(pre, "enc.0");
    nar.result(_f("last / first layer gradient norm: decoder (dec.5 / dec.0) Post-Norm {:.2f}, Pre-Norm {:.2f}; "
                  "encoder (enc.5 / enc.0) Post-Norm {:.2f}, Pre-Norm {:.2f}", post_ratio, pre_ratio, post_enc, pre_enc));
    const auto [post_lo, post_hi] = spread(post, "dec.");
    const auto [pre_lo, pre_hi] = spread(pre, "dec.");
    const bool grows = post_ratio > 1.1 && post_ratio > pre_ratio + 0.1;  // 10%: more than one batch's noise
    nar.result(grows ? _f("verdict: holds here: Post-Norm's decoder gradients grow toward the output ({:.2f}×), "
                          "Pre-Norm's stay within {:.2f}–{:.2f}", post_ratio, pre_lo, pre_hi)
                     : _f("verdict: does not hold at this size: Post-Norm's decoder gradients do not grow toward the "
                          "output ({:.2f}×; they span {:.2f}–{:.2f}, Pre-Norm's {:.2f}–{:.2f})", post_ratio, post_lo,
                          post_hi, pre_lo, pre_hi));
    if (norm_study) {
      WarmupStudyConfig sc;
      const std::vector<WarmupRun> runs = warmup_study(mc, corpus, sc);
      Table wt({_("norm"), _("warm-up"), _("seed"), _f("loss after {} steps", sc.steps)});
      for (const auto& r : runs) wt.add({norm_name(r.norm), r.warmup ? _("yes") : _("no"), std::to_string(r.seed), fmt::format("{:.3f}", r.final_loss)});
      nar.table(wt, true);
    } else {
      nar.say(_("--norm-study adds short training runs with and without warm-up (3 seeds each, minutes)."));
    }
    nar.code("attn/studies/transformer_study.hpp: grad_norms_at_init, warmup_study");
    nar.why(_("a Post-Norm residual path passes through every LayerNorm; Pre-Norm keeps an identity path to the output."));

    // ---------------------------------------------------------------- 9. costs and speed
    nar.step(_("What it costs"), _("per layer: 4·2·T·d² (projections) + 2·2·T²·d (scores) + 2·2·T·d·d_ff (FFN)"));
    TransformerConfig base, ours;
    ours.d_model = mc.d_model; ours.n_heads = mc.n_heads; ours.d_ff = mc.d_ff;
    ours.n_encoder = mc.enc_layers; ours.n_decoder = mc.dec_layers; ours.vocab = mc.tgt_vocab;
    Table ct_t({_("model"), _("parameters"), _("FLOPs/token (T = 32)"), _("attention share: T = 32"), "T = 512", "T = 4096"});
    for (const auto& row : {std::pair<std::string, TransformerConfig>{_("base (Vaswani et al. 2017)"), base}, {_("ours"), ours}}) {
      const std::string& label = row.first;
      const TransformerConfig& c = row.second;  // plain references: C++17 lambdas cannot capture bindings
      auto per_token = [&](std::size_t t) {
        const LayerCost e = encoder_layer_cost(c, t), d = decoder_layer_cost(c, t, t);
        return std::pair<double, double>{(double(c.n_encoder) * e.flops() + double(c.n_decoder) * d.flops()) / double(t),
            (double(c.n_encoder) * (e.projection_flops + e.score_flops) + double(c.n_decoder) * (d.projection_flops + d.score_flops)) /
                (double(c.n_encoder) * e.flops() + double(c.n_decoder) * d.flops())};
      };
      ct_t.add({label, millions(transformer_params(c).total()), millions(per_token(32).first),
                fmt::format("{:.0f}%", 100 * per_token(32).second), fmt::format("{:.0f}%", 100 * per_token(512).second),
                fmt::format("{:.0f}%", 100 * per_token(4096).second)});
    }
    nar.table(ct_t, true);
    nar.say(_("attention share: projections and scores, as a share of all FLOPs (the rest is the FFN)"));
    set_blas_threads(threads);
    const StepTiming st = time_transformer_step(mc, corpus, 64, 30, 7);
    set_blas_threads(1);
    nar.result(_f("train_ms_per_step {:.1f} ms (median of {} steps after 2 warm-up steps; batch {} × source {} → "
                           "target {}; {} OpenBLAS thread(s); forward + backward + Adam)", st.median_ms, st.reps, st.batch,
                           st.src_len, st.tgt_len, threads));
    nar.say(_f("CPU time per step {:.1f} ms{}", st.median_cpu_ms, st.median_ms > 1.5 * st.median_cpu_ms
                ? _(": the machine is busy, the wall time above includes waiting for a core") : ""));
    std::optional<PeerStepTime> peer;
    if (const auto peer_file = find_data_file("ch08/pytorch_step_time.json")) peer = read_peer_step_time(*peer_file);
    for (const std::string& line : peer_step_lines(st, std::size_t(threads), parameter_count(m), peer)) nar.say(line);
    if (nar.options().export_dir) {
      nlohmann::ordered_json extra;
      for (const auto& row : cost_t.data()) extra["parameters"][row[0]] = std::stoll(row[1]);
      extra["train_ms_per_step"] = {{"ms", std::stod(fmt::format("{:.1f}", st.median_ms))}, {"batch", st.batch},
                                    {"src_len", st.src_len}, {"tgt_len", st.tgt_len}, {"threads", threads}, {"steps", st.reps},
                                    {"cpu_ms", std::stod(fmt::format("{:.1f}", st.median_cpu_ms))}};
      if (peer) extra["pytorch_step"] = {{"framework", peer->framework}, {"cpu_ms", peer->cpu_ms}, {"wall_ms", peer->wall_ms},
                                         {"threads", peer->threads}, {"source", "data/ch08/pytorch_step_time.json"}};
      nar.export_file("results.json", results_json(results, extra.dump()));  // written with the tensors
    }
    nar.code("attn/studies/transformer_cost.hpp: encoder_layer_cost, decoder_layer_cost; attn/studies/transformer_study.hpp: time_transformer_step");
    nar.why(_("at toy lengths the feed-forward and projections dominate; the T² score term takes over as T grows."));

    nar.takeaway({
        _f("Attention alone, {} parameters: greedy BLEU {} over all lengths, at least {} in every length bucket.",
                    parameter_count(m), format_score(tg.overall.bleu), format_score(worst)),
        _f("Beside Bahdanau (BLEU {} overall): the Transformer matches or beats it in {} of {} length buckets.",
                    format_score(bah.overall.bleu), at_least, tg.buckets.size()),
        _("Post-Norm is the paper's placement; Pre-Norm keeps an identity path and is what modern models use."),
    });
  });
}
