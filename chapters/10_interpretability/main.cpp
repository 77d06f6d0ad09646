// Chapter 10 · Interpretability — what attention weights do and do not tell us, measured on models
// this course trained: every head of a model drawn, induction heads found and knocked out, then the
// articles' five claims about attention weights (by-layer patterns, alignment, collapse,
// perturbation, gradients) each measured here beside what the papers report.
//   build/bin/10_interpretability                  the lesson from the shipped models (under 15 s)
//   build/bin/10_interpretability --html heads.html  also an offline head view of every model
//   build/bin/10_interpretability --train          retrains the two induction models (minutes)
// Export names: attn_weights_induction (layers × heads × T × T, tokens in the manifest),
// head_entropy, head_distance (layers × heads, evaluation set), prefix_matching, copying (layers ×
// heads, the drawn sequence), alignment_accuracy (chapter 08's cross-attention: decoder layers ×
// heads, when shipped), alignment_accuracy_bahdanau (1), kendall_tau (layers: τ(attention, LOO)).
// Chapters 08 and 09's models are measured when their checkpoints are in data/; otherwise the
// chapter says so and measures the rest.
#include <algorithm>
#include <cmath>
#include <optional>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/data/bpe.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/text_corpus.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/seq2seq_report.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/present/sparkline.hpp"
#include "attn/studies/induction.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/studies/interpretability.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
const char* kModelFiles[] = {"ch10/induction.safetensors", "ch10/induction_seed2.safetensors"};

struct Trained {
  AttnOnly model;
  std::vector<float> curve;
  Metadata md;
};

Trained load_or_train(std::size_t which, bool train, const InductionTrainConfig& base, bool progress) {
  Trained t;
  if (train) {
    InductionTrainConfig cfg = base;
    cfg.seed = base.seed + which;
    ProgressBar bar(std::int64_t(cfg.steps), progress && stderr_is_terminal());
    cfg.on_step = bar.callback();
    InductionTrainResult r = train_induction(cfg);
    bar.finish();
    std::filesystem::create_directories(data_dir() + "/ch10");
    TensorMap extra;
    extra["loss_curve"] = TensorF32{{r.loss_curve.size()}, r.loss_curve};
    t.md = {{"seed", std::to_string(cfg.seed)}, {"steps", std::to_string(cfg.steps)},
            {"batch", std::to_string(cfg.batch)}, {"curve_every", std::to_string(cfg.curve_every)},
            {"train_seconds", fmt::format("{:.1f}", r.seconds)}, {"length", std::to_string(cfg.task.length)},
            {"min_period", std::to_string(cfg.task.min_period)}, {"max_period", std::to_string(cfg.task.max_period)}};
    save_attn_only(data_dir() + "/" + kModelFiles[which], r.model, extra, t.md);
    t.model = std::move(r.model);
    t.curve = std::move(r.loss_curve);
    return t;
  }
  const auto path = find_data_file(kModelFiles[which]);
  if (!path) throw std::runtime_error(_f("no model {} (run with --train to make it)", kModelFiles[which]));
  TensorMap extra;
  t.model = load_attn_only(*path, &extra, &t.md);
  if (extra.count("loss_curve")) t.curve = extra["loss_curve"].data;
  return t;
}

Labels token_labels(const std::vector<int>& ids) {
  Labels l;
  for (int id : ids) l.push_back(std::to_string(id));
  return l;
}
std::string meta(const Metadata& md, const std::string& key) {
  const auto it = md.find(key);
  return it == md.end() ? "?" : it->second;
}
// Cuts the last line (a heatmap's legend) off `block` and returns it.
std::string without_last_line(std::string& block) {
  while (!block.empty() && block.back() == '\n') block.pop_back();
  const std::size_t cut = block.rfind('\n');
  std::string last = cut == std::string::npos ? block : block.substr(cut + 1);
  block = cut == std::string::npos ? "" : block.substr(0, cut + 1);
  return last;
}
std::string head_name(std::size_t layer, std::size_t head) { return fmt::format("L{}H{}", layer, head); }
// How a mean attention distance changes from the first layer to the last: it grows (by more than
// 10%), stays about flat (within 10%), or shrinks.
enum class Trend { shrinks, flat, grows };
Trend trend(double first, double last) {
  return last > 1.1 * first ? Trend::grows : last < first / 1.1 ? Trend::shrinks : Trend::flat;
}
const char* trend_words(Trend t) {
  return t == Trend::grows ? _("grows") : t == Trend::flat ? _("stays within 10%") : _("shrinks");
}
const char* trend_verdict(Trend t) {
  return t == Trend::grows ? _("holds") : t == Trend::flat ? _("flat") : _("does not hold");
}
std::string edit_label(HeadEdit e) {
  switch (e) {
    case HeadEdit::permute: return _("permute");
    case HeadEdit::uniform: return _("uniform");
    case HeadEdit::zero: return _("zero");
  }
  return head_edit_name(e);
}
Mat per_head(const std::vector<HeadStat>& s, std::size_t layers, std::size_t heads, double HeadStat::*field) {
  Mat m = xt::zeros<float>({layers, heads});
  for (const HeadStat& h : s) m(h.layer, h.head) = float(h.*field);
  return m;
}
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("10", /*default_seed=*/1, /*total_steps=*/8);
  bool train = false;
  InductionTrainConfig tc;
  tc.model = {48, 48, 4, 2, 48};  // vocabulary 48, d 48, 4 heads of 12, 2 layers, context 48
  tc.task = {48, 40, 5, 16};      // 40 tokens, a period of 5 to 16 distinct tokens
  tc.batch = 24;
  std::size_t eval_n = 64;
  std::string norm = "post";
  ch.app().add_option("--norm", norm, _("which chapter 08 Transformer to measure"))->capture_default_str()
      ->check(CLI::IsMember({"post", "pre"}));
  ch.app().add_flag("--train", train, _("retrain both induction models (seeds S and S + 1) and rewrite data/ch10/"));
  ch.app().add_option("--train-steps", tc.steps, _("Adam steps per model with --train"))->capture_default_str()->check(CLI::Range(1, 200000));
  ch.app().add_option("--eval", eval_n, _("evaluation sequences"))->capture_default_str()->check(CLI::Range(4, 1024));
  ch.set_question(_("Question: attention weights are easy to draw — what do they actually tell us about a model?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    tc.seed = nar.options().seed;
    const Trained a = load_or_train(0, train, tc, !nar.quiet()), b = load_or_train(1, train, tc, !nar.quiet());
    const AttnOnly& m = a.model;
    const std::size_t L = m.cfg.layers, H = m.cfg.heads;
    Rng eval_rng(2024);
    const InductionBatch eval = induction_batch(eval_rng, tc.task, eval_n);
    const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
    const std::vector<SentencePair> pairs(corpus.test.begin(), corpus.test.begin() + 150);
    // The chapter 08 Transformer, when its checkpoint is shipped.
    std::optional<Transformer> tf;
    Metadata tf_md;
    if (const auto p = find_data_file("ch08/transformer_" + norm + ".safetensors")) tf = load_transformer(*p, nullptr, &tf_md);
    Table summary({_("claim"), _("measured here"), _("verdict")});

    // ---------------------------------------------------------------- 1. looking
    nar.step(_("Looking: every layer × head"), "P = softmax(QKᵀ/√d_h + M)", "Vig 2019 (BertViz)");
    nar.result(_f("induction model: {} attention-only layers × {} heads, d = {}, vocabulary {}, {} parameters", L, H,
                  m.cfg.d_model, m.cfg.vocab, parameter_count(m)));
    nar.say(_("layers and heads are numbered from 0, as in chapter 04's tensors: L1H2 is layer 1, head 2"));
    Rng show_rng(7);
    const InductionBatch shown = induction_batch(show_rng, {tc.task.vocab, 17, 6, 6}, 1);  // 17 > 16: 1-column cells
    const std::vector<int> seq = shown.sequence(0);
    const Labels toks = token_labels(seq);
    const std::vector<Tensor3> w = attn_only_weights(m, seq);
    nar.say(_f("input: 6 random tokens, repeated: {}", fmt::join(toks, " ")));
    std::string legend;
    for (std::size_t l = 0; l < L && !nar.quiet(); ++l) {
      std::vector<std::string> maps, titles;
      for (std::size_t h = 0; h < H; ++h) {
        HeatmapStyle hs;
        hs.vmin = 0.0;
        hs.vmax = 1.0;
        std::string map = format_heatmap(slice_of(w[l], h), h == 0 ? toks : Labels(toks.size(), ""),
                                         Labels(toks.size(), ""), hs);
        legend = without_last_line(map);
        maps.push_back(map);
        titles.push_back(head_name(l, h));
      }
      std::cout << side_by_side(maps, titles, 1);
    }
    if (!legend.empty()) nar.say(legend.substr(legend.find_first_not_of(' ')));
    const Tensor4 w4 = stack_layers(w);
    nar.record("attn_weights_induction", w4);
    nar.record_tokens("attn_weights_induction", toks, toks);
    nar.attention_view({_("induction model (2-layer attention-only)"), toks, toks, w, true});
    const SentencePair& ex_pair = corpus.test[3];
    if (tf) {
      const PairAttention ta = transformer_attention(*tf, ex_pair, corpus.source_vocab, corpus.target_vocab);
      Labels tgt_in = {"<bos>"}, tgt_out = ex_pair.tgt;
      tgt_in.insert(tgt_in.end(), ex_pair.tgt.begin(), ex_pair.tgt.end());
      tgt_out.push_back("<eos>");
      nar.attention_view({_("Transformer encoder self-attention"), ex_pair.src, ex_pair.src, ta.enc_self, false});
      nar.attention_view({_("Transformer decoder self-attention"), tgt_in, tgt_in, ta.dec_self, true});
      nar.attention_view({_("Transformer cross-attention (rows: the word predicted)"), tgt_out, ex_pair.src, ta.cross, false});
      nar.say(_f("--html also draws the chapter 08 Transformer ({}-Norm): encoder, decoder and cross-attention", norm));
    }
    nar.code("attn/studies/induction.hpp: attn_only_weights; attn/present/side_by_side.hpp: side_by_side");
    nar.why(_("rows are queries, columns keys; a head is a pattern of where each position reads from."));

    // ---------------------------------------------------------------- 2. induction heads
    nar.step(_("Induction heads"), _("prefix matching, copying"), "Elhage et al. 2021; Olsson et al. 2022");
    nar.say(_("an induction head finds the earlier copy of the current token and predicts the token that followed "
              "it (… A B … A → B): a layer-0 head marks each position with its previous token, and a layer-1 head "
              "looks for that mark"));
    if (!a.curve.empty())
      nar.result(_f("training loss ({} steps, every {}): {:.2f} {} {:.2f}", meta(a.md, "steps"), meta(a.md, "curve_every"),
                             a.curve.front(), sparkline(a.curve, 48), a.curve.back()));
    std::vector<std::vector<Tensor3>> ex;
    std::vector<std::vector<int>> ex_tokens;
    for (std::size_t s = 0; s < eval.batch; ++s) {
      ex_tokens.push_back(eval.sequence(s));
      ex.push_back(attn_only_weights(m, ex_tokens.back()));
    }
    const std::vector<HeadStat> stats = head_stats(ex, ex_tokens, true);
    const RepeatLosses base = repeat_losses(m, eval);
    Table ht({_("head"), _("prev-token"), _("prefix-match"), _("copying"), _("2nd-repeat loss if zeroed")});
    std::size_t prev_head = 0, ind_head = 0;
    for (const HeadStat& s : stats) {
      const double ablated = repeat_losses(m, eval, {{s.layer, s.head, HeadEdit::zero, 1}}).second;
      ht.add({head_name(s.layer, s.head), fmt::format("{:.3f}", s.previous_token), fmt::format("{:.3f}", s.prefix_matching),
              fmt::format("{:+.3f}", copying_score(ov_circuit(m, s.layer, s.head))), fmt::format("{:.3f}", ablated)});
      if (s.layer == 0 && s.previous_token > stats[prev_head].previous_token) prev_head = s.head;
      if (s.layer == 1 && s.prefix_matching > stats[H + ind_head].prefix_matching) ind_head = s.head;
    }
    const double worst_prev = repeat_losses(m, eval, {{0, prev_head, HeadEdit::zero, 1}}).second;
    const double worst_ind = repeat_losses(m, eval, {{1, ind_head, HeadEdit::zero, 1}}).second;
    nar.table(ht, /*as_result=*/true);
    nar.say(_("prev-token: mean weight on the position just before; prefix-match: mean weight on the token that "
              "followed an earlier copy of the current token; copying: +1 when the head's output raises the logit "
              "of the token it reads, −1 when it lowers it (from the eigenvalues of its OV circuit W_E·W_V·W_O·W_U, "
              "which maps a token read to the logits written); last column: the loss on "
              "the second repeat with that head's output set to zero"));
    nar.result(_f("loss on the first repeat {:.3f} (chance: log {} = {:.3f}), on the second {:.3f}",
                           base.first, m.cfg.vocab, std::log(double(m.cfg.vocab)), base.second));
    nar.result(_f("previous-token head {} (score {:.3f}); induction head {} (prefix matching {:.3f})",
                           head_name(0, prev_head), stats[prev_head].previous_token, head_name(1, ind_head),
                           stats[H + ind_head].prefix_matching));
    nar.result(_f("second-repeat loss {:.3f}; with {} zeroed {:.3f} ({:+.3f}); with {} zeroed {:.3f} ({:+.3f})",
                           base.second, head_name(0, prev_head), worst_prev, worst_prev - base.second,
                           head_name(1, ind_head), worst_ind, worst_ind - base.second));
    // K-composition: does the induction head need the previous-token head to find its key?
    std::vector<std::vector<Tensor3>> ex_cut;
    for (const auto& t : ex_tokens) ex_cut.push_back(attn_only_weights(m, t, {{0, prev_head, HeadEdit::zero, 1}}));
    const double pm_cut = head_stats(ex_cut, ex_tokens, true)[H + ind_head].prefix_matching;
    const bool composes = pm_cut < 0.5 * stats[H + ind_head].prefix_matching;
    nar.result(_f("with {} zeroed, {}'s prefix matching goes {:.3f} -> {:.3f}: {}", head_name(0, prev_head),
                           head_name(1, ind_head), stats[H + ind_head].prefix_matching, pm_cut,
                           composes ? _("it reads the head's output") : _("it finds its key without it")));
    const Mat pm = per_head(head_stats({w}, {seq}, true), L, H, &HeadStat::prefix_matching);
    nar.record("prefix_matching", pm);
    nar.result(_f("on the sequence drawn in step 1: prefix matching of {} = {:.4f}", head_name(1, ind_head),
                           double(pm(1, ind_head))));
    Mat copying = xt::zeros<float>({L, H});
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) copying(l, h) = float(copying_score(ov_circuit(m, l, h)));
    nar.record("copying", copying);
    // The chapter 09 language model, when its checkpoint is shipped: the same test on random tokens.
    const auto lm_path = find_data_file("ch09/decoder_lm.safetensors");
    std::optional<DecoderLM> lm;
    Metadata lm_md;
    if (lm_path) lm = load_decoder_lm(*lm_path, &lm_md);
    if (lm) {
      const LmInduction li = decoder_lm_induction(*lm, 40, 8, 77);
      std::vector<HeadStat> top = li.heads;
      std::sort(top.begin(), top.end(), [](const HeadStat& x, const HeadStat& y) { return x.prefix_matching > y.prefix_matching; });
      std::string best;
      for (std::size_t i = 0; i < 3 && i < top.size(); ++i)
        best += fmt::format("{}{} {:.3f}", i ? ", " : "", head_name(top[i].layer, top[i].head), top[i].prefix_matching);
      std::size_t strong = 0;
      for (const HeadStat& hs : li.heads) strong += hs.prefix_matching > 0.4;
      nar.result(_f("chapter 09 LM ({} steps, {} layers × {} heads), {} random tokens repeated once:",
                             meta(lm_md, "steps"), lm->cfg.n_layers, lm->cfg.n_heads, li.period));
      nar.result(_f("  loss on the first copy {:.3f}, on the second {:.3f} (chance: log {} = {:.3f})", li.first,
                             li.second, lm->cfg.vocab, std::log(double(lm->cfg.vocab))));
      nar.result(_f("  best prefix matching: {}", best));
      nar.result(_f("  {} of {} heads score above 0.4 (no head of this model is zeroed: its forward pass takes no head edits)",
                    strong, li.heads.size()));
      nar.result(li.second < li.first - 0.1
                     ? _("  the second copy is easier than the first: the model copies from the earlier one")
                     : _("  the second copy is no easier than the first: no induction behaviour in this model"));
      if (std::min(li.first, li.second) > std::log(double(lm->cfg.vocab)))
        nar.result(_("  both losses are above chance: on random tokens, guesses learned from text cost more than a "
                     "uniform guess"));
    } else {
      nar.say(_("the chapter 09 language model: not available yet (no checkpoint shipped); not measured."));
    }
    nar.code("attn/studies/interpretability.hpp: head_stats; attn/studies/induction.hpp: repeat_losses, ov_circuit; attn/attention/attention_stats.hpp: prefix_matching_score, copying_score");
    nar.why(_("the first repeat is noise; the second is predictable by finding the token's earlier copy."));

    // ---------------------------------------------------------------- 3. claim 1
    nar.step(_("Claim 1: shallow heads look near, deep far"), "Σ_j P_ij |i − j|", "Dosovitskiy et al. 2021");
    const std::vector<LayerStat> by_layer = layer_means(stats);
    Table lt({_("model"), _("layer"), _("mean distance"), _("entropy (nats)"), "H / log n"});
    for (const LayerStat& s : by_layer)
      lt.add({_("induction"), std::to_string(s.layer), fmt::format("{:.2f}", s.distance), fmt::format("{:.3f}", s.entropy),
              fmt::format("{:.3f}", s.uniformity)});
    nar.table(lt, true);
    nar.say(_("mean distance: Σ_j P_ij |i − j| averaged over rows and heads; entropy H = −Σ_j P_ij log P_ij; "
              "H / log n: H over its largest value (1: uniform over the n keys a row may see)"));
    nar.record("head_entropy", per_head(stats, L, H, &HeadStat::entropy));
    nar.record("head_distance", per_head(stats, L, H, &HeadStat::distance));
    const Trend ind_trend = trend(by_layer.front().distance, by_layer.back().distance);
    nar.result(_f("verdict: distance {} with depth here ({:.2f} -> {:.2f} tokens)", trend_words(ind_trend),
                  by_layer.front().distance, by_layer.back().distance));
    summary.add({_("1 distance grows with depth"), _f("{:.2f} -> {:.2f} tokens, layer 0 -> {}", by_layer.front().distance,
                                                      by_layer.back().distance, L - 1),
                 trend_verdict(ind_trend)});
    nar.say(_("papers: the ViT paper (Fig. 7) finds attention distance growing with depth, with some far-looking heads "
              "already in layer 0; Clark et al. (Fig. 4) find broad, high-entropy heads in BERT's lower layers."));
    std::vector<HeadStat> lm_text;  // the LM's heads on held-out text (claim 3 counts them too)
    if (lm) {
      const auto text_path = find_data_file("ch09/kjv_valid.txt");
      const auto tok_path = find_data_file("ch09/tokenizer.json");
      if (text_path && tok_path) {
        const std::vector<int> ids = bpe_encode(bpe_load(*tok_path), read_text_file(*text_path));
        lm_text = decoder_lm_text_stats(*lm, ids, 4, 128);
        const std::vector<LayerStat> lm_layers = layer_means(lm_text);
        Table lmt({_("model"), _("layer"), _("mean distance"), _("entropy (nats)"), "H / log n"});
        for (const LayerStat& ls : lm_layers)
          lmt.add({_("chapter 09 LM"), std::to_string(ls.layer), fmt::format("{:.2f}", ls.distance),
                   fmt::format("{:.3f}", ls.entropy), fmt::format("{:.3f}", ls.uniformity)});
        nar.table(lmt, true);
        bool rising = true;
        for (std::size_t l = 1; l < lm_layers.size(); ++l) rising = rising && lm_layers[l].distance > lm_layers[l - 1].distance;
        nar.result(_f("chapter 09 LM, 4 × 128 held-out tokens: distance {} layer by layer ({:.2f} -> {:.2f})",
                      rising ? _("grows") : _("does not grow"), lm_layers.front().distance, lm_layers.back().distance));
        summary.add({_("1 … in the chapter 09 LM"), _f("{:.2f} -> {:.2f} tokens, layer 0 -> {}",
                     lm_layers.front().distance, lm_layers.back().distance, lm_layers.size() - 1),
                     rising ? _("holds") : _("does not hold")});
      }
    } else {
      nar.say(_("the chapter 09 LM: not available yet, not measured."));
    }
    std::optional<CrossAlignment> ca;
    if (tf) {
      ca = transformer_alignment(*tf, pairs, corpus.source_vocab, corpus.target_vocab);
      const std::vector<LayerStat> enc_layers = layer_means(ca->enc);
      Table et({_("model"), _("layer"), _("mean distance"), _("entropy (nats)"), "H / log n"});
      for (const LayerStat& ls : enc_layers)
        et.add({_("Transformer encoder"), std::to_string(ls.layer), fmt::format("{:.2f}", ls.distance),
                fmt::format("{:.3f}", ls.entropy), fmt::format("{:.3f}", ls.uniformity)});
      nar.table(et, true);
      const Trend enc_trend = trend(enc_layers.front().distance, enc_layers.back().distance);
      nar.result(_f("chapter 08 encoder ({}-Norm), {} test sentences: distance {} ({:.2f} -> {:.2f})", norm,
                    pairs.size(), trend_words(enc_trend), enc_layers.front().distance, enc_layers.back().distance));
      summary.add({_("1 … in the chapter 08 encoder"), _f("{:.2f} -> {:.2f} tokens, layer 0 -> {}",
                   enc_layers.front().distance, enc_layers.back().distance, enc_layers.size() - 1),
                   trend_verdict(enc_trend)});
    } else {
      nar.say(_("the Transformer's encoder (chapter 08): not available yet, not measured."));
    }
    nar.code("attn/attention/attention_stats.hpp: mean_attention_distance, mean_entropy; attn/studies/interpretability.hpp: layer_means");
    nar.why(_("a layer's distance is set by what its heads look for, not by depth itself: the induction heads of layer 1 "
              "look back to the token after the earlier copy, most of a period away."));

    // ---------------------------------------------------------------- 4. claim 2
    nar.step(_("Claim 2: attention learns word alignments"), "argmax_j α_ij = a(i)", "Bahdanau et al. 2014");
    const ChapterModel bah = chapter_model("01", "bahdanau", corpus, false, "", TrainConfig{});
    const double bah_acc = seq2seq_alignment_accuracy(bah.model, pairs, corpus.source_vocab, corpus.target_vocab);
    Vec acc_v = xt::zeros<float>({1});
    acc_v(0) = float(bah_acc);
    nar.record("alignment_accuracy_bahdanau", acc_v);
    const Mat align = seq2seq_teacher_alignment(bah.model, ex_pair, corpus.source_vocab, corpus.target_vocab);
    Mat truth = xt::zeros<float>(align.shape());
    for (std::size_t i = 0; i < ex_pair.alignment.size(); ++i) truth(i, std::size_t(ex_pair.alignment[i])) = 1.0f;
    if (!nar.quiet()) {
      HeatmapStyle hs;
      hs.vmin = 0.0;
      hs.vmax = 1.0;
      std::string left = format_heatmap(align, ex_pair.tgt, ex_pair.src, hs), right = format_heatmap(truth, ex_pair.tgt, ex_pair.src, hs);
      without_last_line(right);
      const std::string legend2 = without_last_line(left);
      std::cout << side_by_side({left, right}, {_("Bahdanau α (teacher-forced)"), _("true alignment")});
      nar.say(legend2.substr(legend2.find_first_not_of(' ')));
    }
    Tensor3 align3 = Tensor3::from_shape({1, align.shape(0), align.shape(1)});
    std::copy(align.begin(), align.end(), align3.begin());
    nar.attention_view({_("Bahdanau α (chapter 01)"), ex_pair.tgt, ex_pair.src, {align3}, false});
    nar.result(_f("Bahdanau (chapter 01): {:.1f}% of {} target words put their largest α on their source word",
                           100.0 * bah_acc, [&] { std::size_t n = 0; for (const auto& p : pairs) n += p.tgt.size(); return n; }()));
    const std::string align_verdict = bah_acc >= 0.8 ? _("holds") : bah_acc >= 0.5 ? _("partly") : _("does not hold");
    nar.result(_f("verdict: {} (holds: ≥ 80% of words; partly: ≥ 50%)", align_verdict));
    summary.add({_("2 attention aligns words"), _f("Bahdanau: {:.1f}% argmax hits", 100.0 * bah_acc), align_verdict});
    if (ca) {
      std::vector<std::string> at_header = {_("cross-attention")};
      for (std::size_t h = 0; h < ca->accuracy.shape(1); ++h) at_header.push_back(_f("head {}", h));
      Table at(at_header);
      std::size_t bl = 0, bh = 0;
      for (std::size_t l = 0; l < ca->accuracy.shape(0); ++l) {
        std::vector<std::string> row = {_f("layer {}", l)};
        for (std::size_t h = 0; h < ca->accuracy.shape(1); ++h) {
          row.push_back(fmt::format("{:.1f}%", 100.0 * ca->accuracy(l, h)));
          if (ca->accuracy(l, h) > ca->accuracy(bl, bh)) bl = l, bh = h;
        }
        row.resize(at.header().size(), "");
        at.add(row);
      }
      nar.table(at, true);
      nar.record("alignment_accuracy", ca->accuracy);
      const double best = ca->accuracy(bl, bh);
      nar.result(_f("chapter 08 Transformer: best head {} ({:.1f}%); Bahdanau {:.1f}% on the same {} words",
                             head_name(bl, bh), 100.0 * best, 100.0 * bah_acc, ca->words));
      if (!nar.quiet()) {
        const PairAttention ta = transformer_attention(*tf, ex_pair, corpus.source_vocab, corpus.target_vocab);
        const Mat full = slice_of(ta.cross[bl], bh);  // (len(tgt) + 1, S): the <eos> row last
        Mat head = xt::zeros<float>({ex_pair.tgt.size(), full.shape(1)});
        for (std::size_t i = 0; i < head.shape(0); ++i)
          for (std::size_t j = 0; j < head.shape(1); ++j) head(i, j) = full(i, j);
        HeatmapStyle hs;
        hs.vmin = 0.0;
        hs.vmax = 1.0;
        std::string left = format_heatmap(head, ex_pair.tgt, ex_pair.src, hs), right = format_heatmap(truth, ex_pair.tgt, ex_pair.src, hs);
        without_last_line(left);
        without_last_line(right);
        std::cout << side_by_side({left, right}, {"Transformer " + head_name(bl, bh), _("true alignment")});
      }
      summary.add({_("2 … the Transformer's best head"), _f("{}: {:.1f}% argmax hits", head_name(bl, bh), 100.0 * best),
                   best >= 0.8 ? _("holds") : best >= 0.5 ? _("partly") : _("does not hold")});
    } else {
      nar.say(_("the Transformer's cross-attention heads (chapter 08): not available yet, not measured."));
    }
    nar.code("attn/studies/interpretability.hpp: seq2seq_alignment_accuracy, transformer_alignment");
    nar.why(_("the corpus generator knows which source word each target word translates, reorderings too."));

    // ---------------------------------------------------------------- 5. claim 3
    nar.step(_("Claim 3: some heads collapse to uniform"), "H_i / log n_i ≥ 0.95", "Clark et al. 2019");
    std::vector<HeadEditSpec> flat;
    std::string flat_names;
    for (const HeadStat& s : stats)
      if (s.uniformity >= 0.95) {
        flat.push_back({s.layer, s.head, HeadEdit::zero, 1});
        flat_names += (flat_names.empty() ? "" : ", ") + fmt::format("{} ({:.3f})", head_name(s.layer, s.head), s.uniformity);
      }
    for (std::size_t l = 0; l < L; ++l) {
      std::string unif;
      for (std::size_t h = 0; h < H; ++h) unif += fmt::format("  {} {:.2f}", head_name(l, h), stats[l * H + h].uniformity);
      nar.say(_f("H / log n, layer {}:{}", l, unif));
    }
    const std::vector<int> pred = repeat_targets(eval, 0);
    summary.add({_("3 heads collapse to uniform"), _f("induction: {} of {} heads within 5%", flat.size(), L * H),
                 flat.empty() ? _("not here") : _("holds")});
    if (flat.empty()) {
      nar.result(_f("verdict: no head of the induction model is within 5% of uniform (0 of {})", L * H));
    } else {
      const OutputChange c = edit_effect(m, eval.tokens, pred, eval.batch, flat);
      nar.result(_f("{} of {} heads within 5% of uniform: {}", flat.size(), L * H, flat_names));
      nar.result(_f("zeroing all of them changes the repeat loss by {:+.4f} (total variation {:.4f})",
                             c.loss_change, c.tvd));
      nar.result(_f("verdict: collapsed heads exist here, and removing them {}", std::abs(c.loss_change) < 0.05
                        ? _("barely matters (|Δloss| < 0.05)") : _("does matter (|Δloss| ≥ 0.05)")));
    }
    // The other models' heads: counted (their forward passes take no head edits, so no ablation).
    auto count_flat = [&](const std::vector<HeadStat>& hs, const char* model) {
      std::string names;
      std::size_t n = 0;
      for (const HeadStat& h : hs)
        if (h.uniformity >= 0.95 && n++ < 6) names += (n > 1 ? ", " : "") + head_name(h.layer, h.head);
      nar.result(n ? _f("{}: {} of {} heads within 5% of uniform: {}{}", model, n, hs.size(), names, n > 6 ? ", …" : "")
                   : _f("{}: {} of {} heads within 5% of uniform", model, n, hs.size()));
      return n;
    };
    if (!lm_text.empty()) {
      const std::size_t n = count_flat(lm_text, _("chapter 09 LM on held-out text"));
      summary.add({_("3 … in the chapter 09 LM"), _f("{} of {} heads within 5%", n, lm_text.size()),
                   n ? _("holds") : _("not here")});
    }
    if (ca) {
      const std::size_t n = count_flat(ca->enc, _("chapter 08 encoder"));
      summary.add({_("3 … in the chapter 08 encoder"), _f("{} of {} heads within 5%", n, ca->enc.size()),
                   n ? _("holds") : _("not here")});
    }
    nar.code("attn/attention/attention_stats.hpp: uniformity; attn/studies/interpretability.hpp: edit_effect");
    nar.why(_("a uniform head averages everything it can see: a bag of words, not a pointer."));

    // ---------------------------------------------------------------- 6. claim 4
    nar.step(_("Claim 4: perturbed weights, same output"), "TVD = ½ Σ|p − p'|", "Jain & Wallace 2019 §4");
    const OutputChange seeds = model_difference(a.model, b.model, eval.tokens, pred, eval.batch);
    const double seed_dloss = std::abs(seeds.loss_change);
    nar.result(_f("baseline: two models trained from seeds {} and {}: TVD {:.4f}, |Δloss| {:.4f}", meta(a.md, "seed"),
                           meta(b.md, "seed"), seeds.tvd, seed_dloss));
    Table pt({_("head"), _("edit"), "TVD", _("Δ repeat loss")});
    std::size_t below = 0, edits = 0;
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h)
        for (HeadEdit e : {HeadEdit::permute, HeadEdit::uniform, HeadEdit::zero}) {
          const OutputChange c = edit_effect(m, eval.tokens, pred, eval.batch, {{l, h, e, 11}});
          pt.add({head_name(l, h), edit_label(e), fmt::format("{:.4f}", c.tvd), fmt::format("{:+.4f}", c.loss_change)});
          below += c.tvd <= seeds.tvd;
          ++edits;
        }
    nar.table(pt, true);
    nar.say(_("permute: each row's weights shuffled among the keys it may see; uniform: every visible key weighted "
              "alike; zero: all weights 0, so the head adds nothing"));
    nar.result(_f("verdict: {} of {} single-head edits change the output less than another seed does", below, edits));
    if (below < edits)
      nar.result(_f("the other {} change it more: those heads' weights carry the computation", edits - below));
    summary.add({_("4 perturbing weights changes little"), _f("{} of {} edits below the seed TVD {:.3f}", below, edits, seeds.tvd),
                 2 * below > edits ? _("mostly holds") : 2 * below == edits ? _("half") : _("mostly does not")});
    nar.say(_("papers: Jain & Wallace report that permuting weights often leaves BiLSTM classifiers' outputs nearly "
              "unchanged; Wiegreffe & Pinter answer that the seed-to-seed change is the yardstick to judge that by."));
    nar.code("attn/attention/head_intervention.hpp: edit_head_weights; attn/studies/interpretability.hpp: edit_effect, model_difference");
    nar.why(_("if a head's weights can be shuffled freely, they cannot be what the prediction rests on."));

    // ---------------------------------------------------------------- 7. claim 5
    nar.step(_("Claim 5: gradients beat attention"), _("Kendall τ vs leave-one-out"), "Jain & Wallace 2019 §4.1");
    // Query: the last token of the second repeat, whose one earlier copy's successor is the answer.
    std::vector<std::vector<int>> seqs;
    std::vector<std::size_t> queries;
    for (std::size_t s = 0; s < std::min<std::size_t>(32, eval.batch); ++s) {
      seqs.push_back(ex_tokens[s]);
      queries.push_back(2 * eval.periods[s] - 2);
    }
    const ImportanceAgreement ag = importance_agreement(m, seqs, queries, 5);
    Table kt({_("ranking"), _("Kendall τ vs leave-one-out"), _("vs gradient × input"), _("top-1 = LOO's")});
    Vec tau = xt::zeros<float>({L});
    double best_attn = -1.0;
    for (std::size_t l = 0; l < L; ++l) {
      kt.add({_f("attention, layer {}", l), fmt::format("{:+.3f}", ag.attn_vs_loo[l]),
              fmt::format("{:+.3f}", ag.attn_vs_grad[l]), fmt::format("{:.0f}%", 100.0 * ag.attn_top1[l])});
      tau(l) = float(ag.attn_vs_loo[l]);
      best_attn = std::max(best_attn, ag.attn_vs_loo[l]);
    }
    kt.add({_("gradient × input"), fmt::format("{:+.3f}", ag.grad_vs_loo), "—", fmt::format("{:.0f}%", 100.0 * ag.grad_top1)});
    kt.add({_("uniform attention"), fmt::format("{:+.3f}", ag.uniform_vs_loo), "—", "—"});
    kt.add({_f("random scores (s.e. {:.3f})", ag.random_spread), fmt::format("{:+.3f}", ag.random_vs_loo), "—", "—"});
    nar.table(kt, true);
    nar.say(_("leave-one-out (LOO): how much the loss rises when one earlier token is hidden from every query; "
              "Kendall τ: +1 when two rankings of the tokens agree, 0 when unrelated, −1 when reversed"));
    nar.record("kendall_tau", tau);
    nar.result(_f("over {} sequences, each at the last token of its second repeat (one earlier copy to find)",
                           ag.sequences));
    nar.result(_f("verdict: {} (τ {:+.3f} vs the best attention layer's {:+.3f})",
                  ag.grad_vs_loo > best_attn ? _("gradients agree with leave-one-out better")
                                             : _("attention agrees with leave-one-out at least as well"),
                           ag.grad_vs_loo, best_attn));
    summary.add({_("5 gradients beat attention"), _f("τ: gradient {:+.3f}, attention ≤ {:+.3f}", ag.grad_vs_loo, best_attn),
                 ag.grad_vs_loo > best_attn ? _("holds") : _("does not hold")});
    nar.say(_("papers: Jain & Wallace find weak τ between attention and gradient or leave-one-out rankings in BiLSTM "
              "classifiers, and a stronger one between gradients and leave-one-out."));
    nar.code("attn/studies/interpretability.hpp: token_importance, importance_agreement; attn/attention/attention_stats.hpp: kendall_tau");
    nar.why(_("leave-one-out asks the model directly; attention and gradients are two cheaper guesses at it."));

    // ---------------------------------------------------------------- 8. summary
    nar.step(_("What held here"), "", _("on this course's models"));
    nar.table(summary, /*as_result=*/true);
    nar.say(_("to look at every head yourself: --html FILE (offline), or BertViz with --export (see README)."));
    nar.takeaway({
        _f("Induction: {} (previous token) {} {} (prefix matching {:.2f}).", head_name(0, prev_head),
                    composes ? _("feeds") : _("and"), head_name(1, ind_head), stats[H + ind_head].prefix_matching),
        _f("Second-repeat loss {:.3f}; {:.3f} with {} zeroed, {:.3f} with {} zeroed.", base.second, worst_prev,
                    head_name(0, prev_head), worst_ind, head_name(1, ind_head)),
        _f("Alignment: Bahdanau's argmax hits the true source word for {:.1f}% of target words.", 100.0 * bah_acc),
        _f("Perturbation: {} of {} single-head edits move the output less than another seed does.", below, edits),
    });
  });
}
