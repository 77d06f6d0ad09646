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
  if (!path) throw std::runtime_error(fmt::format("no model {} (run with --train to make it)", kModelFiles[which]));
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
  ch.app().add_option("--norm", norm, "which chapter 08 Transformer to measure")->capture_default_str()
      ->check(CLI::IsMember({"post", "pre"}));
  ch.app().add_flag("--train", train, "retrain both induction models (seeds S and S + 1) and rewrite data/ch10/");
  ch.app().add_option("--train-steps", tc.steps, "Adam steps per model with --train")->capture_default_str()->check(CLI::Range(1, 200000));
  ch.app().add_option("--eval", eval_n, "evaluation sequences")->capture_default_str()->check(CLI::Range(4, 1024));
  ch.set_question("Question: attention weights are easy to draw — what do they actually tell us about a model?");

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
    Table summary({"claim", "measured here", "verdict"});

    // ---------------------------------------------------------------- 1. looking
    nar.step("Looking: every layer × head", "P = softmax(QKᵀ/√d_h + M)", "Vig 2019 (BertViz)");
    nar.result(fmt::format("induction model: {} attention-only layers × {} heads, d = {}, vocabulary {}, {} parameters", L, H,
                           m.cfg.d_model, m.cfg.vocab, parameter_count(m)));
    Rng show_rng(7);
    const InductionBatch shown = induction_batch(show_rng, {tc.task.vocab, 17, 6, 6}, 1);  // 17 > 16: 1-column cells
    const std::vector<int> seq = shown.sequence(0);
    const Labels toks = token_labels(seq);
    const std::vector<Tensor3> w = attn_only_weights(m, seq);
    nar.say(fmt::format("input: 6 random tokens, repeated: {}", fmt::join(toks, " ")));
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
    nar.attention_view({"induction model (2-layer attention-only)", toks, toks, w, true});
    const SentencePair& ex_pair = corpus.test[3];
    if (tf) {
      const PairAttention ta = transformer_attention(*tf, ex_pair, corpus.source_vocab, corpus.target_vocab);
      Labels tgt_in = {"<bos>"}, tgt_out = ex_pair.tgt;
      tgt_in.insert(tgt_in.end(), ex_pair.tgt.begin(), ex_pair.tgt.end());
      tgt_out.push_back("<eos>");
      nar.attention_view({"Transformer encoder self-attention", ex_pair.src, ex_pair.src, ta.enc_self, false});
      nar.attention_view({"Transformer decoder self-attention", tgt_in, tgt_in, ta.dec_self, true});
      nar.attention_view({"Transformer cross-attention (rows: the word predicted)", tgt_out, ex_pair.src, ta.cross, false});
      nar.say(fmt::format("--html also draws the chapter 08 Transformer ({}-Norm): encoder, decoder and cross-attention", norm));
    }
    nar.why("rows are queries, columns keys; a head is a pattern of where each position reads from.");

    // ---------------------------------------------------------------- 2. induction heads
    nar.step("Induction heads", "prefix matching, copying", "Elhage et al. 2021; Olsson et al. 2022");
    if (!a.curve.empty())
      nar.result(fmt::format("training loss ({} steps, every {}): {:.2f} {} {:.2f}", meta(a.md, "steps"), meta(a.md, "curve_every"),
                             a.curve.front(), sparkline(a.curve, 48), a.curve.back()));
    std::vector<std::vector<Tensor3>> ex;
    std::vector<std::vector<int>> ex_tokens;
    for (std::size_t s = 0; s < eval.batch; ++s) {
      ex_tokens.push_back(eval.sequence(s));
      ex.push_back(attn_only_weights(m, ex_tokens.back()));
    }
    const std::vector<HeadStat> stats = head_stats(ex, ex_tokens, true);
    const RepeatLosses base = repeat_losses(m, eval);
    Table ht({"head", "prev-token", "prefix-match", "copying", "2nd-repeat loss if zeroed"});
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
    nar.result(fmt::format("loss on the first repeat {:.3f} (chance: log {} = {:.3f}), on the second {:.3f}",
                           base.first, m.cfg.vocab, std::log(double(m.cfg.vocab)), base.second));
    nar.result(fmt::format("previous-token head {} (score {:.3f}); induction head {} (prefix matching {:.3f})",
                           head_name(0, prev_head), stats[prev_head].previous_token, head_name(1, ind_head),
                           stats[H + ind_head].prefix_matching));
    nar.result(fmt::format("second-repeat loss {:.3f}; with {} zeroed {:.3f} ({:+.3f}); with {} zeroed {:.3f} ({:+.3f})",
                           base.second, head_name(0, prev_head), worst_prev, worst_prev - base.second,
                           head_name(1, ind_head), worst_ind, worst_ind - base.second));
    // K-composition: does the induction head need the previous-token head to find its key?
    std::vector<std::vector<Tensor3>> ex_cut;
    for (const auto& t : ex_tokens) ex_cut.push_back(attn_only_weights(m, t, {{0, prev_head, HeadEdit::zero, 1}}));
    const double pm_cut = head_stats(ex_cut, ex_tokens, true)[H + ind_head].prefix_matching;
    const bool composes = pm_cut < 0.5 * stats[H + ind_head].prefix_matching;
    nar.result(fmt::format("with {} zeroed, {}'s prefix matching goes {:.3f} -> {:.3f}: {}", head_name(0, prev_head),
                           head_name(1, ind_head), stats[H + ind_head].prefix_matching, pm_cut,
                           composes ? "it reads the head's output" : "it finds its key without it"));
    const Mat pm = per_head(head_stats({w}, {seq}, true), L, H, &HeadStat::prefix_matching);
    nar.record("prefix_matching", pm);
    nar.result(fmt::format("on the sequence drawn in step 1: prefix matching of {} = {:.4f}", head_name(1, ind_head),
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
      nar.result(fmt::format("chapter 09 LM ({} steps, {} layers × {} heads), {} random tokens repeated once:",
                             meta(lm_md, "steps"), lm->cfg.n_layers, lm->cfg.n_heads, li.period));
      nar.result(fmt::format("  loss on the first copy {:.3f}, on the second {:.3f} (chance: log {} = {:.3f})", li.first,
                             li.second, lm->cfg.vocab, std::log(double(lm->cfg.vocab))));
      nar.result("  best prefix matching: " + best);
      nar.result(fmt::format("  {} of {} heads score above 0.4 (its weights cannot be edited here: no head ablation)",
                             strong, li.heads.size()));
    } else {
      nar.say("the chapter 09 language model: not available yet (no checkpoint shipped); not measured.");
    }
    nar.why("the first repeat is noise; the second is predictable by finding the token's earlier copy.");

    // ---------------------------------------------------------------- 3. claim 1
    nar.step("Claim 1: shallow heads look near, deep far", "Σ_j P_ij |i − j|", "Dosovitskiy et al. 2021");
    const std::vector<LayerStat> by_layer = layer_means(stats);
    Table lt({"model", "layer", "mean distance", "entropy (nats)", "H / log n"});
    for (const LayerStat& s : by_layer)
      lt.add({"induction", std::to_string(s.layer), fmt::format("{:.2f}", s.distance), fmt::format("{:.3f}", s.entropy),
              fmt::format("{:.3f}", s.uniformity)});
    nar.table(lt, true);
    nar.record("head_entropy", per_head(stats, L, H, &HeadStat::entropy));
    nar.record("head_distance", per_head(stats, L, H, &HeadStat::distance));
    const bool grows = by_layer.back().distance > by_layer.front().distance;
    nar.result(fmt::format("verdict: distance {} with depth here ({:.2f} -> {:.2f} tokens)", grows ? "grows" : "does not grow",
                           by_layer.front().distance, by_layer.back().distance));
    summary.add({"1 distance grows with depth", fmt::format("{:.2f} -> {:.2f} tokens, layer 0 -> {}", by_layer.front().distance,
                                                            by_layer.back().distance, L - 1),
                 grows ? "holds" : "does not hold"});
    nar.say("papers: the ViT paper (Fig. 7) finds attention distance growing with depth, with some");
    nar.say("far-looking heads already in layer 0; Clark et al. (Fig. 4) find broad, high-entropy heads");
    nar.say("in BERT's lower layers.");
    std::vector<HeadStat> lm_text;  // the LM's heads on held-out text (claim 3 counts them too)
    if (lm) {
      const auto text_path = find_data_file("ch09/kjv_valid.txt");
      const auto tok_path = find_data_file("ch09/tokenizer.json");
      if (text_path && tok_path) {
        const std::vector<int> ids = bpe_encode(bpe_load(*tok_path), read_text_file(*text_path));
        lm_text = decoder_lm_text_stats(*lm, ids, 4, 128);
        const std::vector<LayerStat> lm_layers = layer_means(lm_text);
        Table lmt({"model", "layer", "mean distance", "entropy (nats)", "H / log n"});
        for (const LayerStat& ls : lm_layers)
          lmt.add({"chapter 09 LM", std::to_string(ls.layer), fmt::format("{:.2f}", ls.distance),
                   fmt::format("{:.3f}", ls.entropy), fmt::format("{:.3f}", ls.uniformity)});
        nar.table(lmt, true);
        bool rising = true;
        for (std::size_t l = 1; l < lm_layers.size(); ++l) rising = rising && lm_layers[l].distance > lm_layers[l - 1].distance;
        nar.result(fmt::format("chapter 09 LM, 4 × 128 held-out tokens: distance {} layer by layer ({:.2f} -> {:.2f})",
                               rising ? "grows" : "does not grow", lm_layers.front().distance, lm_layers.back().distance));
        summary.add({"1 … in the chapter 09 LM", fmt::format("{:.2f} -> {:.2f} tokens, layer 0 -> {}",
                     lm_layers.front().distance, lm_layers.back().distance, lm_layers.size() - 1),
                     rising ? "holds" : "does not hold"});
      }
    } else {
      nar.say("the chapter 09 LM: not available yet, not measured.");
    }
    std::optional<CrossAlignment> ca;
    if (tf) {
      ca = transformer_alignment(*tf, pairs, corpus.source_vocab, corpus.target_vocab);
      const std::vector<LayerStat> enc_layers = layer_means(ca->enc);
      Table et({"model", "layer", "mean distance", "entropy (nats)", "H / log n"});
      for (const LayerStat& ls : enc_layers)
        et.add({"Transformer encoder", std::to_string(ls.layer), fmt::format("{:.2f}", ls.distance),
                fmt::format("{:.3f}", ls.entropy), fmt::format("{:.3f}", ls.uniformity)});
      nar.table(et, true);
      const bool enc_grows = enc_layers.back().distance > enc_layers.front().distance;
      nar.result(fmt::format("chapter 08 encoder ({}-Norm), {} test sentences: distance {} ({:.2f} -> {:.2f})", norm,
                             pairs.size(), enc_grows ? "grows" : "does not grow", enc_layers.front().distance,
                             enc_layers.back().distance));
      summary.add({"1 … in the chapter 08 encoder", fmt::format("{:.2f} -> {:.2f} tokens, layer 0 -> {}",
                   enc_layers.front().distance, enc_layers.back().distance, enc_layers.size() - 1),
                   enc_grows ? "holds" : "does not hold"});
    } else {
      nar.say("the Transformer's encoder (chapter 08): not available yet, not measured.");
    }
    nar.why("two layers is shallow, but the labour is divided: the previous-token head looks 1 back.");

    // ---------------------------------------------------------------- 4. claim 2
    nar.step("Claim 2: attention learns word alignments", "argmax_j α_ij = a(i)", "Bahdanau et al. 2014");
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
      std::cout << side_by_side({left, right}, {"Bahdanau α (teacher-forced)", "true alignment"});
      nar.say(legend2.substr(legend2.find_first_not_of(' ')));
    }
    Tensor3 align3 = Tensor3::from_shape({1, align.shape(0), align.shape(1)});
    std::copy(align.begin(), align.end(), align3.begin());
    nar.attention_view({"Bahdanau α (chapter 01)", ex_pair.tgt, ex_pair.src, {align3}, false});
    nar.result(fmt::format("Bahdanau (chapter 01): {:.1f}% of {} target words put their largest α on their source word",
                           100.0 * bah_acc, [&] { std::size_t n = 0; for (const auto& p : pairs) n += p.tgt.size(); return n; }()));
    const std::string align_verdict = bah_acc >= 0.8 ? "holds" : bah_acc >= 0.5 ? "partly" : "does not hold";
    nar.result(fmt::format("verdict: {} (holds: ≥ 80% of words; partly: ≥ 50%)", align_verdict));
    summary.add({"2 attention aligns words", fmt::format("Bahdanau: {:.1f}% argmax hits", 100.0 * bah_acc), align_verdict});
    if (ca) {
      Table at({"cross-attention", "head 0", "head 1", "head 2", "head 3"});
      std::size_t bl = 0, bh = 0;
      for (std::size_t l = 0; l < ca->accuracy.shape(0); ++l) {
        std::vector<std::string> row = {fmt::format("layer {}", l)};
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
      nar.result(fmt::format("chapter 08 Transformer: best head {} ({:.1f}%); Bahdanau {:.1f}% on the same {} words",
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
        std::cout << side_by_side({left, right}, {"Transformer " + head_name(bl, bh), "true alignment"});
      }
      summary.add({"2 … the Transformer's best head", fmt::format("{}: {:.1f}% argmax hits", head_name(bl, bh), 100.0 * best),
                   best >= 0.8 ? "holds" : best >= 0.5 ? "partly" : "does not hold"});
    } else {
      nar.say("the Transformer's cross-attention heads (chapter 08): not available yet, not measured.");
    }
    nar.why("the corpus generator knows which source word each target word translates, reorderings too.");

    // ---------------------------------------------------------------- 5. claim 3
    nar.step("Claim 3: some heads collapse to uniform", "H_i / log n_i ≥ 0.95", "Clark et al. 2019");
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
      nar.say(fmt::format("H / log n, layer {}:{}", l, unif));
    }
    const std::vector<int> pred = repeat_targets(eval, 0);
    summary.add({"3 heads collapse to uniform", fmt::format("induction: {} of {} heads within 5%", flat.size(), L * H),
                 flat.empty() ? "not here" : "holds"});
    if (flat.empty()) {
      nar.result(fmt::format("verdict: no head of the induction model is within 5% of uniform (0 of {})", L * H));
    } else {
      const OutputChange c = edit_effect(m, eval.tokens, pred, eval.batch, flat);
      nar.result(fmt::format("{} of {} heads within 5% of uniform: {}", flat.size(), L * H, flat_names));
      nar.result(fmt::format("zeroing all of them changes the repeat loss by {:+.4f} (total variation {:.4f})",
                             c.loss_change, c.tvd));
      nar.result(fmt::format("verdict: collapsed heads exist here, and removing them {}", std::abs(c.loss_change) < 0.05
                                 ? "barely matters (|Δloss| < 0.05)" : "does matter (|Δloss| ≥ 0.05)"));
    }
    // The other models' heads: counted (their forward passes take no head edits, so no ablation).
    auto count_flat = [&](const std::vector<HeadStat>& hs, const char* model) {
      std::string names;
      std::size_t n = 0;
      for (const HeadStat& h : hs)
        if (h.uniformity >= 0.95 && n++ < 6) names += (n > 1 ? ", " : ": ") + head_name(h.layer, h.head);
      nar.result(fmt::format("{}: {} of {} heads within 5% of uniform{}{}", model, n, hs.size(), names, n > 6 ? ", …" : ""));
      return n;
    };
    if (!lm_text.empty()) {
      const std::size_t n = count_flat(lm_text, "chapter 09 LM on held-out text");
      summary.add({"3 … in the chapter 09 LM", fmt::format("{} of {} heads within 5%", n, lm_text.size()),
                   n ? "holds" : "not here"});
    }
    if (ca) {
      const std::size_t n = count_flat(ca->enc, "chapter 08 encoder");
      summary.add({"3 … in the chapter 08 encoder", fmt::format("{} of {} heads within 5%", n, ca->enc.size()),
                   n ? "holds" : "not here"});
    }
    nar.why("a uniform head averages its whole past: a bag of words, not a pointer.");

    // ---------------------------------------------------------------- 6. claim 4
    nar.step("Claim 4: perturbed weights, same output", "TVD = ½ Σ|p − p'|", "Jain & Wallace 2019 §4");
    const OutputChange seeds = model_difference(a.model, b.model, eval.tokens, pred, eval.batch);
    const double seed_dloss = std::abs(seeds.loss_change);
    nar.result(fmt::format("baseline: two models trained from seeds {} and {}: TVD {:.4f}, |Δloss| {:.4f}", meta(a.md, "seed"),
                           meta(b.md, "seed"), seeds.tvd, seed_dloss));
    Table pt({"head", "edit", "TVD", "Δ repeat loss"});
    std::size_t below = 0, edits = 0;
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h)
        for (HeadEdit e : {HeadEdit::permute, HeadEdit::uniform, HeadEdit::zero}) {
          const OutputChange c = edit_effect(m, eval.tokens, pred, eval.batch, {{l, h, e, 11}});
          pt.add({head_name(l, h), head_edit_name(e), fmt::format("{:.4f}", c.tvd), fmt::format("{:+.4f}", c.loss_change)});
          below += c.tvd <= seeds.tvd;
          ++edits;
        }
    nar.table(pt, true);
    nar.result(fmt::format("verdict: {} of {} single-head edits change the output less than another seed does", below, edits));
    if (below < edits)
      nar.result(fmt::format("the other {} change it more: those heads' weights carry the computation", edits - below));
    summary.add({"4 perturbing weights changes little", fmt::format("{} of {} edits below the seed TVD {:.3f}", below, edits, seeds.tvd),
                 2 * below > edits ? "mostly holds" : 2 * below == edits ? "half" : "mostly does not"});
    nar.say("papers: Jain & Wallace report that permuting weights often leaves BiLSTM classifiers'");
    nar.say("outputs nearly unchanged; Wiegreffe & Pinter answer that the seed-to-seed change is the");
    nar.say("yardstick to judge that by.");
    nar.why("if a head's weights can be shuffled freely, they cannot be what the prediction rests on.");

    // ---------------------------------------------------------------- 7. claim 5
    nar.step("Claim 5: gradients beat attention", "Kendall τ vs leave-one-out", "Jain & Wallace 2019 §4.1");
    // Query: the last token of the second repeat, whose one earlier copy's successor is the answer.
    std::vector<std::vector<int>> seqs;
    std::vector<std::size_t> queries;
    for (std::size_t s = 0; s < std::min<std::size_t>(32, eval.batch); ++s) {
      seqs.push_back(ex_tokens[s]);
      queries.push_back(2 * eval.periods[s] - 2);
    }
    const ImportanceAgreement ag = importance_agreement(m, seqs, queries, 5);
    Table kt({"ranking", "Kendall τ vs leave-one-out", "vs gradient × input", "top-1 = LOO's"});
    Vec tau = xt::zeros<float>({L});
    double best_attn = -1.0;
    for (std::size_t l = 0; l < L; ++l) {
      kt.add({fmt::format("attention, layer {}", l), fmt::format("{:+.3f}", ag.attn_vs_loo[l]),
              fmt::format("{:+.3f}", ag.attn_vs_grad[l]), fmt::format("{:.0f}%", 100.0 * ag.attn_top1[l])});
      tau(l) = float(ag.attn_vs_loo[l]);
      best_attn = std::max(best_attn, ag.attn_vs_loo[l]);
    }
    kt.add({"gradient × input", fmt::format("{:+.3f}", ag.grad_vs_loo), "—", fmt::format("{:.0f}%", 100.0 * ag.grad_top1)});
    kt.add({"uniform attention", fmt::format("{:+.3f}", ag.uniform_vs_loo), "—", "—"});
    kt.add({"random scores (± s.e.)", fmt::format("{:+.3f} ± {:.3f}", ag.random_vs_loo, ag.random_spread), "—", "—"});
    nar.table(kt, true);
    nar.record("kendall_tau", tau);
    nar.result(fmt::format("over {} sequences, each at the last token of its second repeat (one earlier copy to find)",
                           ag.sequences));
    nar.result(fmt::format("verdict: {} (τ {:+.3f} vs the best attention layer's {:+.3f})",
                           ag.grad_vs_loo > best_attn ? "gradients agree with leave-one-out better"
                                                      : "attention agrees with leave-one-out at least as well",
                           ag.grad_vs_loo, best_attn));
    summary.add({"5 gradients beat attention", fmt::format("τ: gradient {:+.3f}, attention ≤ {:+.3f}", ag.grad_vs_loo, best_attn),
                 ag.grad_vs_loo > best_attn ? "holds" : "does not hold"});
    nar.say("papers: Jain & Wallace find weak τ between attention and gradient or leave-one-out rankings");
    nar.say("in BiLSTM classifiers, and a stronger one between gradients and leave-one-out.");
    nar.why("leave-one-out asks the model directly; attention and gradients are two cheaper guesses at it.");

    // ---------------------------------------------------------------- 8. summary
    nar.step("What held here", "", "on this course's models");
    nar.table(summary, /*as_result=*/true);
    nar.say("to look at every head yourself: --html FILE (offline), or BertViz with --export (see README).");
    nar.takeaway({
        fmt::format("Induction: {} (previous token) {} {} (prefix matching {:.2f}).", head_name(0, prev_head),
                    composes ? "feeds" : "and", head_name(1, ind_head), stats[H + ind_head].prefix_matching),
        fmt::format("Second-repeat loss {:.3f}; {:.3f} with {} zeroed, {:.3f} with {} zeroed.", base.second, worst_prev,
                    head_name(0, prev_head), worst_ind, head_name(1, ind_head)),
        fmt::format("Alignment: Bahdanau's argmax hits the true source word for {:.1f}% of target words.", 100.0 * bah_acc),
        fmt::format("Perturbation: {} of {} single-head edits move the output less than another seed does.", below, edits),
    });
  });
}
