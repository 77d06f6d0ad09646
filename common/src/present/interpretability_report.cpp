// Chapter 10's presentation (see attn/present/interpretability_report.hpp).
#include "attn/present/interpretability_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attn/data/data_files.hpp"
#include "attn/present/load_or_train.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/present/sparkline.hpp"
#include "attn/present/number_format.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
const char* kModelFiles[] = {"ch10/induction.safetensors", "ch10/induction_seed2.safetensors"};

// "post" → "Post-Norm", "pre" → "Pre-Norm", as chapters 07 and 08 write them.
std::string norm_name(const std::string& norm) { return norm == "pre" ? "Pre-Norm" : "Post-Norm"; }
std::string head_name(std::size_t layer, std::size_t head) { return fmt::format("L{}H{}", layer, head); }
// a − b as a reader recomputes it from the two figures printed with three decimals.
double printed_diff(double a, double b) { return std::round(a * 1000.0) / 1000.0 - std::round(b * 1000.0) / 1000.0; }
std::string metadata_value(const Metadata& md, const std::string& key) {
  const auto it = md.find(key);
  return it == md.end() ? "?" : it->second;
}
Labels id_labels(const std::vector<int>& ids) {
  Labels l;
  for (int id : ids) l.push_back(std::to_string(id));
  return l;
}
// Cuts the last line (a heatmap's legend) off `block` and returns it.
std::string without_last_line(std::string& block) {
  while (!block.empty() && block.back() == '\n') block.pop_back();
  const std::size_t cut = block.rfind('\n');
  std::string last = cut == std::string::npos ? block : block.substr(cut + 1);
  block = cut == std::string::npos ? "" : block.substr(0, cut + 1);
  return last;
}
std::string trimmed(const std::string& s) {
  const std::size_t a = s.find_first_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a);
}
HeatmapStyle unit_style() {
  HeatmapStyle hs;
  hs.vmin = 0.0;
  hs.vmax = 1.0;
  return hs;
}
// Each column's index, its last digit only (0 1 … 9 0 1 …): the ruler above step 1's maps.
Labels digit_ruler(std::size_t n) {
  Labels l;
  for (std::size_t j = 0; j < n; ++j) l.push_back(std::to_string(j % 10));
  return l;
}
// A one-character-per-cell heatmap (more than 16 columns) with a ruler line on top: each column
// label's first character over its column. Every grid line is the row label, then one character
// per column, so the grid starts `width − cols` columns in.
std::string with_ruler(const std::string& map, const Labels& col_labels) {
  const std::string first = map.substr(0, map.find('\n'));
  const std::size_t w = display_width(first), cols = col_labels.size();
  if (cols <= 16 || cols > HeatmapStyle{}.max_side || w < cols) return map;  // labelled already, or averaged down
  std::string ruler(w - cols, ' ');
  for (const std::string& l : col_labels) ruler += l.empty() || static_cast<unsigned char>(l[0]) >= 0x80 ? ' ' : l[0];
  ruler.erase(ruler.find_last_not_of(' ') + 1);
  return ruler + "\n" + map;
}
Mat per_head(const std::vector<HeadStat>& s, std::size_t layers, std::size_t heads, double HeadStat::*field) {
  Mat m = xt::zeros<float>({layers, heads});
  for (const HeadStat& h : s) m(h.layer, h.head) = float(h.*field);
  return m;
}
std::string edit_label(HeadEdit e) {
  switch (e) {
    case HeadEdit::permute: return _("permute");
    case HeadEdit::uniform: return _("uniform");
    case HeadEdit::zero: return _("zero");
  }
  return head_edit_name(e);
}
std::string head_list(const std::vector<HeadStat>& heads, std::size_t at_most) {
  std::string s;
  for (std::size_t i = 0; i < heads.size() && i < at_most; ++i)
    s += (i ? ", " : "") + head_name(heads[i].layer, heads[i].head);
  return heads.size() > at_most ? s + ", …" : s;
}
// Where each last-layer head's darkest cell lies in the rows of the drawn sequence that have an
// earlier copy of their token, one column per place (DrawnPattern): the first two columns are the
// cells the maps' "match" sums, and the verdict is their share of the rows.
Table pattern_table(const std::vector<DrawnPattern>& ps) {
  Table t({_("head"), _("rows"), _("after 1st"), _("after nearer"), _("itself"), _("earlier copy"), _("token 0"),
           _("other"), _("pattern")});
  for (const DrawnPattern& p : ps) {
    const std::size_t named = p.on_copy() + p.self_token + p.same_token + p.first_token;
    const char* word = p.follows.outcome == Outcome::partly ? _("mostly")
                                                            : sentence_for(p.follows.outcome, _("follows"),
                                                                           _("does not"), _("no such rows"));
    t.add({head_name(p.layer, p.head), std::to_string(p.rows), std::to_string(p.first_copy),
           std::to_string(p.later_copy), std::to_string(p.self_token), std::to_string(p.same_token),
           std::to_string(p.first_token), std::to_string(p.rows - std::min(p.rows, named)), word});
  }
  return t;
}
}  // namespace

namespace {
// Weights that are finite but too large (1e38) turn a head's OV circuit non-finite: said when the
// model is loaded, naming the file, the head and the largest tensor of that circuit, before any
// step computes with it (LAPACK, given inf, frees memory twice).
void require_finite_circuits(const AttnOnly& m, const std::string& path) {
  for (std::size_t l = 0; l < m.attn.size(); ++l)
    for (std::size_t h = 0; h < m.cfg.heads; ++h) {
      const Mat ov = ov_circuit(m, l, h);
      if (std::all_of(ov.begin(), ov.end(), [](float x) { return std::isfinite(x); })) continue;
      const std::string layer = fmt::format("layer{}", l);
      const std::pair<std::string, const Mat*> parts[] = {
          {"w_e", &m.w_e}, {layer + ".w_v", &m.attn[l].w_v}, {layer + ".w_o", &m.attn[l].w_o}, {"w_u", &m.w_u}};
      std::string name;
      double largest = -1.0;
      for (const auto& [n, t] : parts)
        for (float x : *t)
          if (double(std::fabs(x)) > largest) largest = std::fabs(x), name = n;
      throw std::runtime_error(_f("{}: layer {} head {}: its OV circuit (w_e · {}.w_v · {}.w_o · w_u) turns "
                                  "non-finite: tensor '{}' holds values up to {:.3g}, too large for float arithmetic",
                                  path, l, h, layer, layer, name, largest));
    }
}
}  // namespace

InductionModel load_or_train_induction(std::size_t which, bool train, const InductionTrainConfig& base, bool progress) {
  InductionModel t;
  t.file = kModelFiles[which];
  std::string path = data_dir() + "/" + t.file;  // where --train writes it
  if (!train) {
    const auto found = find_data_file(t.file);
    if (!found) throw std::runtime_error(_f("no model {} (run with --train to make it)", t.file));
    path = *found;
  }
  InductionTrainConfig cfg = base;
  cfg.seed = base.seed + which;
  load_or_train(
      {path, train, cfg.steps, progress},
      [&](const std::string& p) {
        TensorMap extra;
        t.model = load_attn_only(p, &extra, &t.metadata);
        require_finite_circuits(t.model, p);
        if (extra.count("loss_curve")) t.curve = extra["loss_curve"].data;
      },
      [&](const StepCallback& on_step) {
        cfg.on_step = on_step;
        InductionTrainResult r = train_induction(cfg);
        t.metadata = {{"seed", std::to_string(cfg.seed)}, {"steps", std::to_string(cfg.steps)},
                      {"batch", std::to_string(cfg.batch)}, {"curve_every", std::to_string(cfg.curve_every)},
                      {"train_seconds", fmt::format("{:.1f}", r.seconds)}, {"length", std::to_string(cfg.task.length)},
                      {"min_period", std::to_string(cfg.task.min_period)},
                      {"max_period", std::to_string(cfg.task.max_period)}};
        t.model = std::move(r.model);
        t.curve = std::move(r.loss_curve);
        t.trained_now = true;
      },
      [&](const std::string& p) {
        TensorMap extra;
        extra["loss_curve"] = TensorF32{{t.curve.size()}, t.curve};
        save_attn_only(p, t.model, extra, t.metadata);
      });
  return t;
}

void require_two_seeds(const InductionModel& a, const InductionModel& b) {
  const std::string sa = metadata_value(a.metadata, "seed"), sb = metadata_value(b.metadata, "seed");
  if (sa == sb)
    throw std::runtime_error(_f("{} and {} were both trained from seed {}: the seed baseline of claim 4 needs two "
                                "different seeds (retrain with --train, or restore the shipped files)",
                                a.file, b.file, escape_control(sa)));
  ParamRegistry ra, rb;
  AttnOnly ma = a.model, mb = b.model, ga = zeros_like(a.model), gb = zeros_like(b.model);
  register_params(ra, ma, ga);
  register_params(rb, mb, gb);
  bool same = ra.entries().size() == rb.entries().size();
  for (std::size_t p = 0; same && p < ra.entries().size(); ++p) {
    const ParamEntry &x = ra.entries()[p], &y = rb.entries()[p];
    same = x.size == y.size && std::equal(x.value, x.value + x.size, y.value);
  }
  if (same)
    throw std::runtime_error(_f("{} and {} hold identical weights (one copied over the other?): the seed baseline of "
                                "claim 4 needs two different models",
                                a.file, b.file));
}

std::string evaluation_manifest(const InductionTask& task, const InductionBatch& eval, const InductionModel& a,
                                const InductionModel& b) {
  return fmt::format(
      "{{\"model\": \"data/{}\", \"other_seed_model\": \"data/{}\", \"sequences\": {}, \"length\": {}, "
      "\"vocab\": {}, \"min_period\": {}, \"max_period\": {}, \"rng\": \"PCG32 seed {}, "
      "attn::induction_batch\", \"tokens\": \"eval_tokens\", \"periods\": \"eval_periods\"}}",
      a.file, b.file, eval.batch, eval.len, task.vocab, task.min_period, task.max_period, kEvalSeed);
}

void show_every_head(Narrator& nar, const InductionModel& im, const InductionBatch& drawn, const InductionCircuit& c,
                     const std::string& transformer_norm) {
  const AttnOnly& m = im.model;
  const std::size_t L = m.cfg.layers, H = m.cfg.heads, period = drawn.periods[0];
  const Labels toks = id_labels(drawn.sequence(0));
  const std::vector<int> seq = drawn.sequence(0);
  nar.result(_f("induction model: {} attention-only layers × {} heads, d_model = {}, vocabulary {}, {} parameters", L,
                H, m.cfg.d_model, m.cfg.vocab, format_count(parameter_count(m))));
  nar.say(_f("attention-only: no feed-forward sub-layers, each layer adds its heads' output to the residual "
             "stream (one vector per position: it starts as token embedding + position embedding, and every "
             "layer reads it and adds to it); d_k = d_model / heads = {}; the {} parameters: token embeddings {}, "
             "learned position embeddings {} ({} positions × {}), {} layers × {} heads' W_Q, W_K, W_V, W_O ({} per "
             "head) and the unembedding W_U {} (d_model × vocabulary: it maps the residual stream to one logit "
             "per token)", m.cfg.d_model / H, format_count(parameter_count(m)), format_count(m.w_e.size()),
             format_count(m.w_pos.size()), m.w_pos.shape(0), m.cfg.d_model, L, H,
             format_count((m.attn[0].w_q.size() + m.attn[0].w_k.size() + m.attn[0].w_v.size() +
                           m.attn[0].w_o.size()) / H),
             format_count(m.w_u.size())));
  nar.say(_("layers and heads are numbered from 0, as in chapter 04's tensors: L1H2 is layer 1, head 2"));
  nar.say(_f("input: {} random tokens, repeated to {} tokens: {}", period, seq.size(), fmt::join(toks, " ")));
  nar.say(_f("each map: row i is the query at position i (its token at the left of the first map), column j the "
             "key at position j, 0 … {} from left to right (the digits above a map: each column's index, its "
             "last digit); each title gives the head's score on this sequence: "
             "\"prev\" (layer 0), its previous-token score, the mean weight a row puts on the position just before "
             "it; \"match\" (layer {}), its prefix-matching score, the weight a row puts on the tokens that "
             "followed every earlier copy of its token, summed, then averaged over the rows (step 2 also averages "
             "both over {} evaluation sequences)",
             seq.size() - 1, c.last_layer, c.eval_sequences));
  nar.say(_("M: the causal mask, 0 where row i may see key j (j ≤ i) and −∞ on later keys, drawn '·'"));
  const std::vector<Tensor3> w = attn_only_weights(m, seq);
  std::string legend;
  for (std::size_t l = 0; l < L && !nar.quiet(); ++l) {
    std::vector<std::string> maps, titles;
    for (std::size_t h = 0; h < H; ++h) {
      Mat drawn_w = slice_of(w[l], h);  // the keys a causal row cannot see as −∞: drawn '·'
      for (std::size_t i = 0; i < drawn_w.shape(0); ++i)
        for (std::size_t k = i + 1; k < drawn_w.shape(1); ++k) drawn_w(i, k) = -std::numeric_limits<float>::infinity();
      std::string map = with_ruler(format_heatmap(drawn_w, h == 0 ? toks : Labels(toks.size(), ""),
                                                  Labels(toks.size(), ""), unit_style()),
                                   digit_ruler(toks.size()));
      legend = without_last_line(map);
      maps.push_back(map);
      const InductionHeadRow& r = c.heads[l * H + h];
      titles.push_back(l == 0 ? _f("{} prev {:.2f}", head_name(l, h), r.previous_drawn)
                              : _f("{} match {:.2f}", head_name(l, h), r.prefix_drawn));
    }
    std::cout << side_by_side(maps, titles, 1);
  }
  if (!legend.empty()) nar.say(trimmed(legend));
  nar.say(_f("look at: {} (layer 0), one column left of the diagonal: each token reads the one before it; layer {}, "
             "from row {} on: the token after an earlier copy of the current token, {} columns left of the "
             "diagonal (the copy one period back) and, in the third period, also {} (the first copy): the cells "
             "\"match\" sums; where the darkest cell of each such row lies, head by head (step 2 gives each "
             "head's prefix matching averaged over {} evaluation sequences):",
             head_name(0, c.previous_head), c.last_layer, period, period - 1, 2 * period - 1, c.eval_sequences));
  nar.table(pattern_table(c.drawn_patterns), /*as_result=*/true);
  nar.say(_f("after 1st: the token after the first copy of the row's token (column i−{} in the second period, "
             "i−{} in the third); after nearer: the token after a later copy (i−{} in the third period); "
             "itself: the diagonal, the row's own position; earlier copy: a copy of the row's token, not the "
             "token after it; token 0: the first token, when it is another token; other: anywhere else; "
             "pattern: the first two columns together, \"follows\" when they hold ≥ 3/4 of the rows, "
             "\"mostly\" when ≥ 1/2", period - 1, 2 * period - 1, period - 1));
  std::vector<std::string> self_heads;  // heads whose map is a bright diagonal: each token reads itself
  for (const InductionHeadRow& r : c.heads)
    if (r.self_head.holds()) self_heads.push_back(fmt::format("{} {:.2f}", head_name(r.layer, r.head), r.self_drawn));
  if (!self_heads.empty())
    nar.say(_f("the diagonal: a 'self' head, each token reading itself, puts a mean weight ≥ {:.1f} on the row's "
               "own position (rows 1 … {}): {}", kSelfHeadAt, seq.size() - 1,
               fmt::format("{}", fmt::join(self_heads, _(", ")))));
  std::size_t on_first = 0;
  for (const DrawnPattern& d : c.drawn_patterns) on_first += d.first_token;
  if (on_first > 0)
    nar.say(_("token 0: a head with nothing to find in a row often parks its weight on the first token, the "
              "'attention sink' of Xiao et al. 2023 (Efficient Streaming Language Models with Attention Sinks, "
              "§3.1); a likely reading here, not measured"));
  nar.record("attn_weights_induction", stack_layers(w));
  nar.record_tokens("attn_weights_induction", toks, toks);
  nar.record("previous_token", per_head(c.drawn_stats, L, H, &HeadStat::previous_token));
  nar.record("prefix_matching", per_head(c.drawn_stats, L, H, &HeadStat::prefix_matching));
  nar.attention_view({_("induction model (2-layer attention-only)"), toks, toks, w, true});
  if (!transformer_norm.empty())
    nar.say(_f("--html also draws the chapter 08 Transformer ({}): encoder, decoder and cross-attention "
               "(Post-Norm: LayerNorm after each residual add; Pre-Norm, --norm pre: before each sub-layer; "
               "chapter 08)", norm_name(transformer_norm)));
  nar.code("attn/studies/induction.hpp: attn_only_weights; attn/present/side_by_side.hpp: side_by_side");
  nar.why(_("a head's weights say where each position reads from, so a repeated pattern in the input shows "
            "up as a shifted diagonal in the map of the head that uses it."));
}

void add_transformer_views(Narrator& nar, const Transformer& tf, const ToyCorpus& corpus, const SentencePair& pair) {
  const PairAttention ta = transformer_attention(tf, pair, corpus.source_vocab, corpus.target_vocab);
  Labels tgt_in = {"<bos>"}, tgt_out = pair.tgt;
  tgt_in.insert(tgt_in.end(), pair.tgt.begin(), pair.tgt.end());
  tgt_out.push_back("<eos>");
  nar.attention_view({_("Transformer encoder self-attention"), pair.src, pair.src, ta.enc_self, false});
  nar.attention_view({_("Transformer decoder self-attention"), tgt_in, tgt_in, ta.dec_self, true});
  nar.attention_view({_("Transformer cross-attention (rows: the word predicted)"), tgt_out, pair.src, ta.cross, false});
}

namespace {
std::string best_prefix(const LmRepeatProbe& p) {
  std::string best;
  for (const HeadStat& h : p.best)
    best += fmt::format("{}{} {:.3f}", best.empty() ? "" : ", ", head_name(h.layer, h.head), h.prefix_matching);
  return best;
}
void report_lm_induction(Narrator& nar, const LmInductionStudy& s, const Metadata& lm_metadata,
                         const InductionModel& im) {
  const LmInduction& r = s.random.result;
  nar.result(_f("chapter 09 LM ({} steps): {} sequences of {} tokens, each followed by the same {} again; two "
                "probes: random token ids, and passages of the held-out text (data/ch09/kjv_valid.txt, never "
                "trained on)", metadata_value(lm_metadata, "steps"), r.sequences, r.period, r.period));
  Table t({_("probe"), _("1st copy"), _("2nd copy"), _("1st − 2nd"), _("best prefix matching"), _("> 0.4")});
  auto add = [&](const std::string& name, const LmRepeatProbe& p) {
    t.add({name, fmt::format("{:.3f}", p.result.first), fmt::format("{:.3f}", p.result.second),
           fmt::format("{:+.3f} ± {:.3f}", printed_diff(p.result.first, p.result.second), p.result.difference_se),
           best_prefix(p), _f("{} of {}", p.strong, p.result.heads.size())});
  };
  add(_("random ids"), s.random);
  if (s.text) add(_("held-out text"), *s.text);
  nar.table(t, /*as_result=*/true);
  nar.say(_f("1st copy, 2nd copy: the mean next-token loss in nats on each copy's tokens 2 … {} (chance: log {} = "
             "{:.3f}), the same targets in both; the second copy's first token is left out: it follows the "
             "passage's last token, which no earlier copy shows; ± the "
             "standard error over the {} sequences; prefix matching as in the table above (a head with uniform "
             "weights: {:.3f} on the random ids{}); > 0.4: the heads scoring above 0.4; the second copy counts as "
             "easier when 1st − 2nd exceeds both 2 standard errors and 0.1 nats",
             r.period, s.vocab, s.chance, r.sequences, r.uniform_prefix,
             s.text ? _f(", {:.3f} on the text", s.text->result.uniform_prefix) : std::string()));
  nar.result(_f("  {} of the {} token ids never occur in the {} held-out tokens; the random probe's {} ids "
                "include {} of them", s.unseen_ids, s.vocab, format_count(s.held_out_tokens), s.drawn,
                s.drawn_unseen));
  nar.result(sentence_for(s.random.copies.outcome,
                          _("  random ids: the second copy is easier than the first: the LM copies from the earlier "
                            "one even tokens it cannot predict"),
                          _("  random ids: the second copy is harder than the first"),
                          _("  random ids: the second copy is no easier than the first")));
  if (s.random.above_chance)
    nar.say(_("  both losses on random ids are above chance: guesses learned from text cost more than a uniform "
              "guess on ids in an order text never has"));
  if (s.text)
    nar.result(s.text->copies.holds()
                   ? _f("  held-out text: the second copy is easier than the first, by {:+.3f} nats: the LM reads "
                        "the earlier copy of a passage it never trained on",
                        printed_diff(s.text->result.first, s.text->result.second))
                   : std::string(sentence_for(s.text->copies.outcome, "",
                                              _("  held-out text: the second copy is harder than the first"),
                                              _("  held-out text: the second copy is no easier than the first: "
                                                "this LM does not use an earlier copy even of text like the text it "
                                                "learned from"))));
  else
    nar.say(_("  held-out text: too short for the passages; not measured"));
  nar.say(_("  what the probes show: whether a second copy costs less than the first, that is whether the LM "
            "reads the earlier copy; not which heads do it: this LM's heads are only measured, never zeroed "
            "(its forward pass has no way to switch a head off)"));
  if (!s.random.copies.holds() && !(s.text && s.text->copies.holds()))
    nar.say(_f("  Olsson et al. 2022 (Argument 1) see induction heads form in a sudden phase change early in "
               "training, after billions of tokens; this LM saw {} tokens of text. The induction model above saw "
               "{} tokens ({} steps × {} sequences × {} tokens), but every one of its sequences repeats itself",
               format_count(metadata_count(lm_metadata, "train_tokens_seen")),
               format_count(induction_tokens_seen(im.metadata)), metadata_count(im.metadata, "steps"),
               metadata_count(im.metadata, "batch"), metadata_count(im.metadata, "length")));
}
}  // namespace

void report_induction(Narrator& nar, const InductionModel& im, const InductionCircuit& c, const InductionBatch& eval,
                      const std::optional<LmInductionStudy>& lm, const Metadata& lm_metadata) {
  const AttnOnly& m = im.model;
  const std::size_t L = m.cfg.layers, H = m.cfg.heads, last = c.last_layer;
  const InductionHeadRow& prev = c.heads[c.previous_head];
  const InductionHeadRow& ind = c.heads[last * H + c.induction_head];
  nar.say(_("an induction head finds the earlier copy of the current token and predicts the token that followed "
            "it (… A B … A → B): a layer-0 head marks each position with its previous token, and a layer-1 head "
            "looks for that mark"));
  if (!im.curve.empty()) {
    const std::size_t every = metadata_count(im.metadata, "curve_every");
    const CurveShape cs = loss_curve_shape(im.curve, every, 48);
    nar.result(_f("training loss ({} steps, every {}): {:.2f} {} {:.2f}", metadata_value(im.metadata, "steps"),
                  metadata_value(im.metadata, "curve_every"), im.curve.front(), sparkline(im.curve, 48), im.curve.back()));
    nar.say(_f("the curve: {} recorded means of {} steps each, averaged into {} marks of {}–{} records; the numbers "
               "at its ends are the first and last records", cs.points, every, cs.marks, cs.per_mark_lo,
               cs.per_mark_hi));
    if (cs.found)
      nar.say(_f("the loss stays above 90% of the way from its end to its start until step {}, and is below 10% of "
                 "it by step {}; Olsson et al. 2022 see induction heads form in such a drop (a phase change); no "
                 "head score was recorded during training, so whether the heads formed in this one is not measured "
                 "here", cs.plateau_until, cs.fallen_by));
  }
  if (!im.curve.empty() && !im.trained_now)
    nar.say(_f("(the curve was recorded when data/{} was trained earlier with --train, seed {}; this run loads it)",
               im.file, metadata_value(im.metadata, "seed")));
  nar.say(_f("the evaluation set: {} sequences of {} tokens, each a period of {} to {} distinct random tokens "
             "repeated; a column marked \"{} seqs\" averages over it (exported: eval_tokens, eval_periods)",
             c.eval_sequences, c.eval_length, c.min_period, c.max_period, c.eval_sequences));
  Table t({_("head"), _("prev, drawn"), _f("prev, {} seqs", c.eval_sequences), _f("prefix, {} seqs", c.eval_sequences),
           _("copying"), _("2nd period if zeroed")});
  for (const InductionHeadRow& r : c.heads)
    t.add({head_name(r.layer, r.head), fmt::format("{:.3f}", r.previous_drawn), fmt::format("{:.3f}", r.previous_eval),
           fmt::format("{:.3f}", r.prefix_eval), fmt::format("{:+.3f}", r.copying),
           fmt::format("{:.3f}", r.second_if_zeroed)});
  nar.table(t, /*as_result=*/true);
  nar.say(_f("drawn: on step 1's one drawn sequence; prev: previous-token score, the mean weight on the position "
             "just before; prefix: prefix-matching "
             "score, the weight on the tokens that followed every earlier copy of the current token, summed, then "
             "averaged over the rows (a head with uniform weights scores {:.3f} prefix and {:.3f} prev on the "
             "evaluation set); last column: the loss "
             "on the second period (the first repetition) with that head's output set to zero", c.uniform_prefix,
             c.uniform_previous));
  for (std::size_t k : c.zeroing_helps)
    nar.say(_f("zeroing {} lowers the second-period loss, {:.3f} against {:.3f} ({:+.3f}): its output slightly hurts "
               "this prediction; the column has no noise estimate, so whether that is more than noise is not judged",
               head_name(c.heads[k].layer, c.heads[k].head), c.heads[k].second_if_zeroed, c.base.second,
               printed_diff(c.heads[k].second_if_zeroed, c.base.second)));
  nar.say(_("copying: the head's OV circuit W_E·W_V·W_O·W_U is the path from a token it reads to the logits it "
            "writes (embedding, the head's value and output maps, unembedding): a vocabulary × vocabulary matrix; "
            "copying = Σ Re λ / Σ |λ| over its eigenvalues λ (Elhage et al. 2021), +1 when reading a token "
            "raises that token's own logit, −1 when it lowers it"));
  nar.result(_f("loss on the first period (fresh tokens) {:.3f} (chance: log {} = {:.3f}), on the second (the "
                "first repetition) {:.3f}", c.base.first, m.cfg.vocab, std::log(double(m.cfg.vocab)), c.base.second));
  if (c.base.first > std::log(double(m.cfg.vocab)))
    nar.say(c.first_seen.bets.holds()
                ? _f("the first period costs more than a uniform guess: nothing in it can be predicted, yet the "
                     "model puts {:.0f}% of its probability on tokens it has already seen ({:.1f}× a uniform "
                     "guess's {:.0f}%), and in a period of distinct tokens those never come next",
                     100.0 * c.first_seen.model, c.first_seen.model / c.first_seen.uniform,
                     100.0 * c.first_seen.uniform)
                : _f("the first period costs more than a uniform guess: its next token is a random one not yet "
                     "seen, so a guess pays for any unevenness among those tokens and for what it puts on seen "
                     "ones; the model's guesses there have an entropy −Σ p ln p of {:.2f} nats (nats: natural-log "
                     "units; a uniform guess: ln {} = {:.2f}) and put {:.0f}% on tokens already seen (a uniform "
                     "guess: {:.0f}%)",
                     c.first_seen.entropy, m.cfg.vocab, std::log(double(m.cfg.vocab)), 100.0 * c.first_seen.model,
                     100.0 * c.first_seen.uniform));
  nar.result(_f("previous-token head {}: {:.3f} on the sequence drawn in step 1, {:.3f} averaged over the "
                "evaluation set: {:.2f} for query positions 1–{} (the positions layer {} later reads as keys), "
                "{:.2f} after", head_name(0, c.previous_head), prev.previous_drawn, prev.previous_eval,
                c.previous_early, c.max_period, last, c.previous_late));
  nar.say(_f("every token's first copy lies in the first period (≤ {} tokens), so the token after it sits at a "
             "position ≤ {}: an induction head can always find its answer there, and marks at those positions "
             "are enough", c.max_period, c.max_period));
  nar.result(_f("second-period loss {:.3f}; with {} zeroed {:.3f} ({:+.3f})", c.base.second,
                head_name(0, c.previous_head), c.second_without_previous, printed_diff(c.second_without_previous, c.base.second)));
  nar.result(_f("with {} zeroed, {}'s prefix matching goes {:.3f} → {:.3f}: {}", head_name(0, c.previous_head),
                head_name(last, c.induction_head), ind.prefix_eval, c.induction_prefix_without_previous,
                sentence_for(c.composes.outcome,
                             _("it matches through that head's output: layer 1 builds its keys (K-composition) "
                               "or its queries (Q-composition) from what that head wrote; zeroing the head "
                               "changes layer 1's keys and queries alike, so this cannot tell which"),
                             _("it matches without it"), _("not measurable"))));
  const InductionHeadRow& needed = c.heads[last * H + c.most_needed];
  nar.result(_f("layer {}: {} matches prefixes best ({:.3f}), but zeroing {} costs most ({:.3f}); with all {} heads "
                "zeroed the loss is {:.3f}", last, head_name(last, c.induction_head), ind.prefix_eval,
                head_name(last, c.most_needed), needed.second_if_zeroed, H, c.second_without_last_layer));
  if (c.most_needed != c.induction_head)
    nar.say(_f("the two rank heads differently because they measure different things: prefix matching, where a "
               "head's weights point; the zeroing cost, how much the rest of the model loses without the head's "
               "output. {}'s prefix matching is {:.2f} on step 1's one sequence but {:.3f} over the {} "
               "evaluation sequences: step 1's map is one sample", head_name(last, c.most_needed),
               needed.prefix_drawn, needed.prefix_eval, c.eval_sequences));
  const std::string share = _f("the costliest single head adds {:+.3f} to the loss, {:.0f}% of the {:+.3f} that "
                               "losing all {} adds; redundant when at most {:.0f}%",
                               printed_diff(needed.second_if_zeroed, c.base.second), 100.0 * c.redundant.measured,
                               printed_diff(c.second_without_last_layer, c.base.second), H,
                               100.0 * c.redundant.bound);
  nar.result(c.redundant.holds()
                 ? _f("the last layer's heads are redundant: each one does the induction, so losing any one costs "
                      "little ({})", share)
             : c.redundant.outcome == Outcome::fails
                 ? _f("the last layer's heads are not redundant: one of them alone costs much of what losing them "
                      "all costs ({})", share)
                 : std::string(_("redundancy: not measurable")));
  double lo0 = 1e9, hi0 = -1e9, lo1 = 1e9;
  for (const InductionHeadRow& r : c.heads) {
    if (r.layer == 0) lo0 = std::min(lo0, r.copying), hi0 = std::max(hi0, r.copying);
    if (r.layer == last) lo1 = std::min(lo1, r.copying);
  }
  if (hi0 < 0.0 && lo1 > 0.0)
    nar.say(_f("copying is {:+.3f} or more in layer {}: read straight to the logits, those heads raise the token they "
               "attend to. Layer 0's heads score {:.2f} … {:.2f}: straight to the logits they lower the token they "
               "read, which would help here (not measured), since a period's tokens are distinct and the next token is "
               "never one just seen; their main output feeds layer {}'s keys, which this direct path leaves out",
               lo1, last, lo0, hi0, last));
  Mat copying = xt::zeros<float>({L, H});
  for (const InductionHeadRow& r : c.heads) copying(r.layer, r.head) = float(r.copying);
  nar.record("copying", copying);
  nar.record("previous_token_eval", per_head(c.eval_stats, L, H, &HeadStat::previous_token));
  nar.record("head_entropy", per_head(c.eval_stats, L, H, &HeadStat::entropy));
  nar.record("head_distance", per_head(c.eval_stats, L, H, &HeadStat::distance));
  Mat tokens = xt::zeros<float>({eval.batch, eval.len});
  Vec periods = xt::zeros<float>({eval.batch});
  for (std::size_t s = 0; s < eval.batch; ++s) {
    periods(s) = float(eval.periods[s]);
    for (std::size_t i = 0; i < eval.len; ++i) tokens(s, i) = float(eval.tokens[s * eval.len + i]);
  }
  nar.record("eval_tokens", tokens);
  nar.record("eval_periods", periods);
  if (lm)
    report_lm_induction(nar, *lm, lm_metadata, im);
  else
    nar.say(_("the chapter 09 language model: not available yet (no checkpoint shipped); not measured."));
  nar.code("attn/studies/interpretability_claims.hpp: find_induction_heads, lm_induction_study; attn/studies/induction.hpp: "
           "repeat_losses, ov_circuit; attn/attention/attention_stats.hpp: prefix_matching_score, copying_score");
  nar.why(_("the first period is fresh random tokens, so only the later ones can be predicted, and only by "
            "finding the token's earlier copy: the loss on the second period measures the circuit."));
}


namespace {
void report_distance(Narrator& nar, const std::string& label, const std::string& what, const DistanceClaim& c) {
  Table t({_("model"), _("layer"), _("mean distance"), _("entropy (nats)"), "H / log n"});
  for (const LayerStat& s : c.layers)
    t.add({label, std::to_string(s.layer), fmt::format("{:.2f}", s.distance), fmt::format("{:.3f}", s.entropy),
           fmt::format("{:.3f}", s.uniformity)});
  t.add({label, _("uniform"), fmt::format("{:.2f}", c.uniform), "—", "1.000"});
  nar.table(t, true);
  const char* trend = c.grows.outcome == Outcome::holds    ? _("grows with depth")
                      : c.grows.outcome == Outcome::partly ? _("stays within 10% from the first layer to the last")
                      : c.grows.outcome == Outcome::fails  ? _("shrinks with depth")
                                                           : _("is not measurable");
  nar.result(_f("{}, {}: distance {} ({:.2f} → {:.2f} tokens; uniform weights on the same inputs: {:.2f})", label,
                what, trend, c.layers.front().distance, c.layers.back().distance, c.uniform));
}
}  // namespace

void report_distances(Narrator& nar, const InterpretabilityFindings& f, const std::string& norm,
                      std::size_t sentences) {
  report_distance(nar, _("induction"), _f("{} evaluation sequences", f.circuit.eval_sequences), f.distance);
  const InductionCircuit& c = f.circuit;
  nar.say(_f("layer 0 here is not step 1's picture: that sequence has {} tokens, these have {}, and after position "
             "{} the previous-token head {} puts only {:.2f} on the token before (step 2), {:.2f} on the row's own "
             "token, {:.2f} on token 0 and the other {:.2f} on the remaining earlier tokens", c.max_period + 1,
             c.eval_length, c.max_period, head_name(0, c.previous_head), c.previous_late, c.previous_late_self,
             c.previous_late_first, 1.0 - c.previous_late - c.previous_late_self - c.previous_late_first));
  nar.say(_("mean distance: Σ_j P_ij |i − j| averaged over rows and heads; entropy H = −Σ_j P_ij log P_ij; "
            "H / log n: H over its largest value (1: uniform over the n keys a row may see); the verdict "
            "'grows with depth' needs the last layer's distance to exceed the first's by more than 10%; the row \"uniform\": a head that "
            "weights every key a row may see alike, on the same inputs (a causal row i sees keys 0 … i: i/2 on "
            "average; an encoder row i of n sees all n keys: (i(i + 1) + (n − 1 − i)(n − i)) / (2n)), so a "
            "layer near it looks everywhere rather than far"));
  nar.say(_("papers: the ViT paper (Vision Transformer, images cut into patches; Dosovitskiy et al. 2021, Fig. 7) "
            "finds attention distance growing with depth, with some far-looking heads already in layer 0; Clark "
            "et al. 2019 (Fig. 4) find broad, high-entropy heads in the lower layers of BERT (a Transformer "
            "encoder pre-trained on text)."));
  if (f.lm_distance)
    report_distance(nar, _("chapter 09 LM"), _f("{} × {} held-out tokens", kLmTextWindows, kLmTextTokens),
                    *f.lm_distance);
  else
    nar.say(_("the chapter 09 LM: not available yet, not measured."));
  if (f.encoder_distance)
    report_distance(nar, _("Transformer encoder"), _f("{}, {} test sentences", norm_name(norm), sentences),
                    *f.encoder_distance);
  else
    nar.say(_("the Transformer's encoder (chapter 08): not available yet, not measured."));
  nar.code("attn/attention/attention_stats.hpp: mean_attention_distance, mean_entropy; "
           "attn/studies/interpretability_claims.hpp: distance_claim");
  nar.why(_("a layer's distance is set by what its heads look for, not by depth itself: the induction heads of layer 1 "
            "look back to the token after an earlier copy of the current token, one period or more away (step 1's "
            "table says which copy, head by head)."));
}

namespace {
// "esti → finds (truth: this), …" for the misses of one map; "none" when every row is right.
std::string miss_list(const std::vector<RowMiss>& misses, const SentencePair& example) {
  std::vector<std::string> items;
  for (const RowMiss& m : misses)
    items.push_back(_f("{} → {} (truth: {})", example.tgt[m.row], example.src[m.read], example.src[m.truth]));
  return items.empty() ? std::string(_("none")) : fmt::format("{}", fmt::join(items, ", "));
}
}  // namespace

void report_alignment(Narrator& nar, const AlignmentStudy& a, const SentencePair& example, const ExampleChoice& choice) {
  nar.say(_("the toy language of chapters 00–02 (attn/data/corpus.hpp): one invented word per English word, "
            "adjectives after their noun, the verb at the end of its clause, ending in -a for an animate subject "
            "and -o for an inanimate one"));
  nar.say(choice.found ? _f("example: test pair {}, the first with at most {} words (its map fits the screen) and "
                            "at least {} reordered words; it has {} words, {} reordered",
                            choice.index, choice.max_words, choice.min_reordered, choice.words, choice.reordered)
                       : _f("example: test pair {} (no pair has at most {} words and {} reordered words)",
                            choice.index, choice.max_words, choice.min_reordered));
  nar.say(_f("source (columns, left to right; the letters above each map are their first letters): {}",
             fmt::join(example.src, " ")));
  nar.say(_f("target (rows, top to bottom): {}", fmt::join(example.tgt, " ")));
  nar.say(_("a(i): the source word that target word i translates, which the corpus generator records; the title's "
            "claim: the largest weight of row i, argmax_j α_ij, falls on a(i)"));
  nar.say(_("teacher-forced: the decoder is fed the true previous target words, so each row shows where it "
            "looks given the right history"));
  if (!nar.quiet()) {
    std::string left = with_ruler(format_heatmap(a.example, example.tgt, example.src, unit_style()), example.src),
                right = with_ruler(format_heatmap(a.truth, example.tgt, example.src, unit_style()), example.src);
    without_last_line(right);
    const std::string legend = without_last_line(left);
    std::cout << side_by_side({left, right}, {_("Bahdanau α (teacher-forced)"), _("true alignment")});
    nar.say(trimmed(legend));
  }
  std::vector<std::string> moved;
  for (std::size_t row : a.reordered)
    moved.push_back(fmt::format("{} ← {}", example.tgt[row], example.src[std::size_t(example.alignment[row])]));
  nar.say(_f("look at: the reordered words, whose source word comes before the previous row's ({}): in the true "
             "map their cell lies left of the row above's; Bahdanau's largest α misses the true word in {} of {} "
             "rows: {}",
             moved.empty() ? std::string(_("none")) : fmt::format("{}", fmt::join(moved, ", ")),
             a.example_misses.size(), example.tgt.size(), miss_list(a.example_misses, example)));
  Tensor3 align3 = Tensor3::from_shape({1, a.example.shape(0), a.example.shape(1)});
  std::copy(a.example.begin(), a.example.end(), align3.begin());
  nar.attention_view({_("Bahdanau α (chapter 01)"), example.tgt, example.src, {align3}, false});
  Vec acc = xt::zeros<float>({1});
  acc(0) = float(a.bahdanau);
  nar.record("alignment_accuracy_bahdanau", acc);
  nar.result(_f("Bahdanau (chapter 01): {:.1f}% of {} target words put their largest α on their source word "
                "(chapter 01's model on these {} test sentences; chapter 01 itself counts its whole test set)",
                100.0 * a.bahdanau, format_count(a.words), a.sentences));
  nar.result(_f("verdict: {} (holds: ≥ 80% of words; partly: ≥ 50%)", outcome_word(a.bahdanau_aligns.outcome)));
  if (!a.cross) {
    nar.say(_("the Transformer's cross-attention heads (chapter 08): not available yet, not measured."));
  } else {
    std::vector<std::string> header = {_("cross-attention")};
    for (std::size_t h = 0; h < a.cross->accuracy.shape(1); ++h) header.push_back(_f("head {}", h));
    Table t(header);
    for (std::size_t l = 0; l < a.cross->accuracy.shape(0); ++l) {
      std::vector<std::string> row = {_f("layer {}", l)};
      for (std::size_t h = 0; h < a.cross->accuracy.shape(1); ++h)
        row.push_back(fmt::format("{:.1f}%", 100.0 * a.cross->accuracy(l, h)));
      t.add(row);
    }
    nar.table(t, true);
    nar.say(_f("each cell: the share of the {} target words whose largest cross-attention weight in that head "
               "lies on their true source word a(i), as Bahdanau's figure above counts its α", format_count(a.cross->words)));
    std::vector<std::string> ranges;  // each layer's heads, lowest to highest
    for (std::size_t l = 0; l < a.cross->accuracy.shape(0); ++l) {
      double lo = 1.0, hi = 0.0;
      for (std::size_t h = 0; h < a.cross->accuracy.shape(1); ++h)
        lo = std::min(lo, double(a.cross->accuracy(l, h))), hi = std::max(hi, double(a.cross->accuracy(l, h)));
      ranges.push_back(_f("layer {} {:.1f}–{:.1f}%", l, 100.0 * lo, 100.0 * hi));
    }
    nar.say(_f("look at: the heads of each layer, lowest to highest: {}", fmt::format("{}", fmt::join(ranges, _(", ")))));
    nar.record("alignment_accuracy", a.cross->accuracy);
    std::vector<std::string> per_layer;  // each layer judged on the mean of its heads: no head picked on these words
    for (const LayerAlignment& la : a.layers)
      per_layer.push_back(_f("layer {} {}, mean {:.1f}% ({} of {} heads ≥ {:.0f}%)", la.layer,
                             outcome_word(la.aligns.outcome), 100.0 * la.mean, la.aligned, la.heads,
                             100.0 * kAlignsHolds));
    nar.result(_f("verdict per layer, on the mean of its heads (no head picked on these words; holds: ≥ 80%, partly: "
                  "≥ 50%): {}", fmt::format("{}", fmt::join(per_layer, _("; ")))));
    nar.result(_f("chapter 08 Transformer: best head {} ({:.1f}%); Bahdanau {:.1f}% on the same {} words; the "
                  "Transformer's figure is the best of {} heads picked on these words, an optimistic one beside "
                  "Bahdanau's single α", head_name(a.best_layer, a.best_head), 100.0 * a.best, 100.0 * a.bahdanau,
                  format_count(a.cross->words), a.cross->accuracy.size()));
    nar.result(_f("the runner-up {} ({:.1f}%) is {:.1f} points behind; 2 standard errors of that gap, paired over "
                  "the {} sentences: {:.1f} points: {}", head_name(a.runner_layer, a.runner_head),
                  100.0 * a.runner_up, 100.0 * a.best_gap.gap, a.sentences, 200.0 * a.best_gap.se,
                  sentence_for(a.best_gap.clear.outcome, _("the lead is beyond the noise on these sentences"),
                               _("the lead is beyond the noise on these sentences"),
                               _("within noise, so which head comes out best depends on the sentences scored "
                                 "(chapters 07 and 08 score other sentences)"))));
    if (!nar.quiet()) {
      std::string left = with_ruler(format_heatmap(a.best_example, example.tgt, example.src, unit_style()),
                                    example.src),
                  right = with_ruler(format_heatmap(a.truth, example.tgt, example.src, unit_style()), example.src);
      without_last_line(left);
      without_last_line(right);
      std::cout << side_by_side({left, right}, {"Transformer " + head_name(a.best_layer, a.best_head), _("true alignment")});
    }
    nar.say(_f("look at: {}'s largest weight misses the true word in {} of {} rows: {}",
               head_name(a.best_layer, a.best_head), a.best_misses.size(), example.tgt.size(),
               miss_list(a.best_misses, example)));
  }
  nar.code("attn/studies/interpretability_claims.hpp: alignment_study; attn/studies/interpretability.hpp: "
           "seq2seq_alignment_accuracy, transformer_alignment");
  nar.why(_("the corpus generator knows which source word each target word translates, reorderings too, so "
            "each argmax can be marked right or wrong."));
}

void report_uniform(Narrator& nar, const std::string& label, const UniformClaim& u, const std::vector<HeadStat>* stats) {
  if (stats) {
    std::size_t layers = 0;
    for (const HeadStat& s : *stats) layers = std::max(layers, s.layer + 1);
    for (std::size_t l = 0; l < layers; ++l) {
      std::string unif;
      for (const HeadStat& s : *stats)
        if (s.layer == l) unif += fmt::format("  {} {:.2f}", head_name(s.layer, s.head), s.uniformity);
      nar.say(_f("H / log n, layer {}:{}", l, unif));
    }
  }
  if (u.flat.empty()) {
    nar.result(_f("{}: no head is within 5% of uniform (0 of {})", label, u.heads));
    return;
  }
  if (u.flat.size() > u.rest.size() && !u.rest.empty())
    nar.result(_f("{}: {} of {} heads within 5% of uniform: all but {}", label, u.flat.size(), u.heads,
                  head_list(u.rest, u.rest.size())));
  else
    nar.result(_f("{}: {} of {} heads within 5% of uniform: {}", label, u.flat.size(), u.heads,
                  head_list(u.flat, u.flat.size())));
  if (u.ablated) {
    nar.result(_f("  zeroing all of them changes the loss on periods 2… by {:+.4f} (total variation {:.4f})",
                  u.removal.loss_change, u.removal.tvd));
    nar.result(sentence_for(u.harmless.outcome, _("  removing them barely matters (|Δloss| ≤ 0.05)"),
                    _("  removing them does matter (|Δloss| > 0.05)"), _("  not measurable")));
  }
}

void explain_uniform_encoder(Narrator& nar, const UniformClaim& encoder, const AlignmentStudy& a) {
  if (!a.cross || 2 * encoder.flat.size() <= encoder.heads) return;
  nar.say(_f("{} of {} encoder heads near uniform, while step 4's best cross-attention head finds the aligned "
             "source word for {:.1f}% of the target words: in this toy language each target word translates one "
             "source word, so the decoder can pick it out by cross-attention and the encoder has little to mix in "
             "(a likely reason, not measured here)", encoder.flat.size(), encoder.heads, 100.0 * a.best));
}

void report_perturbation(Narrator& nar, const PerturbationSweep& p, const InductionModel& a, const InductionModel& b) {
  nar.result(_f("baseline: two models trained from seeds {} and {}: TVD {:.4f}, |Δloss| {:.4f}",
                metadata_value(a.metadata, "seed"), metadata_value(b.metadata, "seed"), p.seeds.tvd,
                std::abs(p.seeds.loss_change)));
  Table t({_("head"), _("edit"), "TVD", _("Δ loss, periods 2…")});
  for (const PerturbationRow& r : p.rows)
    t.add({head_name(r.layer, r.head), edit_label(r.edit), fmt::format("{:.4f}", r.change.tvd),
           fmt::format("{:+.4f}", r.change.loss_change)});
  nar.table(t, true);
  nar.say(_("TVD: total variation distance between the two next-token distributions, ½ Σ|p − p'|, averaged over "
            "every position of every period after the first; permute: each row's weights shuffled among the keys "
            "it may see; uniform: every visible key weighted alike; zero: all weights 0, so the head adds nothing"));
  nar.say(_("Δ loss, periods 2…: the change of the mean loss over every period after the first; step 2's "
            "\"2nd period if zeroed\" is the second period alone, so the two columns differ"));
  std::vector<std::string> below_edits;  // the edits that stay within the seed's TVD, by name
  for (const PerturbationRow& r : p.rows)
    if (r.below_seed) below_edits.push_back(head_name(r.layer, r.head) + " " + edit_label(r.edit));
  nar.result(below_edits.empty()
                 ? _f("0 of {} single-head edits change the output less than another seed does", p.rows.size())
                 : _f("{} of {} single-head edits change the output less than another seed does (TVD at most "
                      "{:.4f}): {}", p.below, p.rows.size(), p.seeds.tvd, fmt::join(below_edits, _(", "))));
  std::size_t loss_below = 0;  // the other yardstick: the seed's |Δloss|
  for (const PerturbationRow& r : p.rows) loss_below += std::abs(r.change.loss_change) <= std::abs(p.seeds.loss_change);
  nar.result(_f("by Δ loss instead: {} of {} edits stay within the seed's |Δloss| {:.4f} (the verdict below uses "
                "TVD)", loss_below, p.rows.size(), std::abs(p.seeds.loss_change)));
  nar.result(_f("verdict: {} (holds: ≥ 75% of the edits; partly: ≥ 25%)", outcome_word(p.little_change.outcome)));
  if (p.below < p.rows.size()) {
    double lo = 1e300, hi = 0.0;
    for (const PerturbationRow& r : p.rows)
      if (!r.below_seed) lo = std::min(lo, r.change.tvd - p.seeds.tvd), hi = std::max(hi, r.change.tvd - p.seeds.tvd);
    nar.result(_f("the other {} change it more, by {:+.4f} to {:+.4f} beyond the baseline: those heads' weights carry "
                  "the computation; one seed pair gives no spread, so the edits nearest it are not clearly different",
                  p.rows.size() - p.below, lo, hi));
  }
  nar.say(_("papers: Jain & Wallace report that permuting weights often leaves the outputs of BiLSTM "
            "classifiers (bidirectional LSTM: a recurrent network read in both directions) nearly "
            "unchanged; Wiegreffe & Pinter 2019 answer that the seed-to-seed change is the yardstick to judge that by."));
  nar.code("attn/studies/interpretability_claims.hpp: perturbation_sweep; attn/attention/head_intervention.hpp: "
           "edit_head_weights");
  nar.why(_("if a head's weights can be shuffled freely, they cannot be what the prediction rests on."));
}

bool at_noise_edge(double gap, double bound) {
  return std::isfinite(gap) && bound > 0 && std::abs(std::abs(gap) - bound) <= kNoiseEdge * bound;
}

std::string gap_and_bound(double gap, double bound) {
  int digits = 3;
  while (digits < 6 && std::abs(gap) != bound &&
         fmt::format("{:.{}f}", std::abs(gap), digits) == fmt::format("{:.{}f}", bound, digits))
    ++digits;
  return fmt::format("{:+.{}f}; {:.{}f}", gap, digits, bound, digits);
}

void report_importance(Narrator& nar, const ImportanceClaim& c) {
  const ImportanceAgreement& a = c.agreement;
  nar.say(_("leave-one-out (LOO): how much the loss rises when one earlier token is hidden from every query; "
            "gradient × input: for each earlier token j, |Σ_c ∂loss/∂x_j,c · x_j,c| with x_j its embedding plus "
            "position, the first-order guess of the loss change if x_j were zeroed"));
  nar.say(_("Kendall τ (here τ-b, the variant corrected for ties): +1 when two rankings of the tokens agree, 0 "
            "when unrelated, −1 when reversed; ± is the standard error of the mean over the sequences; attention, layer L: the mean over that layer's heads "
            "of the last query's weights on the earlier tokens"));
  auto vs_random = [&](const Verdict& v) {  // measured: the gap to random scores' τ; bound: 2 combined SE
    return fmt::format("{} ({})",
                       c.too_few ? _("not judged") : sentence_for(v.outcome, _("above"), _("below"), _("within noise")),
                       gap_and_bound(v.measured, v.bound));
  };
  nar.say(_("SE: standard error; the last column's 2 SE is twice the standard error of the gap"));
  Table t({_("ranking"), _("τ vs LOO"), _("τ vs gradient"), _("top-1 = LOO's"),
           _("vs random (gap; 2 SE)")});
  Vec tau = xt::zeros<float>({a.attn_vs_loo.size()});
  for (std::size_t l = 0; l < a.attn_vs_loo.size(); ++l) {
    t.add({_f("attention, layer {}", l), fmt::format("{:+.3f} ± {:.3f}", a.attn_vs_loo[l], c.attn_se[l]),
           fmt::format("{:+.3f}", a.attn_vs_grad[l]), fmt::format("{:.0f}%", 100.0 * a.attn_top1[l]),
           vs_random(c.attn_vs_random[l])});
    tau(l) = float(a.attn_vs_loo[l]);
  }
  t.add({_("gradient × input"), fmt::format("{:+.3f} ± {:.3f}", a.grad_vs_loo, c.grad_se), "—",
         fmt::format("{:.0f}%", 100.0 * a.grad_top1), vs_random(c.grad_vs_random)});
  t.add({_("uniform attention"), fmt::format("{:+.3f}", a.uniform_vs_loo), "—", "—", _("— (all tied, τ taken as 0)")});
  t.add({_("random scores"), fmt::format("{:+.3f} ± {:.3f}", a.random_vs_loo, c.random_se), "—",
         fmt::format("{:.0f}%", 100.0 * a.random_top1), "—"});
  nar.table(t, true);
  nar.say(_("all tied: uniform attention ranks every earlier token alike; τ-b divides by √((n₀ − n₁)(n₀ − n₂)), "
            "n₀ the pairs of tokens and n₁, n₂ the pairs tied in each ranking, which is then 0, so τ is taken as 0 "
            "(no agreement either way)"));
  nar.record("kendall_tau", tau);
  std::vector<std::string> edges;  // cells whose gap is within 5% of its bound, either side
  for (std::size_t l = 0; l < c.attn_vs_random.size(); ++l)
    if (at_noise_edge(c.attn_vs_random[l].measured, c.attn_vs_random[l].bound))
      edges.push_back(_f("attention, layer {}", l));
  if (at_noise_edge(c.grad_vs_random.measured, c.grad_vs_random.bound)) edges.push_back(_("gradient × input"));
  if (!edges.empty())
    nar.result(_f("at the edge of the noise: {} (gap within {:.0f}% of its bound): another set of sequences "
                  "can flip that cell", fmt::format("{}", fmt::join(edges, _(", "))), 100.0 * kNoiseEdge));
  nar.result(_f("over {} sequences of the evaluation set, each at the last token of its second period (one earlier "
                "copy to find); vs random scores: the gap to random scores' τ, then 2 standard errors of that gap, "
                "2·√(SE² + SE_random²); 'within noise' when the gap is no larger; the verdicts are about τ only: the top-1 "
                "column is not judged (a blind guess among the earlier tokens is right {:.1f}% of the time)",
                a.sequences, 100.0 * a.chance_top1));
  const double best = a.attn_vs_loo.empty() ? 0.0 : a.attn_vs_loo[c.best_layer];
  if (c.too_few)
    nar.result(_f("not judged: {} sequences are fewer than {}; a standard error from n values is itself uncertain "
                  "by about 1/√(2(n − 1)) of it, {:.0f}% here ({:.0f}% at {}), too loose for a 2-SE rule",
                  a.sequences, kMinImportanceSequences,
                  100.0 / std::sqrt(2.0 * (double(std::max<std::size_t>(a.sequences, 2)) - 1.0)),
                  100.0 / std::sqrt(2.0 * (double(kMinImportanceSequences) - 1.0)), kMinImportanceSequences));
  else
  nar.result(_f("verdict: {} (τ {:+.3f} vs the best attention layer's {:+.3f}; difference {:+.3f}; its noise is "
                "paired over the {} sequences: 2·SE(τ_gradient − τ_attention) of the per-sequence differences = "
                "{:.3f})",
                sentence_for(c.gradients_win.outcome, _("gradients agree with leave-one-out better"),
                     _("attention agrees with leave-one-out better"),
                     _("neither agrees with leave-one-out better beyond the noise")),
                a.grad_vs_loo, best, printed_diff(a.grad_vs_loo, best), a.sequences, 2.0 * c.difference_se));
  if (!c.too_few && !c.informative.holds() && !a.attn_top1.empty() && a.chance_top1 > 0.0)
    nar.result(_f("but no ranking's τ is above random scores' beyond the noise, so this τ test cannot decide claim 5 "
                  "here: τ ranks every earlier token, and the order of those that matter little counts as much as "
                  "the top one. On that top token (top-1 column), layer {}'s attention finds it in {:.1f}% of the "
                  "sequences and gradient × input in {:.1f}%: {:.1f}× and {:.1f}× a blind guess ({:.1f}%; random "
                  "scores {:.0f}%)",
                  c.best_top1_layer, 100.0 * a.attn_top1[c.best_top1_layer], 100.0 * a.grad_top1,
                  a.attn_top1[c.best_top1_layer] / a.chance_top1, a.grad_top1 / a.chance_top1, 100.0 * a.chance_top1,
                  100.0 * a.random_top1));
  nar.say(_("papers: Jain & Wallace find weak τ between attention and gradient or leave-one-out rankings in BiLSTM "
            "classifiers, and a stronger one between gradients and leave-one-out."));
  nar.code("attn/studies/interpretability_claims.hpp: importance_claim; attn/studies/interpretability.hpp: "
           "token_importance, importance_agreement; attn/attention/attention_stats.hpp: kendall_tau");
  nar.why(_("leave-one-out asks the model directly; attention and gradients are two cheaper guesses at it."));
}

void report_claims(Narrator& nar, const InterpretabilityFindings& f) {
  Table t({_("claim"), _("measured here"), _("verdict")});
  auto distance_row = [&](const char* claim, const DistanceClaim& c) {
    const char* word = c.grows.outcome == Outcome::partly ? _("flat (within 10%)") : outcome_word(c.grows.outcome);
    t.add({claim, _f("{:.2f} → {:.2f} tokens, layer 0 → {}", c.layers.front().distance, c.layers.back().distance,
                     c.layers.size() - 1), word});
  };
  auto uniform_row = [&](const char* claim, const UniformClaim& u) {
    t.add({claim, _f("{} of {} heads within 5%", u.flat.size(), u.heads),
           outcome_word(u.exist.holds() ? Outcome::holds : Outcome::fails)});
  };
  distance_row(_("1 distance grows with depth"), f.distance);
  if (f.lm_distance) distance_row(_("1 … in the chapter 09 LM"), *f.lm_distance);
  if (f.encoder_distance) distance_row(_("1 … in the chapter 08 encoder"), *f.encoder_distance);
  t.add({_("2 attention aligns words"), _f("Bahdanau: {:.1f}% argmax hits", 100.0 * f.alignment.bahdanau),
         outcome_word(f.alignment.bahdanau_aligns.outcome)});
  for (const LayerAlignment& la : f.alignment.layers)  // each layer on its heads' mean: no head picked
    t.add({_f("2 … Transformer layer {}, {} heads", la.layer, la.heads),
           _f("mean {:.1f}% argmax hits ({:.1f}–{:.1f}%)", 100.0 * la.mean, 100.0 * la.lo, 100.0 * la.hi),
           outcome_word(la.aligns.outcome)});
  uniform_row(_("3 heads collapse to uniform"), f.uniform);
  if (f.lm_uniform) uniform_row(_("3 … in the chapter 09 LM"), *f.lm_uniform);
  if (f.encoder_uniform) uniform_row(_("3 … in the chapter 08 encoder"), *f.encoder_uniform);
  t.add({_("4 perturbing weights changes little"),
         _f("{} of {} edits below the seed TVD {:.3f}", f.perturbation.below, f.perturbation.rows.size(),
            f.perturbation.seeds.tvd),
         outcome_word(f.perturbation.little_change.outcome)});
  const ImportanceAgreement& a = f.importance.agreement;
  t.add({_("5 gradients beat attention"),
         _f("τ: gradient {:+.3f}, attention ≤ {:+.3f}", a.grad_vs_loo,
            a.attn_vs_loo.empty() ? 0.0 : a.attn_vs_loo[f.importance.best_layer]),
         f.importance.too_few                ? _("not judged")
         : f.importance.informative.holds() ? outcome_word(f.importance.gradients_win.outcome)
                                            : _("undecided")});
  nar.table(t, /*as_result=*/true);
  nar.say(_("to look at every head yourself: --html FILE (offline), or BertViz with --export (see README)."));
}

std::vector<std::string> interpretability_takeaway(const InterpretabilityFindings& f) {
  const InductionCircuit& c = f.circuit;
  const std::size_t H = c.heads.size() / (c.last_layer + 1);
  const std::string prev = head_name(0, c.previous_head), ind = head_name(c.last_layer, c.induction_head);
  std::vector<std::string> lines;
  lines.push_back(_f("Induction: {} marks each token's predecessor (at positions ≤ {}) and {} {} (prefix matching "
                     "{:.2f}); the last layer's {} heads are {}.", prev, c.max_period,
                     c.composes.holds() ? _("feeds") : _("works beside"), ind,
                     c.heads[c.last_layer * H + c.induction_head].prefix_eval, H,
                     c.redundant.holds() ? _("redundant") : _("not redundant")));
  lines.push_back(_f("Second-period loss {:.3f}; {:.3f} with {} zeroed, {:.3f} with {} zeroed, {:.3f} with all of "
                     "layer {} zeroed.", c.base.second, c.second_without_previous, prev, c.second_without_induction,
                     ind, c.second_without_last_layer, c.last_layer));
  if (f.lm_induction && f.lm_induction->text) {
    const LmRepeatProbe& tp = *f.lm_induction->text;
    lines.push_back(_f("The chapter 09 LM, after {} tokens of text: a repeated held-out passage's second copy is {} "
                       "the first ({:.3f} vs {:.3f} nats); on random ids {} ({:.3f} vs {:.3f}).",
                       format_count(f.lm_tokens_seen), tp.copies.holds() ? _("easier than") : _("no easier than"),
                       tp.result.second, tp.result.first,
                       f.lm_induction->random.copies.holds() ? _("easier") : _("no easier"),
                       f.lm_induction->random.result.second, f.lm_induction->random.result.first));
  } else if (f.lm_induction) {
    lines.push_back(_f("The chapter 09 LM, after {} tokens of text: second copy {} the first ({:.3f} vs {:.3f}).",
                       format_count(f.lm_tokens_seen),
                       f.lm_induction->random.copies.holds() ? _("easier than") : _("no easier than"),
                       f.lm_induction->random.result.second, f.lm_induction->random.result.first));
  }
  lines.push_back(_f("Alignment: Bahdanau's argmax hits the true source word for {:.1f}% of target words.",
                     100.0 * f.alignment.bahdanau));
  lines.push_back(_f("Perturbation: {} of {} single-head edits move the output less than another seed does.",
                     f.perturbation.below, f.perturbation.rows.size()));
  const ImportanceAgreement& a = f.importance.agreement;
  if (f.importance.too_few)
    lines.push_back(_f("Importance: not judged from {} sequences (at least {} needed).", a.sequences,
                       kMinImportanceSequences));
  else if (!a.attn_vs_loo.empty() && !f.importance.informative.holds())
    lines.push_back(_f("Importance: no ranking's τ with leave-one-out beats random scores', so τ cannot decide; "
                       "leave-one-out's top token is found by gradient × input in {:.0f}% of the sequences, by "
                       "attention in {:.0f}% (a blind guess: {:.1f}%).", 100.0 * a.grad_top1,
                       100.0 * a.attn_top1[f.importance.best_top1_layer], 100.0 * a.chance_top1));
  else if (!a.attn_vs_loo.empty())
    lines.push_back(_f("Importance: τ with leave-one-out {:+.3f} for gradient × input, {:+.3f} for the best attention "
                       "layer: {}.", a.grad_vs_loo, a.attn_vs_loo[f.importance.best_layer],
                       sentence_for(f.importance.gradients_win.outcome, _("gradients agree better"),
                                    _("attention agrees better"), _("within noise of each other"))));
  return lines;
}

}  // namespace attn
