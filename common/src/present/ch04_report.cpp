// Chapter 04's reports (see attn/present/ch04_report.hpp).
#include "attn/present/ch04_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "attn/attention/gqa.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

std::string si_count(double x) {
  if (x >= 1e9) return fmt::format("{:.2f}G", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.2f}M", x / 1e6);
  if (x >= 1e3) return fmt::format("{:.1f}K", x / 1e3);
  return fmt::format("{:.0f}", x);
}

namespace {
// The widest line of a block under its title.
std::size_t block_width(const std::string& block, const std::string& title) {
  std::size_t w = display_width(title), start = 0;
  while (start < block.size()) {
    std::size_t end = block.find('\n', start);
    if (end == std::string::npos) end = block.size();
    w = std::max(w, display_width(block.substr(start, end - start)));
    start = end + 1;
  }
  return w;
}
}  // namespace

std::string maps_in_rows(const std::vector<std::string>& labelled, const std::vector<std::string>& bare,
                         const std::vector<std::string>& titles, std::size_t max_width) {
  return maps_in_rows(labelled, bare, titles, titles, max_width);
}

std::string maps_in_rows(const std::vector<std::string>& labelled, const std::vector<std::string>& bare,
                         const std::vector<std::string>& labelled_titles, const std::vector<std::string>& bare_titles,
                         std::size_t max_width) {
  const std::size_t gap = 3, indent = 2;
  std::string out;
  for (std::size_t first = 0; first < labelled.size();) {
    std::vector<std::string> row = {labelled[first]}, row_titles = {labelled_titles[first]};
    std::size_t used = indent + block_width(labelled[first], labelled_titles[first]), last = first + 1;
    while (last < bare.size() && used + gap + block_width(bare[last], bare_titles[last]) <= max_width) {
      used += gap + block_width(bare[last], bare_titles[last]);
      row.push_back(bare[last]);
      row_titles.push_back(bare_titles[last++]);
    }
    if (first > 0) out += "\n";
    out += side_by_side(row, row_titles, gap, std::string(indent, ' '));
    first = last;
  }
  return out;
}

void show_head_maps(Narrator& nar, const Tensor3& weights, const Labels& words) {
  nar.record("weights", weights);
  if (nar.quiet()) return;
  const std::size_t heads = weights.shape(0), n = weights.shape(1);
  Labels initials;  // first letters keep four maps on one screen
  for (const auto& w : words) initials.push_back(w.substr(0, 1));
  // Each map twice: with the words as row labels (for the first map of a row of maps) and without.
  std::vector<std::string> labelled, bare, labelled_titles, bare_titles;
  const double vmax = xt::amax(weights)();  // one scale for every head, up to the largest weight
  HeatmapStyle grid_only{0.0, vmax};
  grid_only.legend = false;  // one legend under all the maps
  auto without_newline = [](std::string map) { return map.substr(0, map.size() - 1); };
  // A title starts over its grid's first column: after format_heatmap's 4-column indent, the row
  // labels (as wide as the widest, 1 to 12 columns) and a space. A bare map's labels are empty.
  std::size_t label_w = 1;
  for (const auto& w : words) label_w = std::max(label_w, std::min<std::size_t>(12, display_width(w)));
  for (std::size_t h = 0; h < heads; ++h) {
    labelled.push_back(without_newline(format_heatmap(slice_of(weights, h), words, initials, grid_only)));
    bare.push_back(without_newline(format_heatmap(slice_of(weights, h), Labels(n, ""), initials, grid_only)));
    labelled_titles.push_back(std::string(4 + label_w + 1, ' ') + _f("head {}", h));
    bare_titles.push_back(std::string(4 + 1 + 1, ' ') + _f("head {}", h));
  }
  nar.say(_f("weights (h×n×n) = ({}×{}×{}), one heatmap per head, rows = queries; shades from 0 to the largest "
             "weight, {:.2f}:", heads, n, n, vmax));
  std::fputs(maps_in_rows(labelled, bare, labelled_titles, bare_titles, terminal_columns()).c_str(), stdout);
  nar.say(heatmap_legend(slice_of(weights, 0), {0.0, vmax}));
  for (std::size_t i = 0; i < n; ++i)  // a repeated word: the same row in every head (no positions yet)
    for (std::size_t j = i + 1; j < n; ++j) {
      if (words[i] != words[j]) continue;
      const float gap = xt::amax(xt::abs(xt::view(weights, xt::all(), i, xt::all()) -
                                         xt::view(weights, xt::all(), j, xt::all())))();
      if (gap <= 1e-6f)
        nar.say(_f("look at: rows {} and {} (both '{}') are identical in every head: attention alone has no "
                   "notion of position (chapter 05)", i, j, words[i]));
      return;
    }
}

void report_head_diversity(Narrator& nar, const HeadDiversity& h) {
  if (h.heads < 2)
    nar.result(_("one head: nothing to compare — with h = 1 this is chapter 03's single attention"));
  else
    nar.result(_f("largest difference between two heads' weights: {:.3f} — {}", h.most_different,
                  h.differ.holds() ? _("the heads' random projections give different maps")
                                   : _("the heads attend almost alike")));
}

int near_shade_edge(double x, double vmax, double tol) {
  const double step = vmax / 5.0;  // the edges stand at step, 2·step, 3·step, 4·step
  int nearest = 0;
  for (int k = 1; k <= 4; ++k)
    if (nearest == 0 || std::abs(x - k * step) < std::abs(x - nearest * step)) nearest = k;
  // near: within tol, and within a quarter of the spacing (closely spaced edges are near every x)
  return std::abs(x - nearest * step) <= std::min(tol, step / 4.0) ? nearest : 0;
}

void report_near_uniform(Narrator& nar, const NearUniformRows& r, const Labels& words) {
  const double vmax = r.largest;
  static const char* const shades[] = {"' '", "'░'", "'▒'", "'▓'", "'█'"};  // format_heatmap's five levels
  const int edge = near_shade_edge(r.uniform, vmax, r.tol);
  if (r.near == 0)
    nar.say(_f("uniform weight 1/n = {:.2f}; no row stays within {:.2f} of it at every word, so each row's shades "
               "show a preference", r.uniform, r.tol));
  else {
    std::vector<std::string> rows;  // "head 0: eats, fish"
    for (std::size_t k = 0; k < r.which.size(); ++k) {
      const std::size_t head = r.which[k].first, row = r.which[k].second;
      const std::string word = row < words.size() ? words[row] : std::to_string(row);
      if (k > 0 && r.which[k - 1].first == head) rows.back() += ", " + word;
      else rows.push_back(_f("head {}: {}", head, word));
    }
    if (edge > 0)
      nar.say(_f("uniform weight 1/n = {:.2f}, within {:.2f} of a shade's edge ({:.2f}): {} of the {} rows stay "
                 "within {:.2f} of it at every word ({}), so their scattered {} and {} marks are rounding around "
                 "uniform, not a preference (--export writes the numbers: weights.npy)", r.uniform, r.tol,
                 edge * vmax / 5.0, r.near, r.rows, r.tol, fmt::join(rows, _("; ")), shades[edge - 1],
                 shades[edge]));
    else
      nar.say(_f("uniform weight 1/n = {:.2f}: {} of the {} rows stay within {:.2f} of it at every word ({}); "
                 "their even shade is no preference (--export writes the numbers: weights.npy)", r.uniform, r.near,
                 r.rows, r.tol, fmt::join(rows, _("; "))));
  }
}

void report_two_targets(Narrator& nar, const TwoTargets& t) {
  nar.say(_f("why not one big head? A query that wants two words, '{}' and '{}', among '{}', '{}', '{}' (queries "
             "and keys set by hand, entries 0 or {:.0f}; Vaswani et al. 2017, §3.2.2: a single head averages):",
             t.words[0], t.words[1], t.words[0], t.words[1], t.words[2], t.gain));
  const std::string g = fmt::format("{:.0f}", t.gain);
  nar.say(_f("one head (d_k = 2): q = ({}, {}); keys {} = ({}, 0), {} = (0, {}), {} = (0, 0). Two heads (d_k = 1 "
             "each): head 0 takes the first entry of q and of every key, head 1 the second; each divides by its "
             "own √d_k.", g, g, t.words[0], g, t.words[1], g, t.words[2]));
  Table tab({_("weights of the query"), t.words[0], t.words[1], t.words[2]});
  auto row = [&](const std::string& name, const std::vector<double>& w) {
    tab.add({name, fmt::format("{:.3f}", w[0]), fmt::format("{:.3f}", w[1]), fmt::format("{:.3f}", w[2])});
  };
  row(_("one head, d_k = 2"), t.one_head);
  row(_("two heads: head 0, d_k = 1"), t.two[0]);
  row(_("two heads: head 1, d_k = 1"), t.two[1]);
  nar.table(tab, /*as_result=*/true);
  nar.result(_f("the one head gives each word at most {:.3f}, so its output is a blend of the two values; each of "
                "the two heads puts at least {:.3f} on its own word (this course's test: at least {:.2f}): {}",
                t.one_head_best, t.two_heads_own, kTwoTargetsBound, outcome_word(t.keeps_both.outcome)));
  // With one-hot values (v_red = (1, 0, 0), …) an output is its weights row, so the rows above are the outputs.
  auto vec = [](const std::vector<double>& w) { return fmt::format("({:.2f}, {:.2f}, {:.2f})", w[0], w[1], w[2]); };
  nar.say(_f("what comes out, with one-hot values ({} = (1, 0, 0), {} = (0, 1, 0), {} = (0, 0, 1)): the one head "
             "returns {}, one vector in which {} and {} are mixed; the two heads, concatenated, return [{} ; "
             "{}], {} kept in head 0's half and {} in head 1's.", t.words[0], t.words[1], t.words[2],
             vec(t.one_head), t.words[0], t.words[1], vec(t.two[0]), vec(t.two[1]), t.words[0], t.words[1]));
}

void report_head_cost(Narrator& nar, const HeadCost& many, const HeadCost& one, std::size_t n, std::size_t d_model) {
  nar.say(_("FLOPs: floating-point operations, counted from the matrix sizes (not timed)"));
  Table tab({_("cost"), _f("h = {}", many.heads), _("h = 1")},
            _f("what the heads cost, n = {} words, d_model = {} (a multiply-add counts 2)", n, d_model));
  auto cells = [&](const std::string& name, double a, double b) {
    tab.add({name, fmt::format("{:.0f}", a), fmt::format("{:.0f}", b)});
  };
  cells(_("parameters 4·d_model²"), many.params, one.params);
  cells(_("projection FLOPs 8·n·d_model²"), many.projection_flops, one.projection_flops);
  cells(_("QKᵀ and AV FLOPs 4·n²·d_model"), many.score_flops, one.score_flops);
  cells(_("score entries h·n² (softmax exps)"), many.score_entries, one.score_entries);
  nar.table(tab, /*as_result=*/true);
  if (many.params == one.params && many.projection_flops == one.projection_flops && many.score_flops == one.score_flops)
    nar.result(_f("splitting costs no parameters and no multiply-adds; it stores {:.0f}× as many scores",
                  many.score_entries / one.score_entries));
}

void report_layer_agreement(Narrator& nar, const Agreement& layer, const Agreement* pytorch) {
  nar.result(_f("max |output − multi_head_forward (the layer training uses)| = {:.1e} (criterion ≤ 1e-5: {})",
                layer.max_diff,
                layer.agree.holds() ? _("the same layer") : _("they disagree")));
  if (pytorch)
    nar.result(_f("PyTorch parity: nn.MultiheadAttention (16 wide, 4 heads, biases) vs ours on golden inputs "
                  "(inputs and outputs saved from PyTorch in data/golden/mha; other inputs than above, with biases): "
                  "max |diff| = {:.1e} (criterion ≤ 1e-5): {}", pytorch->max_diff, outcome_word(pytorch->agree.outcome)));
}

void report_transformer_cost(Narrator& nar, const TransformerConfig& cfg, const std::vector<std::size_t>& lengths) {
  const TransformerParams tp = transformer_params(cfg);
  const LayerCost enc = encoder_layer_cost(cfg, 1), dec = decoder_layer_cost(cfg, 1, 1);
  nar.say(_("FFN: the position-wise feed-forward network after attention, d_model → d_ff → d_model; d_ff: its "
            "hidden width; norms: the LayerNorms' gains γ and shifts β (a LayerNorm brings each token's vector to "
            "mean 0 and variance 1, then scales it by γ and shifts it by β); every linear layer is counted with its "
            "bias: attention 4·d² + 4·d, feed-forward 2·d·d_ff + d_ff + d"));
  Table params({_("part"), _("attention"), _("feed-forward"), _("norms"), _("total")});
  params.add({_("encoder layer"), si_count(enc.attention_params), si_count(enc.ffn_params), si_count(enc.norm_params),
              si_count(enc.params())});
  params.add({_("decoder layer"), si_count(dec.attention_params), si_count(dec.ffn_params), si_count(dec.norm_params),
              si_count(dec.params())});
  params.add({_f("{} + {} layers", cfg.n_encoder, cfg.n_decoder), "", "", "", si_count(tp.encoder + tp.decoder)});
  params.add({_f("embedding (shared, {}×{})", cfg.vocab, cfg.d_model), "", "", "", si_count(tp.embedding)});
  params.add({_("model"), "", "", "", si_count(tp.total())});
  nar.table(params, /*as_result=*/true);
  nar.result(_f("our count {:.1f}M vs the paper's 65M (Table 3; its exact vocabulary and rounding are not given)",
                tp.total() / 1e6));
  Table flops({"n", _("projections"), _("scores QKᵀ, AV"), _("feed-forward"), _("attention share")},
              _("FLOPs of one encoder layer on one sequence of n tokens (a multiply-add counts 2)"));
  for (std::size_t len : lengths) {
    const LayerCost c = encoder_layer_cost(cfg, len);
    flops.add({std::to_string(len), si_count(c.projection_flops), si_count(c.score_flops), si_count(c.ffn_flops),
               fmt::format("{:.0f}%", 100.0 * c.attention_share())});
  }
  nar.table(flops, /*as_result=*/true);
  nar.say(_f("d = d_model = {}, d_ff = {}, h = {}; attention share = (projections + scores) / (projections + "
             "scores + feed-forward)", cfg.d_model, cfg.d_ff, cfg.n_heads));
}

void explain_transformer_cost(Narrator& nar, const TransformerConfig& cfg, const std::vector<std::size_t>& lengths) {
  const AttentionCrossings x = attention_crossings(cfg, lengths);
  if (x.half_the_work && x.scores_match_ffn)
    nar.why(_f("projections and FFN grow like n, scores like n²: attention is half the work from n = {} on, and the "
               "scores alone match the feed-forward from n = {} (n = d_ff = {}); beyond that attention dominates.",
               x.half_the_work, x.scores_match_ffn, cfg.d_ff));
  else
    nar.why(_("projections and FFN grow like n, scores like n²: at these lengths attention stays the smaller part."));
}

std::string gqa_caption(std::size_t heads, std::size_t kv_heads) {
  const std::string q = heads == 1 ? _("1 query head") : _f("{} query heads", heads);
  const std::string kv = kv_heads == 1 ? _("1 K/V head") : _f("{} K/V heads", kv_heads);
  return kv_heads == heads ? _f("GQA: {}, {} (= MHA: h = {} cannot be split into two groups)", q, kv, heads)
                           : _f("GQA: {}, {} (step 2's K/V heads averaged in groups)", q, kv);
}

void define_gqa(Narrator& nar) {
  nar.say(_("MHA: multi-head attention as in steps 1–4, every query head with its own K/V head; MQA / GQA: "
            "multi-query / grouped-query attention; g: the number of K/V heads (MQA: g = 1); KV cache: the keys "
            "and values of past tokens, stored so that decoding does not recompute them"));
}

void report_gqa(Narrator& nar, const Agreement& gqa, const std::vector<GqaPoolingCost>& pooled) {
  nar.result(_f("GQA == MHA with each K/V head repeated for its group: max |diff| = {:.1e} (float32 rounding, "
                "criterion ≤ 1e-6): {}", gqa.max_diff, outcome_word(gqa.agree.outcome)));
  bool any_pooled = false;
  for (std::size_t i = 0; i < pooled.size(); ++i) {
    const GqaPoolingCost& c = pooled[i];
    if (i > 0 && c.kv_heads == pooled[i - 1].kv_heads) continue;  // h = 1: GQA is MQA
    const std::string name = c.kv_heads == 1 ? "MQA" : "GQA";
    nar.result(c.kv_heads == c.heads
                   ? _f("{} (g = {}) from the MHA of steps 2–4: the same weights, max |{} − MHA| = 0 (g = h: nothing "
                        "pooled)", name, c.kv_heads, name)
                   : _f("{} (g = {}) from the MHA of steps 2–4, each group's K/V heads averaged: relative error "
                        "‖{} − MHA‖_F / ‖MHA‖_F = {:.3f} / {:.3f} = {:.0f}%; outputting zeros would give 100% (max |{} − MHA| = "
                        "{:.3f})", name,
                        c.kv_heads, name, c.frobenius_diff, c.frobenius_output, 100.0 * c.relative(), name,
                        c.max_diff));
    if (c.kv_heads == c.heads) continue;
    const Verdict near = pooling_beats_zeros(c);
    if (pooling_keeps_most(c).holds())
      nar.result(_f("so {} keeps most of MHA's output here: its error, {:.0f}%, is at most half that of outputting "
                    "zeros (the course's criterion)", name, 100.0 * c.relative()));
    else
      nar.result(near.holds()
                   ? _f("so {}'s error is only {:.0f} points below the 100% of outputting zeros: these heads are "
                        "random and unrelated, and a group's averaged K/V head resembles none of its members",
                        name, 100.0 * (1.0 - c.relative()))
                   : _f("so {} is no nearer MHA's output than zeros are ({:.0f}% ≥ 100%): these heads are random and "
                        "unrelated, and a group's averaged K/V head resembles none of its members",
                        name, 100.0 * c.relative()));
    any_pooled = true;
  }
  if (any_pooled)
    nar.say(_("averaging loses nothing where a group's heads are equal (tests/core/test_multi_head_study.cpp "
              "checks it); the random heads here are far from equal."));
  nar.say(_("averaging a group's K/V heads is how Ainslie et al. 2023 (§2) turn an MHA checkpoint (a saved set of "
            "trained weights) into GQA; "
            "the figures above are for random, untrained heads; the paper then trains for 5% of the original "
            "pre-training steps (uptraining), which wins back most of the quality MQA lost (its Figure 5)"));
  nar.say(_("bf16 (bfloat16): 16-bit floats, 2 bytes per stored number; LLaMA 2 uses GQA in its 34B and 70B "
            "models (Touvron et al. 2023, \"Llama 2\", §A.2.1)"));
  Table kv({_("attention"), _("K/V heads"), _("attn params/layer"), _("KV cache/token, 80 layers (bf16)")},
           _("LLaMA-2-70B-like: d_model 8192, 64 heads × d_k 128, 80 layers"));
  nar.say(_("source of these sizes: the released Llama-2-70b model's config.json (hidden_size 8192, "
            "num_attention_heads 64, num_key_value_heads 8, num_hidden_layers 80); the Llama 2 paper's "
            "model table lists no width, head or layer counts"));
  for (std::size_t kvh : {64u, 8u, 1u}) {
    const AttentionParamCount c = attention_param_count(8192, 64, kvh, 128);
    const std::size_t bytes = kv_cache_bytes_per_token(80, kvh, 128);
    kv.add({kvh == 64 ? "MHA" : kvh == 1 ? "MQA" : _("GQA (LLaMA 2 70B's choice)"), std::to_string(kvh),
            si_count(double(c.total())), _f("{:.0f} KiB", double(bytes) / 1024.0)});
  }
  nar.table(kv, /*as_result=*/true);
}

std::vector<std::string> ch04_takeaway(const Agreement& layer, const Agreement* pytorch, const TransformerConfig& cfg,
                                       const TwoTargets& two) {
  const TransformerParams tp = transformer_params(cfg);
  const bool matches = layer.agree.holds() && (pytorch == nullptr || pytorch->agree.holds());
  return {
      two.keeps_both.holds()
          ? _f("Why several heads: one head that wants two words gives each at most {:.3f}; two heads of half the "
               "width put {:.3f} on their own word each (step 3), at the same parameters and FLOPs (step 4).",
               two.one_head_best, two.two_heads_own)
          : _f("Why several heads: in step 3's example no head committed to its word ({:.2f} < {:.2f}).",
               two.two_heads_own, kTwoTargetsBound),
      matches ? (pytorch ? _("Multi-head attention = split Q, K, V into h column blocks, attend in each, concatenate, "
                             "multiply by W_O; it matches PyTorch's nn.MultiheadAttention; with h = 1 it is, by "
                             "construction, chapter 03's single head followed by W_O.")
                         : _("Multi-head attention = split Q, K, V into h column blocks, attend in each, concatenate, "
                             "multiply by W_O; with h = 1 it is, by construction, chapter 03's single head followed by "
                             "W_O."))
              : _("Multi-head attention = split, attend per head, concatenate, W_O; here a parity check failed "
                  "(step 4)."),
      _f("Original Transformer: ~{:.0f}M parameters by our count (paper: 65M); attention's FLOP share grows with "
         "n: {:.0f}% at n = 32, {:.0f}% at n = 1024, {:.0f}% at n = 8192.", tp.total() / 1e6,
         100.0 * encoder_layer_cost(cfg, 32).attention_share(), 100.0 * encoder_layer_cost(cfg, 1024).attention_share(),
         100.0 * encoder_layer_cost(cfg, 8192).attention_share()),
      _f("GQA/MQA shrink the KV cache by h/g ({:.1f} MiB → {:.0f} KiB → {:.0f} KiB per token at 70B-like sizes).",
         double(kv_cache_bytes_per_token(80, 64, 128)) / (1024.0 * 1024.0),
         double(kv_cache_bytes_per_token(80, 8, 128)) / 1024.0, double(kv_cache_bytes_per_token(80, 1, 128)) / 1024.0),
  };
}

}  // namespace attn
