// Chapter 08's model loading and curve drawing (see attn/present/transformer_report.hpp).
#include "attn/present/transformer_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include <iostream>
#include <limits>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "attn/data/data_files.hpp"
#include "attn/models/seq2seq_train.hpp"
#include "attn/present/ch07_report.hpp"
#include "attn/present/load_or_train.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/sparkline.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/studies/interpretability_claims.hpp"  // kAlignsHolds
#include "attn/tensor/mask.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
const char* norm_word(NormPlacement n) { return n == NormPlacement::Post ? "Post" : "Pre"; }
}  // namespace

ChapterTransformer chapter_transformer(const ToyCorpus& corpus, bool train, const std::string& checkpoint,
                                       const TransformerModelConfig& cfg, const TransformerTrainConfig& tc,
                                       int threads, bool progress) {
  ChapterTransformer ct;
  const std::string name = std::string("transformer_") + norm_name(cfg.norm);
  ct.path = !checkpoint.empty() ? checkpoint : train ? trained_checkpoint("08", name) : shipped_checkpoint("08", name);
  ct.trained = load_or_train(
      {ct.path, train, tc.steps, progress},
      [&](const std::string& path) {
        ct.model = load_transformer(path, &ct.curves, &ct.metadata);
        // The chapter narrates the model the file holds; --norm must name that one, or the narration
        // would call a Post-Norm model Pre-Norm.
        if (ct.model.cfg.norm != cfg.norm)
          throw std::runtime_error(_f("{} holds a {}-Norm model (its metadata says norm = {}), but --norm {} asks "
                                      "for {}-Norm: pass --norm {}, or a checkpoint of the {}-Norm model",
                                      escape_control(path), norm_word(ct.model.cfg.norm), norm_name(ct.model.cfg.norm),
                                      norm_name(cfg.norm), norm_word(cfg.norm), norm_name(ct.model.cfg.norm),
                                      norm_word(cfg.norm)));
      },
      [&](const StepCallback& on_step) {
        TransformerTrainConfig with_bar = tc;
        with_bar.on_step = on_step;
        TransformerModelConfig c = cfg;
        c.src_vocab = corpus.source_vocab.size();
        c.tgt_vocab = corpus.target_vocab.size();
        const TransformerTrainResult r = train_transformer(c, corpus, with_bar);
        ct.model = r.best;
        ct.curves = curves_of(r);
        ct.metadata = {{"steps", std::to_string(tc.steps)},
                       {"batch", std::to_string(tc.batch)},
                       {"warmup", std::to_string(tc.warmup)},
                       {"lr_factor", fmt::format("{}", tc.lr_factor)},
                       {"seed", std::to_string(tc.seed)},
                       {"threads", std::to_string(threads)},
                       {"best_step", std::to_string(r.best_step)},
                       {"valid_bleu", fmt::format("{:.2f}", r.best_bleu)},
                       {"train_seconds", fmt::format("{:.1f}", r.seconds)}};
      },
      [&](const std::string& path) {
        save_transformer(path, ct.model, ct.curves, ct.metadata);
        ct.metadata = {};
        load_transformer(path, nullptr, &ct.metadata);  // the metadata exactly as stored
      });
  return ct;
}

Table metric_table(const std::vector<NamedResult>& models, const std::vector<std::string>& titles,
                   LengthMetric metric) {
  if (titles.size() != models.size()) throw std::invalid_argument("metric_table: one title per model");
  std::vector<std::string> header = {metric == LengthMetric::Bleu    ? "BLEU"
                                     : metric == LengthMetric::Exact ? _("exact %")
                                                                     : _("token %")};
  header.insert(header.end(), titles.begin(), titles.end());
  Table t(header);
  auto cell = [&](const BucketMetrics& b) {
    return format_score(metric == LengthMetric::Bleu ? b.bleu : metric == LengthMetric::Exact ? b.exact : b.token_acc);
  };
  const std::size_t n = models.empty() ? 0 : models.front().second.buckets.size();
  for (std::size_t k = 0; k <= n; ++k) {
    std::vector<std::string> row = {k < n ? models.front().second.buckets[k].bucket.label() : _("all")};
    for (const auto& [name, r] : models) row.push_back(cell(k < n ? r.buckets[k] : r.overall));
    t.add(row);
  }
  return t;
}

namespace {
std::string threads_words(std::size_t n) { return n == 1 ? std::string(_("1 thread")) : _f("{} threads", n); }
}  // namespace

std::vector<std::string> peer_step_lines(const StepTiming& ours, std::size_t threads, std::size_t parameters,
                                         const std::optional<PeerStepTime>& peer) {
  if (!peer)
    return {_("PyTorch's time for this step was not measured: data/ch08/pytorch_step_time.json is missing "
              "(/usr/bin/python3 chapters/08_transformer/pytorch_step_time.py writes it).")};
  const PeerStepTime& p = *peer;
  if (p.batch != ours.batch || p.src_len != ours.src_len || p.tgt_len != ours.tgt_len || p.threads != threads ||
      p.parameters != parameters)
    return {_f("{} was timed on batch {} × {} → {}, {}, {} parameters; this step differs, so the two are "
               "not compared.", p.framework, p.batch, p.src_len, p.tgt_len, threads_words(p.threads), p.parameters)};
  const std::string when = p.measured_on.empty() ? std::string(_("date not recorded")) : p.measured_on;
  std::vector<std::string> lines = {
      _f("stored figure, not measured in this run (data/ch08/pytorch_step_time.json, {}): {}, the same model ({} "
         "parameters), batch {} × {} → {}, {}: {:.1f} ms CPU per step, {:.1f} ms wall, at a 1-minute load "
         "average of {:.1f}", when, p.framework, p.parameters, p.batch, p.src_len, p.tgt_len, threads_words(p.threads),
         p.cpu_ms,
         p.wall_ms, p.load_average)};
  // Equal CPU and wall clock: the two are timed separately, so that run did not wait for a core.
  const std::string waited = std::abs(p.cpu_ms - p.wall_ms) < 0.05
                                 ? _("; its CPU and wall-clock times are equal, so that run did not wait for a core")
                                 : std::string();
  lines.push_back(p.machine.empty()
                      ? _f("machine: not recorded. The file was written by the version of "
                           "chapters/08_transformer/pytorch_step_time.py committed with it, which timed CPU "
                           "(time.process_time) and wall clock (time.perf_counter) separately but did not yet write "
                           "the CPU's name (the script as it stands now does), so where it ran is not known{}",
                           waited)
                      : _f("machine: {}{}", p.machine, waited));
  lines.push_back(_f("ours, measured now: {:.1f} ms CPU per step. Two runs at different times and loads: read the "
                     "pair as \"the same order of magnitude\", not as a speed ratio.", ours.median_cpu_ms));
  return lines;
}

// ---- the block diagram --------------------------------------------------------------------------
namespace {
std::string pad_to(const std::string& s, std::size_t width) {
  const std::size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}
// One sub-layer on two lines, its residual path drawn beneath it. Post-Norm: x → S → (+) → LN;
// Pre-Norm: x → LN → S → (+).
void sublayer(std::vector<std::string>& out, const std::string& name, bool post) {
  const std::string ln = _("LayerNorm");
  if (post) {
    const std::string top = "x ─┬─▶ " + name + " ─▶ (+) ─▶ " + ln + " ─▶";
    const std::size_t plus = display_width("x ─┬─▶ " + name + " ─▶ (");
    out.push_back(top);
    out.push_back("   └" + std::string() + [&] { std::string r; for (std::size_t i = 4; i < plus; ++i) r += "─"; return r; }() +
                  "┘  " + _("residual"));
  } else {
    const std::string top = "x ─┬─▶ " + ln + " ─▶ " + name + " ─▶ (+) ─▶";
    const std::size_t plus = display_width("x ─┬─▶ " + ln + " ─▶ " + name + " ─▶ (");
    out.push_back(top);
    out.push_back("   └" + [&] { std::string r; for (std::size_t i = 4; i < plus; ++i) r += "─"; return r; }() + "┘  " +
                  _("residual"));
  }
}
void boxed(std::vector<std::string>& out, const std::string& title, const std::vector<std::string>& inner,
           std::size_t width, const std::string& tap = "") {
  std::string top = "┌─ " + title + " ";
  while (display_width(top) < width + 3) top += "─";
  out.push_back("  " + top + "┐");
  for (const std::string& l : inner) out.push_back("  │ " + pad_to(l, width) + " │");
  std::string bottom = "└";
  while (display_width(bottom) < width + 3) bottom += "─";
  out.push_back("  " + bottom + "┘" + tap);
}
}  // namespace

std::vector<std::string> block_diagram(const TransformerModelConfig& cfg) {
  const bool post = cfg.norm == NormPlacement::Post;
  std::vector<std::string> enc, dec, out;
  sublayer(enc, _("self-attention"), post);
  sublayer(enc, _("FFN"), post);
  sublayer(dec, _("masked self-attention"), post);
  sublayer(dec, _("cross-attention (K, V from memory)"), post);
  sublayer(dec, _("FFN"), post);
  std::size_t width = 0;
  for (const auto& l : enc) width = std::max(width, display_width(l));
  for (const auto& l : dec) width = std::max(width, display_width(l));
  out.push_back(std::string("  ") + _("source words ─▶ embedding·√d_model + positions"));
  boxed(out, _f("encoder layer, × {}", cfg.enc_layers), enc, width);
  if (!post) out.push_back(std::string("  ") + _("final LayerNorm"));
  out.push_back(std::string("  ") +
                (post ? _("    │ memory: the last encoder layer's output (S × d_model), read by every cross-attention")
                      : _("    │ memory: the encoder's final LayerNorm output (S × d_model), read by every cross-attention")));
  out.push_back(std::string("  ") + _("target words, shifted right (<bos> y₁ …) ─▶ embedding·√d_model + positions"));
  boxed(out, _f("decoder layer, × {}", cfg.dec_layers), dec, width);
  if (!post) out.push_back(std::string("  ") + _("final LayerNorm"));
  out.push_back(std::string("  ") + _("    ▼ linear (the target embedding, tied) + softmax ─▶ p(y_i | y_<i, source)"));
  return out;
}

// ---- step reports -------------------------------------------------------------------------------
namespace {
Labels words_of(const Vocab& v, const std::vector<int>& ids, bool eos) {
  Labels w;
  for (int id : ids) w.push_back(v.token(id));
  if (eos) w.push_back("<eos>");
  return w;
}
Labels decoder_inputs(const Vocab& v, const std::vector<int>& out) {
  Labels w{"<bos>"};
  for (int id : out) w.push_back(v.token(id));
  return w;
}
Mat head_of(const Tensor4& t, std::size_t l, std::size_t h) { return Mat(xt::view(t, l, h)); }
std::string norm_title(const std::string& norm) { return norm == "post" ? "Post-Norm" : "Pre-Norm"; }
std::string metadata_or(const Metadata& md, const std::string& key) {
  const auto it = md.find(key);
  return it == md.end() ? "?" : it->second;
}
std::string thousands(std::size_t n) {
  std::string s = std::to_string(n);
  for (std::ptrdiff_t i = std::ptrdiff_t(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}
std::string millions(double x) { return x >= 1e6 ? fmt::format("{:.1f}M", x / 1e6) : fmt::format("{:.1f}K", x / 1e3); }
std::string percent(double share) { return fmt::format("{:.0f}%", 100.0 * share); }
// "this→happy 0.31, happy→happy 0.28, …": each row's largest weight and the column holding it; a
// no-break space inside each entry, so that a wrapped line breaks only between entries.
std::string row_maxima(const Labels& rows, const Labels& cols, const std::vector<int>& argmax,
                       const std::vector<double>& max) {
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < argmax.size() && i < rows.size() && i < max.size(); ++i)
    cells.push_back(fmt::format("{}→{}\u00a0{:.2f}", rows[i], cols[std::size_t(argmax[i])], max[i]));
  return fmt::format("{}", fmt::join(cells, ", "));
}
// The words of a sentence as labels, a word that occurs more than once numbered by its position from 1
// ("big₃", "big₇"), so that a map's columns and a list of row→column pairs name one position each.
Labels numbered_repeats(const Labels& words) {
  static const char* const digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  Labels out = words;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (std::count(words.begin(), words.end(), words[i]) < 2) continue;
    std::string sub;
    for (const char c : std::to_string(i + 1)) sub += digits[c - '0'];
    out[i] += sub;
  }
  return out;
}
bool has_repeats(const Labels& a, const Labels& b = {}) { return numbered_repeats(a) != a || numbered_repeats(b) != b; }
// sentence_for with composed sentences: the one the outcome picks.
std::string words_for(Outcome o, const std::string& holds, const std::string& fails, const std::string& otherwise) {
  return sentence_for(o, holds.c_str(), fails.c_str(), otherwise.c_str());
}
}  // namespace

void report_model(Narrator& nar, const ChapterTransformer& ct, const ParameterParts& parts, const ToyCorpus& corpus) {
  const TransformerModelConfig& mc = ct.model.cfg;
  const std::string norm = norm_name(mc.norm);
  Table t({_("part"), _("parameters")});
  t.add({_("embeddings (source, target; target tied to the output)"), std::to_string(parts.embeddings)});
  t.add({_f("{} encoder layers", mc.enc_layers), std::to_string(parts.encoder)});
  t.add({_f("{} decoder layers", mc.dec_layers), std::to_string(parts.decoder)});
  t.add({parts.final_norms ? _("output bias and final norms") : _("output bias"), std::to_string(parts.rest)});
  t.add({_("total"), std::to_string(parts.total)});
  nar.table(t);
  nar.say(_f("N: layers per stack, here {} encoder and {} decoder layers (the paper's base model: N = 6, "
             "Vaswani et al. 2017, §3.1)", mc.enc_layers, mc.dec_layers));
  nar.say(_f("d_model {}, {} heads of d_k = {}, d_ff {}, {}, LayerNorm ε = 1e-5, sinusoidal positions",
             mc.d_model, mc.n_heads, mc.d_model / mc.n_heads, mc.d_ff, norm_title(norm)));
  nar.say(_f("x = E[w]·√d_model + PE: E[w] is row w of the embedding table E (the vector of word w, not an "
             "expectation), multiplied by √d_model = {:.0f} as in Vaswani et al. 2017, §3.4; PE: chapter 05's "
             "sinusoidal positional encoding, added row by row", std::sqrt(double(mc.d_model))));
  nar.say(_("FFN: the position-wise feed-forward network, two linear layers with a ReLU between, d_ff wide inside; "
            "tied: the output layer reuses the target embedding matrix; LayerNorm (LN): each row v becomes "
            "γ·(v − mean(v))/√(var(v) + ε) + β, with a learned gain γ and shift β per channel; ε: added to the "
            "variance so that LayerNorm never divides by 0"));
  nar.say(_("Post-Norm (the paper's): LayerNorm after each residual sum, LN(x + sublayer(x)); Pre-Norm: before "
            "each sub-layer, x + sublayer(LN(x)). The block, as this model runs it:"));
  std::string diagram;
  for (const std::string& l : block_diagram(mc)) diagram += l + "\n";
  nar.block(diagram);
  nar.say(_("S: the number of source words (the encoder's rows), T: the number of target positions (the decoder's "
            "rows, <bos> first); <bos>, <eos>: the tokens that begin and end a sentence; p(y_i | y_<i, source): the "
            "probability of target word i given the target words before it (y_<i) and the source sentence"));
  nar.result(_f("{}: {} ({} steps of batch {}, best at step {}, validation BLEU {}) {}{}",
                norm == "post" ? _("Post-Norm Transformer") : _("Pre-Norm Transformer"),
                ct.trained ? _("trained now") : _("loaded"), metadata_or(ct.metadata, "steps"),
                metadata_or(ct.metadata, "batch"), metadata_or(ct.metadata, "best_step"),
                metadata_or(ct.metadata, "valid_bleu"), ct.trained ? "->" : "<-",
                // a no-break space: the arrow stays with the path when the line wraps
                "\u00a0" + shown_model_path(ct.path)));
  nar.say(_("validation BLEU: how closely its translations of the validation split match the references, 0 to "
            "100 (step 7 defines it)"));
  nar.say(_f("splits of the toy corpus: {} training / {} validation / {} test pairs, disjoint (no source sentence "
             "is in two of them)", corpus.train.size(), corpus.valid.size(), corpus.test.size()));
  nar.manifest_field("config", nlohmann::json{{"d_model", mc.d_model}, {"heads", mc.n_heads}, {"d_ff", mc.d_ff},
                                              {"enc_layers", mc.enc_layers}, {"dec_layers", mc.dec_layers},
                                              {"src_vocab", mc.src_vocab}, {"tgt_vocab", mc.tgt_vocab},
                                              {"norm", norm}}.dump());
  nar.code("attn/models/transformer.hpp: transformer_init, transformer_forward; attn/models/transformer_train.hpp: load_transformer");
  nar.why(_("no recurrence: every position reads every other through attention, so a layer is a few matrix products."));
}

void report_encoder(Narrator& nar, const SentencePair& ex, const ExampleRun& run, const EncoderSharpness& s,
                    const Vocab& tv) {
  nar.say(_f("source:    {}", fmt::join(ex.src, " ")));
  nar.say(_f("reference: {}", fmt::join(ex.tgt, " ")));
  nar.say(_f("greedy:    {}", fmt::join(words_of(tv, run.out, false), " ")));
  nar.say(_("greedy: the model's translation written word by word, each time the single most probable next word"));
  nar.record("enc_self_weights", run.att.enc_self);
  nar.record_tokens("enc_self_weights", ex.src, ex.src);
  nar.say(_f("{} encoder layers × {} heads, numbered from 0 as in chapter 04's tensors (L0H0: layer 0, head 0)",
             run.att.enc_self.shape(0), run.att.enc_self.shape(1)));
  nar.say(_f("a row's largest weight, averaged over the rows (uniform over {} words: {:.2f}):", ex.src.size(), s.uniform));
  std::vector<std::string> cells;
  for (const HeadSharpness& h : s.heads) cells.push_back(fmt::format("L{}H{} {:.2f}", h.layer, h.head, h.mean_max));
  nar.say("  " + fmt::format("{}", fmt::join(cells, "  ")));
  const HeadSharpness& top = s.heads[s.sharpest];
  const Labels src = numbered_repeats(ex.src);
  nar.heatmap(fmt::format("enc_self_L{}_H{}", top.layer, top.head), head_of(run.att.enc_self, top.layer, top.head), src,
              src, _f("layer {}, head {}, the sharpest: rows attend to columns", top.layer, top.head), {0.0, 1.0});
  if (has_repeats(ex.src))
    nar.say(_("a word that occurs twice is numbered by its position in the sentence, from 1 (big₃: the third word)"));
  nar.say(_f("each row's largest weight (row→column): {}", row_maxima(src, src, s.row_argmax, s.row_max)));
  nar.say(_f("how close to uniform: this head's rows have an entropy −Σ p·ln p of {:.2f} nats on average (nats: "
             "the unit of a natural-log entropy), {:.0f}% of a uniform "
             "row's ln {} = {:.2f} (100%: every weight {:.2f}; 0: all on one word); the shades start at 0.20, so a "
             "blank cell can hold up to {:.1f}× the uniform weight", top.mean_entropy,
             100.0 * top.mean_entropy / s.uniform_entropy, ex.src.size(), s.uniform_entropy, s.uniform,
             s.uniform > 0.0 ? 0.2 / s.uniform : 0.0));
  nar.say(_f("what to look at: column '{}' holds the largest weight of {} of {} rows; no other pattern is claimed "
             "here (chapter 10 asks what heads do)", src[s.most_read], s.most_read_rows, ex.src.size()));
  nar.say(_("the claim: at least half of the encoder's heads spread their weight widely over the sentence"));
  nar.result(_f("{} of {} heads average a largest weight under {:.2f} (spread widely; this course's cut-off, "
                "{:.1f}× the uniform weight): {}", s.broad, s.heads.size(), kBroadHead,
                s.uniform > 0.0 ? kBroadHead / s.uniform : 0.0, outcome_word(s.mostly_broad.outcome)));
  nar.code("attn/models/transformer_decode.hpp: transformer_greedy, transformer_attention; "
           "attn/studies/transformer_claims.hpp: encoder_sharpness");
  nar.why(sentence_for(s.mostly_broad.outcome,
                       _("each source word's row mixes the whole sentence before the decoder ever looks; most of this "
                         "encoder's heads spread their weight widely (chapter 10 measures how close to uniform)."),
                       _("each source word's row mixes the sentence before the decoder looks; most of this encoder's "
                         "heads already point at a few words."),
                       _("each source word's row mixes the sentence before the decoder looks.")));
}

void report_decoder_mask(Narrator& nar, const ExampleRun& run, const DecoderMaskCheck& c, const Vocab& tv) {
  nar.show("causal_mask", causal_mask(4), {}, {}, _("T = 4: −∞ above the diagonal, so exp(−∞) = 0"));
  nar.record("dec_self_weights", run.att.dec_self);
  const Labels in = decoder_inputs(tv, run.out);
  nar.record_tokens("dec_self_weights", in, in);
  Mat drawn = head_of(run.att.dec_self, 0, 0);  // the keys a row cannot see set to −∞: drawn '·'
  const Labels shown_in = numbered_repeats(in);
  for (std::size_t i = 0; i < drawn.shape(0); ++i)
    for (std::size_t j = i + 1; j < drawn.shape(1); ++j) drawn(i, j) = -std::numeric_limits<float>::infinity();
  nar.heatmap("dec_self_L0_H0_drawn", drawn, shown_in, shown_in, _("layer 0, head 0; '·': masked, the row cannot see it"),
              {0.0, 1.0});
  if (has_repeats(in))
    nar.say(_("a word that occurs twice is numbered by its row, from 1 (<bos> is row 1)"));
  nar.say(_("(_drawn: these weights with the cells above the diagonal set to −∞, so that they draw as '·'; the "
            "weights themselves are exported as dec_self_weights)"));
  nar.say(_f("each row's largest weight (row→column): {}", row_maxima(shown_in, shown_in, c.row_argmax, c.row_max)));
  nar.result(words_for(c.parks_on_bos.outcome,
                          _f("{} of the {} rows after the first put their largest weight on <bos>, the one position "
                             "every row can see; one reading, not tested here: a head with nothing useful to read for a row "
                             "parks its weight there (an 'attention sink', described for large language models by "
                             "Xiao et al. 2023, \"Efficient Streaming Language Models with Attention Sinks\", §3.1)",
                             c.bos_rows, c.rows),
                          _f("only {} of the {} rows after the first put their largest weight on <bos>", c.bos_rows,
                             c.rows),
                          _("no rows after the first")));
  nar.result(_f("total weight above the diagonal, all layers and heads: {} ({})", c.above,
                sentence_for(c.masked.outcome, _("exactly 0: the mask holds"), _("not 0: the mask leaks"),
                             _("not measured"))));
  nar.code("attn/tensor/mask.hpp: causal_mask; attn/models/transformer.hpp: decoder_layer_forward");
  nar.why(_("training feeds the whole reference at once; the mask keeps position i from reading words it must predict."));
}

void report_cross(Narrator& nar, const SentencePair& ex, const ExampleRun& run, const CrossHeads& c,
                  const CrossHeads& test, std::size_t test_pairs, const Vocab& tv) {
  nar.record("cross_weights", run.att.cross);
  nar.record_tokens("cross_weights", words_of(tv, run.out, true), ex.src);
  Vec align = xt::zeros<float>({ex.alignment.size()});
  for (std::size_t i = 0; i < ex.alignment.size(); ++i) align(i) = float(ex.alignment[i]);
  nar.record("example_alignment", align);
  nar.say(_f("the claim: some head's largest weight (argmax) falls on the reference's aligned source word for "
             "at least {:.0f}% of the output words (this course's cut-off; at least {:.0f}%: partly); <eos> has no "
             "aligned word and is not counted", 100.0 * kAlignsHolds, 100.0 * kAlignsPartly));
  nar.say(_("aligned: the source word that the corpus's rules translated into that target word (the toy corpus is "
            "generated by rules, so every target word's source word is known)"));
  nar.say(_f("judged over the whole test split: all {} pairs, each reference translation fed to the decoder "
             "(teacher-forced), so row i writes reference word i; the sentence above is one example of them",
             test_pairs));
  Table t({_("layer"), _("head"), _("this sentence"), _f("test split ({} pairs)", test_pairs)});
  for (std::size_t k = 0; k < c.heads.size(); ++k)
    t.add({std::to_string(c.heads[k].layer), std::to_string(c.heads[k].head), format_share(c.heads[k].score),
           k < test.heads.size() ? format_share(test.heads[k].score) : std::string("—")});
  nar.table(t);
  nar.say(_("each cell: output words whose argmax is the aligned source word, of the words scored"));
  const CrossHeadScore& b = test.heads.empty() ? c.heads[c.best] : test.heads[test.best];
  const CrossHeadScore& here = c.heads[std::min(test.heads.empty() ? c.best : test.best, c.heads.size() - 1)];
  nar.heatmap("cross_best", head_of(run.att.cross, b.layer, b.head), numbered_repeats(words_of(tv, run.out, true)),
              numbered_repeats(ex.src),
              _f("layer {}, head {}: rows write output words, columns are source words", b.layer, b.head), {0.0, 1.0});
  if (has_repeats(words_of(tv, run.out, true), ex.src))
    nar.say(_("a word that occurs twice is numbered by its position, from 1 (rows: in the output; columns: in the "
              "source)"));
  if (!test.heads.empty())
    nar.result(_f("over the test split, layer {}, head {} looks hardest at the aligned source word for {} output "
                  "words ({}); on this sentence, {} (the reference alignment is exported as example_alignment)",
                  b.layer, b.head, format_share(b.score), outcome_word(test.best_aligns.outcome),
                  format_share(here.score)));
  nar.code("attn/models/transformer_decode.hpp: transformer_attention; attn/attention/alignment.hpp: alignment_hits; "
           "attn/studies/transformer_claims.hpp: cross_head_alignment");
  nar.why(_("row i is the query of the step that writes word i: the reordering (adjective after noun, verb last) shows off the diagonal."));
}

void report_decoder_layer(Narrator& nar, const Transformer& m, const SentencePair& ex, const ExampleRun& run,
                          const Vocab& tv) {
  const Labels in = decoder_inputs(tv, run.out);
  const bool post = m.cfg.norm == NormPlacement::Post;
  for (const char* line : post ? std::vector<const char*>{"h1 = LN1(x + SelfAttn(x))", "h2 = LN2(h1 + CrossAttn(h1, memory))",
                                                         "y  = LN3(h2 + FFN(h2))"}
                               : std::vector<const char*>{"h1 = x + SelfAttn(LN1(x))", "h2 = h1 + CrossAttn(LN2(h1), memory)",
                                                         "y  = h2 + FFN(LN3(h2))"})
    nar.say(std::string("  ") + line);
  nar.record("memory", slice_of(run.tape.memory, 0));
  nar.record("dec0_input", slice_of(run.tape.tgt_x, 0));
  const Mat y = slice_of(run.tape.dec[0].y, 0);
  nar.record("dec0_output", y);
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
  const RowMoments x_rows = row_moments(slice_of(run.tape.tgt_x, 0)), y_rows = row_moments(y);
  const RowMoments h1_rows = row_moments(slice_of(run.tape.dec[0].h1, 0)), h2_rows = row_moments(slice_of(run.tape.dec[0].h2, 0));
  Table t({_("row"), _("input x: mean"), _("std"), _("h1: mean"), _("std"), _("h2: mean"), _("std"), _("output y: mean"),
           _("std")});
  for (std::size_t i = 0; i < in.size(); ++i)
    t.add({in[i], fmt::format("{:+.3f}", x_rows.mean[i]), fmt::format("{:.3f}", x_rows.std[i]),
           fmt::format("{:+.3f}", h1_rows.mean[i]), fmt::format("{:.3f}", h1_rows.std[i]),
           fmt::format("{:+.3f}", h2_rows.mean[i]), fmt::format("{:.3f}", h2_rows.std[i]),
           fmt::format("{:+.3f}", y_rows.mean[i]), fmt::format("{:.3f}", y_rows.std[i])});
  nar.table(t);
  const RowMoments g = row_moments(Mat(xt::reshape_view(d0.ln3.gamma, {std::size_t(1), d0.ln3.gamma.size()})));
  const RowMoments be = row_moments(Mat(xt::reshape_view(d0.ln3.beta, {std::size_t(1), d0.ln3.beta.size()})));
  nar.say(post ? _f("each row's mean and std over its {} values (source: \"{}\"): y = LN3(…), so every row of y is "
                    "(v − mean)/std, v being that row of h2 + FFN(h2), then scaled by γ (mean {:.2f}, std {:.2f}) and shifted by β (mean {:+.3f})",
                    m.cfg.d_model, fmt::join(ex.src, " "), g.mean[0], g.std[0], be.mean[0])
               : _f("each row's mean and std over its {} values (source: \"{}\"): y = h2 + FFN(LN3(h2)) is a residual "
                    "sum, not normalised; only the sub-layers' inputs are normalised (by LN1–LN3)",
                    m.cfg.d_model, fmt::join(ex.src, " ")));
  nar.say(_("--export writes this layer's input, memory, output and every parameter (Q = X·W_Q, right-multiplied); "
            "tests/chapters/test_ch08.cpp and tests/check_ch08_export.py recompute dec0_output from those files alone."));
  nar.code("attn/models/transformer.hpp: decoder_layer_forward; attn/models/transformer_decode.hpp: transformer_teacher_forced");
  nar.why(post ? _("each residual sum lets a sub-layer add to its input instead of replacing it, and each LayerNorm "
                   "brings every row back to one scale: the output rows above have nearly the same spread.")
               : _("each residual sum lets a sub-layer add to its input instead of replacing it; Pre-Norm normalises "
                   "only what enters each sub-layer, so the sum itself is free to grow: compare the rows' spread above."));
}

std::string training_formula() {
  return "lr = lr_factor·d_model^−½·min(step^−½, step·warmup^(−3/2))";  // Adam's βs and the smoothing: the lines below
}

void report_training(Narrator& nar, const ChapterTransformer& ct, const TrainingSummary& s) {
  const TrainingCurves& cv = ct.curves;
  nar.say(_f("Adam (Kingma & Ba 2015): the optimiser that moves each weight by a running average of its gradient, "
             "divided by the root of a running average of its square; β1 = {} and β2 = {} say how slowly the two "
             "averages forget (not LayerNorm's β)", kTransformerAdamBeta1, kTransformerAdamBeta2));
  if (!cv.train_loss.empty()) {
    nar.say(_("the three curves below were recorded while the model trained (--train) and are stored in the "
              "checkpoint; this run did not train"));
    nar.say(_f("loss        {}  {:.3f} -> {:.3f} (log scale)", sparkline(cv.train_loss, kCurveCells, true),
               s.loss_first, s.loss_last));
    nar.say(_f("grad norm   {}  step 1 {:.2f} -> step {} {:.2f}", sparkline(cv.grad_norm, kCurveCells),
               cv.grad_norm.front(), cv.grad_norm.size(), cv.grad_norm.back()));
  }
  if (!cv.valid_bleu.empty())
    nar.say(_f("valid BLEU  {}  {:.1f} at step {:.0f} -> {:.1f} at step {:.0f}", sparkline(cv.valid_bleu, kCurveCells),
               cv.valid_bleu.front(), cv.valid_step.front(), cv.valid_bleu.back(), cv.valid_step.back()));
  if (!cv.train_loss.empty())
    nar.say(words_for(s.above_uniform.outcome,
                      _f("a uniform guess over the V = {} words scores ln {} = {:.3f} nats against any target; the "
                         "first loss, {:.3f}, is higher: the untrained model's random predictions are further from "
                         "the targets than a uniform guess", s.vocab, s.vocab, s.uniform_loss, s.loss_first),
                      _f("a uniform guess over the V = {} words scores ln {} = {:.3f} nats against any target; the "
                         "first loss, {:.3f}, is lower: the untrained model starts better than a uniform guess",
                         s.vocab, s.vocab, s.uniform_loss, s.loss_first),
                      _f("a uniform guess over the V = {} words scores ln {} = {:.3f} nats, the same as the first "
                         "loss", s.vocab, s.vocab, s.uniform_loss)));
  if (!cv.train_loss.empty() && s.above_uniform.holds() && s.start.rows > 0)
    nar.say(words_for(s.start_explains.outcome,
                      _f("why it starts higher: the weights training starts from (seed {}; measured here on {} "
                         "target positions of {} training sentences) are not uniform: their next-word entropy "
                         "averages {:.3f} nats, below ln {} = {:.3f}; a target unrelated to such a prediction p costs "
                         "−(1/V)·Σ_j ln p_j on average, at least ln V and equal only for a uniform p: {:.3f} nats "
                         "here, above ln V like the first loss",
                         s.start_seed, s.start.rows, s.start_batch, s.start.entropy, s.vocab, s.uniform_loss,
                         s.start.unrelated_loss),
                      _f("the weights training starts from (seed {}) cost {:.3f} nats against unrelated targets, not "
                         "above ln {} = {:.3f}: their spread does not explain the first loss", s.start_seed,
                         s.start.unrelated_loss, s.vocab, s.uniform_loss),
                      _("not measured")));
  const GradNormReading& g = s.grad;
  if (g.cells > 0)
    nar.say(_f("what to look at in the grad norm (one character per {} steps, each the mean of its steps): it falls "
               "from {:.2f} at character 1 to {:.2f} at character {}; warm-up ends at step {} (character {}); its "
               "highest character after that dip is character {} ({:.2f}), {}; it ends at {:.2f} (character {})",
               g.steps / g.cells, g.first_cell, g.dip, g.dip_cell + 1, g.warmup, g.warmup_cell + 1, g.peak_cell + 1,
               g.peak,
               words_for(g.peak_at_warmup.outcome,
                         _f("within {} characters (a tenth of the run) of warm-up's end, where the learning rate "
                            "peaks", std::size_t(kPeakNearWarmup * double(g.cells))),
                         _f("more than {} characters (a tenth of the run) from warm-up's end, where the learning "
                            "rate peaks", std::size_t(kPeakNearWarmup * double(g.cells))),
                         _("not measured")),
               g.last_cell, g.cells));
  if (g.steps > 0)
    nar.result(_f("the gradients are clipped to a global norm of {0} before each Adam step (the training's clip); the "
                  "curve is the norm before clipping: {1} of {2} steps ({3:.0f}%) read g > {0} and had their gradient "
                  "scaled by {0}/g", g.clip, g.clipped, g.steps, 100.0 * double(g.clipped) / double(g.steps)));
  nar.say(_f("learning rate: lr = {} · d_model^−½ · min(step^−½, step · warmup^(−3/2)) with d_model {} and warm-up {}: "
             "it grows linearly to {:.5f} at step {}, then decays as step^−½ ({} is this run's lr_factor; the paper's is 1)",
             s.lr_factor, s.d_model, s.warmup, s.peak_lr, s.warmup, s.lr_factor));
  nar.say(_f("label smoothing {}: the target puts {} + {}/V on the right word and {}/V on each of the other V − 1 "
             "(V = {}; Szegedy et al. 2016), so no model can reach a loss below the target's own entropy:",
             s.smoothing, 1.0 - s.smoothing, s.smoothing, s.smoothing, s.vocab));
  nar.result(_f("label-smoothing floor {:.3f} nats; the last loss {:.3f} is {:.3f} nats/token above it ({})", s.floor,
                s.loss_last, s.loss_last - s.floor,
                words_for(s.near_floor.outcome, _f("within {:.1f}, this course's cut-off: near the floor", kNearFloor),
                          _("more than 0.5: far from converged"), _("within 0.5: close, still above it"))));
  if (s.best_step > 0 && s.best_step != s.steps)
    nar.say(_f("the curves run to step {}; the weights loaded are the best checkpoint's, from step {} (by validation "
               "BLEU), so the last loss belongs to a later step than the model narrated", s.steps, s.best_step));
  nar.say(_f("{} steps of {} sentences = {:.1f} passes over the {} training pairs", s.steps, s.batch, s.passes,
             s.train_pairs));
  nar.say(_f("dropout: none here, where the paper uses P_drop = 0.1 on every sub-layer's output and on the embedding "
             "sums (Vaswani et al. 2017, §5.4); this corpus is generated from rules, and {} pairs leave the model "
             "little to memorise that the rules do not already give, so the course trains without it; step 7 checks "
             "that choice (training BLEU against test BLEU)", s.train_pairs));
  nar.code("attn/models/transformer_train.hpp: train_transformer, transformer_learning_rate; "
           "attn/studies/transformer_claims.hpp: label_smoothing_floor, grad_norm_reading");
  nar.why(_("one explanation offered for warm-up, not measured in this run: it keeps the first steps small while "
            "Adam's running averages rest on only a few gradients (--norm-study trains with and without it); label smoothing stops the model from pushing one word's "
            "probability to 1 (the curves above were recorded in training and are stored in the checkpoint)."));
}

std::vector<ModelEval> evaluate_translators(Narrator& nar, const Transformer& m, const ToyCorpus& corpus,
                                            const std::string& norm) {
  const Vocab &sv = corpus.source_vocab, &tv = corpus.target_vocab;
  static std::vector<ChapterModel> rnn;  // kept alive for the jobs below
  rnn.clear();
  for (const auto& [chn, name] : {std::pair<std::string, std::string>{"00", "no_attention"}, {"01", "bahdanau"},
                                  {"02", "luong_general"}})
    rnn.push_back(chapter_model(chn, name, corpus, false, "", TrainConfig{}));
  static std::optional<Transformer> other;
  other.reset();
  static Metadata other_md;
  static TrainingCurves other_curves;
  other_md = {};
  other_curves = {};
  if (const auto p = find_data_file("ch08/" + transformer_model_name(other_norm(norm)) + ".safetensors")) {
    // The other norm's model is only compared with: a file that is there but unreadable, or holds
    // another model, is an error naming it (remove it and step 7 leaves the column out).
    const std::string theirs = other_norm(norm);
    try {
      other = load_transformer(*p, &other_curves, &other_md);
    } catch (const std::exception& e) {
      throw std::runtime_error(_f("{}: the {}-Norm model step 7 compares with could not be read ({}); replace it, or "
                                  "remove it to leave its column out", escape_control(*p),
                                  theirs == "post" ? "Post" : "Pre", e.what()));
    }
    if (norm_name(other->cfg.norm) != theirs || other->cfg.src_vocab != sv.size() || other->cfg.tgt_vocab != tv.size())
      throw std::runtime_error(_f("{}: expected the {}-Norm model over this corpus ({} source and {} target words), "
                                  "but it holds a {}-Norm model over {} and {}; replace it, or remove it to leave its "
                                  "column out", escape_control(*p), theirs == "post" ? "Post" : "Pre", sv.size(),
                                  tv.size(), norm_word(other->cfg.norm), other->cfg.src_vocab, other->cfg.tgt_vocab));
  }
  static std::vector<SentencePair> train_sample;
  train_sample = training_sample(corpus, corpus.test.size());
  std::vector<TranslatorJob> jobs;
  for (const ChapterModel& cm : rnn)
    jobs.push_back({model_name(cm.model.cfg), [&] { return evaluate_model(cm.model, corpus.test, sv, tv); }, cm.metadata,
                    {}, parameter_count(cm.model)});
  auto transformer_job = [&](const std::string& name, const Transformer& t, const std::vector<SentencePair>& pairs,
                             std::size_t beam, const Metadata& md = {}, const TrainingCurves& curves = {}) {
    jobs.push_back({name, [&t, &pairs, &sv, &tv, beam] {
                      return evaluate_translator([&](const std::vector<SentencePair>& ps) {
                        return transformer_translate_pairs(t, ps, sv, tv, beam);
                      }, pairs);
                    }, md, curves, parameter_count(t)});
  };
  const std::string me = transformer_model_name(norm);
  transformer_job(me + "_greedy", m, corpus.test, 1);
  transformer_job(me + "_beam4", m, corpus.test, kBeamSize);
  if (other)
    transformer_job(transformer_model_name(other_norm(norm)) + "_greedy", *other, corpus.test, 1, other_md, other_curves);
  transformer_job(me + "_train", m, train_sample, 1);
  const bool show = !nar.quiet() && stderr_is_terminal();
  return run_evaluations(jobs, [&](std::size_t done, std::size_t total) {
    if (show) std::cerr << "\r  " << _f("evaluating: {} of {} translators done", done, total)
                        << (done == total ? "\r\x1b[K" : "") << std::flush;
  });
}

void report_results(Narrator& nar, const TransformerFindings& f, const ToyCorpus& corpus) {
  const TranslationFindings& t = f.translation;
  const std::string me = t.model, other = t.other;
  std::vector<NamedResult> shown;
  std::vector<std::string> titles;
  for (const auto& [name, title] : {std::pair<std::string, std::string>{"no_attention", _("none")}, {"bahdanau", "Bahdanau"},
                                    {"luong_general", "Luong-gen"}}) {
    shown.push_back({name, eval_named(f.evals, name).result});
    titles.push_back(title);
  }
  const std::string mine = f.norm == "post" ? "Post" : "Pre", theirs = f.norm == "post" ? "Pre" : "Post";
  shown.push_back({me + "_greedy", eval_named(f.evals, me + "_greedy").result});
  titles.push_back(_f("{} greedy", mine));
  shown.push_back({me + "_beam4", eval_named(f.evals, me + "_beam4").result});
  titles.push_back(_f("{} beam 4", mine));
  if (t.other_present) {
    shown.push_back({other + "_greedy", eval_named(f.evals, other + "_greedy").result});
    titles.push_back(_f("{} greedy", theirs));
  }
  nar.say(_("BLEU (Papineni et al. 2002): p_n is the share of the outputs' n-grams (runs of n words) that the "
            "references hold, each counted at most as often as its reference has it; BLEU = 100 · BP · "
            "(p₁p₂p₃p₄)^¼, summed over a whole split, not averaged per sentence; the brevity penalty BP = "
            "exp(1 − r/c) when the outputs' total length c is below the references' r, else 1"));
  nar.table(metric_table(shown, titles, LengthMetric::Bleu), /*as_result=*/true);
  {  // what each column cost: its model's size and its training, from the checkpoints
    std::vector<std::string> head = {_("budget")}, params = {_("parameters")}, steps = {_("steps × batch")};
    head.insert(head.end(), titles.begin(), titles.end());
    for (const NamedResult& r : shown) {
      const ModelEval& e = eval_named(f.evals, r.first);
      const bool own = r.first.rfind(me, 0) == 0;  // this chapter's model: its steps are step 6's
      const double n = own ? double(f.training.steps) : metadata_number(e.checkpoint, "steps");
      const double b = own ? double(f.training.batch) : metadata_number(e.checkpoint, "batch");
      params.push_back(e.parameters ? thousands(e.parameters) : std::string("?"));
      steps.push_back(n > 0 && b > 0 ? fmt::format("{:.0f} × {:.0f}", n, b) : std::string("?"));
    }
    Table budget(head);
    budget.add(params);
    budget.add(steps);
    nar.table(budget);
  }
  nar.table(metric_table(shown, titles, LengthMetric::Exact), /*as_result=*/true);
  nar.table(metric_table(shown, titles, LengthMetric::TokenAccuracy), /*as_result=*/true);
  bool two_decimals = false;  // format_score gives a score just under 100 a second decimal
  for (const NamedResult& r : shown) {
    std::vector<BucketMetrics> rows = r.second.buckets;
    rows.push_back(r.second.overall);
    for (const BucketMetrics& m : rows)
      for (double v : {m.bleu, m.exact, m.token_acc}) two_decimals = two_decimals || format_score(v) != fmt::format("{:.1f}", v);
  }
  if (two_decimals)
    nar.say(_("two decimals (as in 99.96): a score just under 100 that one decimal would round to 100.0, which "
              "reads as perfect; it is cut to two decimals instead, so it stays below 100"));
  nar.say(_("none = chapter 00's encoder-decoder without attention, Bahdanau = chapter 01, Luong-gen = chapter 02 (global, general score); Post and Pre = "
            "this chapter's two Transformers (Post-Norm, the paper's placement, and Pre-Norm), loaded from data/ch08/; "
            "every column on the same test split"));
  std::vector<std::string> counts;
  std::size_t in_buckets = 0;
  for (const BucketMetrics& m : eval_named(f.evals, me + "_greedy").result.buckets) {
    counts.push_back(fmt::format("{} {}", m.bucket.label(), m.sentences));
    in_buckets += m.sentences;
  }
  nar.say(_f("exact: the share of sentences translated word for word; token: the share of reference positions given "
             "the right word; test sentences per bucket: {}", fmt::join(counts, ", ")));
  if (in_buckets < corpus.test.size())
    nar.say(_f("the 'all' rows cover the {} of {} test sentences that fall in a bucket; the other {} (shorter than "
               "the first bucket) are in no bucket", in_buckets, corpus.test.size(), corpus.test.size() - in_buckets));
  nar.say(_f("checkpoints: {}, the weights of step {} of {} (validation BLEU {:.2f}, seed {}){}", norm_title(f.norm),
             t.own.best_step, t.own.steps, t.own.valid_bleu, t.own.seed.empty() ? "?" : t.own.seed,
             t.other_present ? _f("; {}, step {} of {} ({:.2f}, seed {}); one training run each",
                                  norm_title(other_norm(f.norm)), t.other_checkpoint.best_step, t.other_checkpoint.steps,
                                  t.other_checkpoint.valid_bleu, t.other_checkpoint.seed.empty() ? "?" : t.other_checkpoint.seed)
                             : std::string()));
  for (const auto& [note, name] : {std::pair<const CheckpointNote*, std::string>{&t.own, norm_title(f.norm)},
                                   {&t.other_checkpoint, norm_title(other_norm(f.norm))}}) {
    if (note == &t.other_checkpoint && !t.other_present) continue;
    if (note->best_step == 0 || note->best_step != note->steps) continue;
    const CheckpointNote& n = *note;
    nar.say(words_for(n.still_improving.outcome,
                      _f("{}'s best validation score came at its last step, and its validation BLEU still rose by "
                         "{:.1f} from step {:.0f} to step {:.0f} ({:.1f} → {:.1f}; this course's cut-off: {:.1f}): it "
                         "was still improving when training stopped, so a longer run may score higher and the "
                         "comparison below is one seed each, not a settled ranking", name,
                         n.last_bleu - n.previous_bleu, n.previous_step, n.last_step, n.previous_bleu, n.last_bleu,
                         kStillImproving),
                      _f("{}'s best validation score came at its last step, but its validation BLEU rose by only "
                         "{:.1f} from step {:.0f} to step {:.0f} ({:.1f} → {:.1f}; this course's cut-off: {:.1f}): it "
                         "had levelled off; the comparison below is still one seed each", name,
                         n.last_bleu - n.previous_bleu, n.previous_step, n.last_step, n.previous_bleu, n.last_bleu,
                         kStillImproving),
                      _f("{}'s best validation score came at its last step; its curve has too few points to tell "
                         "whether it was still improving", name)));
  }
  const std::size_t below = t.vs_bahdanau.buckets - t.vs_bahdanau.at_least;
  nar.result(below == 0
                 ? _f("{} greedy: lowest bucket BLEU {}; at least Bahdanau's score in every bucket", mine,
                      format_score(t.vs_bahdanau.lowest))
                 : _f("{} greedy: lowest bucket BLEU {}; below Bahdanau's in {} of {} buckets (all lengths: BLEU {} vs "
                      "{}, exact {}% vs {}%)", mine, format_score(t.vs_bahdanau.lowest), below, t.vs_bahdanau.buckets,
                      format_score(t.test_bleu), format_score(t.bahdanau_bleu), format_score(t.test_exact),
                      format_score(t.bahdanau_exact)));
  if (t.other_present)
    nar.result(_f("longest sentences ({} words): Pre-Norm greedy BLEU {}, Post-Norm {}: {}", t.long_bucket,
                  format_score(t.pre_long), format_score(t.post_long),
                  sentence_for(t.pre_better_long.outcome, _("Pre-Norm is better by more than 1 point (this course's cut-off)"),
                               _("Post-Norm is better by more than 1 point (this course's cut-off)"), _("within 1 point of each other"))));

  // A failure beside the perfect example.
  if (t.failure.found) {
    const SentencePair& p = corpus.test[t.failure.index];
    const FailureExample& fe = t.failure;
    nar.say(_f("a failure from the {} bucket, the first in the test split's order: {} of {} reference words wrong, "
               "the first at word {}", t.long_bucket, fe.wrong_words, p.tgt.size(), fe.first_wrong + 1));
    const std::string spread = _f("of the bucket's {} failures, {} have fewer words wrong and {} more (median {:.1f})",
                                  fe.failures, fe.milder, fe.worse, fe.median_wrong);
    nar.say(words_for(fe.typical.outcome, _f("{}: a typical one", spread),
                      fe.worse > fe.milder ? _f("{}: milder than most, so the bucket's errors are usually worse than "
                                                "this", spread)
                                           : _f("{}: worse than most", spread),
                      spread));
    nar.say(_f("the failures by cause: {} have every reference word right and fail on length alone (words added "
               "after the reference's end), {} have words wrong at the reference's length, {} have words wrong and "
               "another length", fe.length_only, fe.wrong_same_length, fe.wrong_other_length));
    nar.say(_f("source:    {}", fmt::join(p.src, " ")));
    nar.say(_f("reference: {}", fmt::join(p.tgt, " ")));
    nar.say(_f("greedy:    {}", fmt::join(t.failure.hyp, " ")));
    const FailureExample& e = t.failure;
    if (e.copied_from >= 0 && e.copied_source >= 0 && e.wanted_source >= 0)
      nar.say(_f("at word {} it writes '{}' (the source's '{}') again, which the reference has at word {}, instead of "
                 "'{}' (the source's '{}'): it repeats an earlier word", e.first_wrong + 1, e.hyp[e.first_wrong],
                 p.src[std::size_t(e.copied_source)], e.copied_from + 1, p.tgt[e.first_wrong],
                 p.src[std::size_t(e.wanted_source)]));
  }

  // Beam search against greedy, explained by the model's own scores.
  const BeamDiagnosis& b = t.beam;
  nar.say(_f("beam 4: the 4 best partial translations are kept at every step instead of 1; a finished one is ranked by "
             "s(Y) = Σ log p / lp(|Y|), lp = ((5 + |Y|)/6)^{}, which divides by lp so that longer outputs are not "
             "penalised for their length", b.alpha));
  nar.say(_f("from here on, every count is over the {} test sentences in a bucket, the ones the BLEU scores cover",
             b.sentences));
  nar.result(_f("beam 4 vs greedy, all lengths: BLEU {} vs {}; outputs shorter than their reference: {} vs {}, longer: "
                "{} vs {} (of {})", format_score(t.beam_bleu), format_score(t.test_bleu), b.beam.shorter, b.greedy.shorter,
                b.beam.longer, b.greedy.longer, b.greedy.shorter + b.greedy.same + b.greedy.longer));
  nar.result(_f("in total: beam {} words, greedy {}, the references {}; brevity penalty BP: beam {:.4f}, greedy "
                "{:.4f}; precisions (p₁p₂p₃p₄)^¼ = BLEU / BP: beam {:.4f}, greedy {:.4f}", b.beam_parts.hyp_len,
                b.greedy_parts.hyp_len, b.greedy_parts.ref_len, b.beam_parts.brevity_penalty,
                b.greedy_parts.brevity_penalty, b.beam_precision, b.greedy_precision));
  const double length_pct = 100.0 * b.length_explains.measured;
  nar.say(words_for(b.length_explains.outcome,
                    length_pct >= 100.0
                        ? _f("length explains all of the gap: the brevity penalty's ratio is {:.0f}% of the BLEU "
                             "ratio (in logarithms; this course's cut-off: {:.0f}%), so without it the search with "
                             "the lower BLEU would score the higher: its precisions are the higher",
                             length_pct, 100.0 * kLengthShare)
                        : _f("length explains most of the gap: the brevity penalty's ratio is {:.0f}% of the BLEU "
                             "ratio (in logarithms; this course's cut-off: {:.0f}%)", length_pct,
                             100.0 * kLengthShare),
                    length_pct >= 0.0
                        ? _f("length does not explain the gap: the brevity penalty's ratio is {:.0f}% of the BLEU "
                             "ratio (in logarithms; this course's cut-off: {:.0f}%); the rest is in the precisions",
                             length_pct, 100.0 * kLengthShare)
                        : _("length does not explain the gap: the brevity penalty favours the search with the lower "
                            "BLEU; the whole gap is in the precisions"),
                    _("the two BLEU scores are equal: no gap for length to explain")));
  nar.result(_f("exact matches over those {} sentences: beam {} vs greedy {} (BLEU {} vs {})", b.sentences,
                b.beam_exact_all, b.greedy_exact_all, format_score(b.beam_bleu), format_score(b.greedy_bleu)));
  nar.say(words_for(b.metrics_agree.outcome,
                    b.beam_bleu > b.greedy_bleu ? _("BLEU and exact match agree: beam is the better search by both")
                                                : _("BLEU and exact match agree: greedy is the better search by both"),
                    b.beam_bleu < b.greedy_bleu && b.length_explains.holds()
                        ? _f("BLEU and exact match disagree: beam scores lower BLEU but gets {} more sentences exactly "
                             "right; its lower BLEU is the brevity penalty above, for its shorter outputs in total, "
                             "not fewer matching words", b.beam_exact_all - b.greedy_exact_all)
                    : b.beam_bleu < b.greedy_bleu
                        ? _f("BLEU and exact match disagree: beam scores lower BLEU but gets {} more sentences exactly "
                             "right; BLEU also gives credit for near misses, which exact match does not, so beam's "
                             "wrong outputs are, together, further from their references",
                             b.beam_exact_all - b.greedy_exact_all)
                        : _f("BLEU and exact match disagree: beam scores higher BLEU but gets {} fewer sentences "
                             "exactly right", b.greedy_exact_all - b.beam_exact_all),
                    _("BLEU or exact match ties the two: neither measure separates them")));
  nar.say(words_for(b.ends_early.outcome,
                    _f("so with α = {} (lp's exponent) the division does not make up for the sum of log p favouring short "
                       "outputs: beam still stops short of the reference more often than greedy", b.alpha),
                    _f("at α = {} beam stops short of the reference less often than greedy", b.alpha),
                    _f("at α = {} beam stops short of the reference as often as greedy", b.alpha)));
  nar.result(_f("where the two differ ({} sentences): beam's output has the higher s(Y) in {} ({}); it is the shorter "
                "one in {}; exactly right: beam {}, greedy {}", b.differ, b.beam_higher,
                sentence_for(b.search_works.outcome, _("the search finds what it looks for"),
                             _("the search often misses"), _("nothing to compare")),
                b.beam_shorter, b.beam_exact, b.greedy_exact));
  nar.result(_f("of beam's {} wrong outputs there, the model scores the reference lower by s(Y) in {}: {}", b.beam_wrong,
                b.reference_lower,
                sentence_for(b.model_error.outcome,
                             _("a model error, not a search error: a better search finds more of what the model "
                               "wrongly prefers (Stahlberg & Byrne 2019, \"On NMT Search Errors and Model Errors\")"),
                             _("mostly search errors: the reference scored higher, and beam missed it"),
                             _("nothing to compare"))));
  // Training BLEU against test BLEU.
  nar.result(_f("greedy BLEU on {} training sentences {}, on the test split {}, on the validation split {:.2f} "
                "(recorded in training): training − test = {:+.1f}", t.train_sentences, format_score(t.train_bleu),
                format_score(t.test_bleu), t.valid_bleu,
                std::stod(format_score(t.train_bleu)) - std::stod(format_score(t.test_bleu))));
  if (t.train_long_sentences > 0)
    nar.result(_f("on {} words alone: training {} ({} sentences of the sample), test {} ({} sentences): training − "
                  "test = {:+.1f}", t.long_bucket, format_score(t.train_long), t.train_long_sentences,
                  format_score(t.test_long), t.test_long_sentences,
                  std::stod(format_score(t.train_long)) - std::stod(format_score(t.test_long))));
  nar.say(sentence_for(t.generalises.outcome,
                       _("no overfitting: the model does as well on sentences it never saw as on those it trained on "
                         "(a gap of at most 2 points, this course's cut-off), so training without dropout (step 6) did not cost it here"),
                       _("overfitting: the model does clearly better on its training sentences (a gap of more than 5 "
                         "points); dropout would be the paper's remedy"),
                       _("a small gap between training and test BLEU (2–5 points): some overfitting")));
  nar.code("attn/models/transformer_decode.hpp: transformer_translate_pairs, transformer_beam; "
           "attn/studies/transformer_claims.hpp: diagnose_beam, judge_generalises");
  nar.why(sentence_for(t.generalises_long.outcome,
                       _("the long sentences are where this model errs, and its errors there are not overfitting: on "
                         "the longest ones it does no better on sentences it trained on than on new ones."),
                       _("the long sentences are where this model errs, and it does clearly better on the longest "
                         "sentences it trained on than on new ones: it has memorised part of them."),
                       _("the longest sentences are the hard ones; training and test BLEU there do not separate "
                         "clearly.")));
}

void report_norm_placement(Narrator& nar, const TransformerFindings& f, const TransformerModelConfig& cfg) {
  const NormPlacementStudy& s = f.norms;
  nar.say(_f("the claim (Xiong et al. 2020, \"On Layer Normalization in the Transformer Architecture\", §3.3–3.4 "
             "and Fig. 3): at initialisation, the gradient of each layer's FFN weight W2 grows with the layer index "
             "under Post-Norm and stays level under Pre-Norm; measured on a fresh {} + {}-layer model of this width "
             "(d_model {}), one batch of {} sentences at one seed — one draw, not a replication:", s.layers, s.layers, cfg.d_model, s.batch));
  Table t({_("layer"), _("Post: encoder"), _("decoder"), _("Pre: encoder"), _("decoder")});
  for (std::size_t l = 0; l < s.layers; ++l)
    t.add({std::to_string(l), fmt::format("{:.4f}", s.post.encoder[l]), fmt::format("{:.4f}", s.post.decoder[l]),
           fmt::format("{:.4f}", s.pre.encoder[l]), fmt::format("{:.4f}", s.pre.decoder[l])});
  nar.table(t, true);
  nar.say(_("each cell: ‖∂L/∂W2‖ of that layer's FFN: L is the training loss on the batch, W2 the FFN's second "
            "weight matrix (d_ff → d_model), ‖·‖ the Frobenius norm over its d_ff × d_model entries"));
  nar.say(_f("the cut-offs are this course's, not the paper's: grows means last / first layer ≥ {:.2f} (the two end "
             "layers only); level means every layer within {:.0f}% of layer 0 (within 25%: partly), judged on the "
             "layer farthest from it", kGrows, 100.0 * kLevel));
  nar.result(_f("Post-Norm, last / first layer: encoder {:.3f}, decoder {:.3f}; grows with depth in this draw: "
                "encoder {}, decoder {}", s.post_enc, s.post_dec, outcome_word(s.post_grows_enc.outcome),
                outcome_word(s.post_grows_dec.outcome)));
  nar.result(_f("Pre-Norm, the layer farthest from layer 0, over layer 0: encoder layer {} at {:.3f}, decoder layer "
                "{} at {:.3f}; level in this draw: encoder {}, decoder {}", s.pre_enc_far_layer, s.pre_enc_far,
                s.pre_dec_far_layer, s.pre_dec_far, outcome_word(s.pre_level_enc.outcome),
                outcome_word(s.pre_level_dec.outcome)));
  const TranslationFindings& tr = f.translation;
  if (tr.other_present)
    nar.say(_f("not from this study: the trained {} + {}-layer models of step 7, on {} words, score Pre-Norm greedy "
               "BLEU {}, Post-Norm {}; the table above is a fresh {} + {}-layer model before any training, so the two "
               "do not test each other", cfg.enc_layers, cfg.dec_layers, tr.long_bucket, format_score(tr.pre_long),
               format_score(tr.post_long), s.layers, s.layers));
  if (f.warmup) {
    report_warmup_study(nar, *f.warmup);
  } else {
    nar.say(_("--norm-study adds short training runs with and without warm-up (3 seeds each, minutes)."));
  }
  nar.code("attn/studies/transformer_study.hpp: ffn_w2_grad_norms, warmup_study; "
           "attn/studies/transformer_claims.hpp: norm_placement_study, warmup_findings");
  const bool both = s.post_grows_dec.holds() && s.pre_level_dec.holds();
  const bool no_growth = s.post_grows_enc.outcome == Outcome::fails && s.post_grows_dec.outcome == Outcome::fails;
  nar.why(both ? _("a Post-Norm residual path passes through every LayerNorm, which scales the gradient at each layer; "
                   "Pre-Norm keeps an identity path to the output, so every layer's gradient is alike.")
          : no_growth ? _("the paper's picture is for d_model 512; at this width and depth this one draw shows none of "
                          "the Post-Norm growth: it cannot refute the paper, only fail to reproduce it here.")
                      : _("the paper's picture is for d_model 512; at this width and depth this one draw shows it only "
                          "in part: one batch at one seed suggests, it does not decide."));
}

void report_warmup_study(Narrator& nar, const WarmupFindings& w) {
  Table wt({_("norm"), _("warm-up"), _("seed"), _f("loss after {} steps", w.steps)});
  for (const auto& r : w.runs)
    wt.add({norm_name(r.norm), r.warmup ? _("yes") : _("no"), std::to_string(r.seed),
            std::isfinite(r.final_loss) ? fmt::format("{:.3f}", r.final_loss) : _("diverged")});
  nar.table(wt, true);
  nar.say(_f("each loss: the mean training loss of the last 10 of the {} steps; the noise below is two standard "
             "errors of a difference of means over the {} seeds", w.steps, w.seeds));
  for (const auto& [e, name] : {std::pair<const WarmupEffect*, std::string>{&w.post, "Post-Norm"}, {&w.pre, "Pre-Norm"}}) {
    const std::string diverged = e->with.diverged + e->without.diverged == 0
                                     ? std::string()
                                     : _f(" ({} of {} runs without warm-up diverged, {} of {} with it)",
                                          e->without.diverged, e->without.runs, e->with.diverged, e->with.runs);
    nar.result(_f("{}: with warm-up {:.3f}, without {:.3f}; without − with = {:+.3f}, noise ±{:.3f}{}: {}", name,
                  e->with.mean, e->without.mean, e->without.mean - e->with.mean, e->noise, diverged,
                  sentence_for(e->helps.outcome, _("warm-up lowers the loss"), _("warm-up raises the loss"),
                               _("no difference beyond the seeds' spread"))));
  }
  nar.result(_f("Pre-Norm {:.3f}, Post-Norm {:.3f} (both schedules, every seed); Post − Pre = {:+.3f}, noise ±{:.3f}: {}",
                w.pre_all.mean, w.post_all.mean, w.post_all.mean - w.pre_all.mean, w.noise,
                sentence_for(w.pre_lower.outcome, _("Pre-Norm ends lower"),
                             _("Post-Norm ends lower"), _("the same within noise"))));
  nar.say(words_for(w.post.helps.outcome,
                    _f("as Xiong et al. 2020 find (Post-Norm needs warm-up, Pre-Norm trains without it), warm-up "
                       "helps Post-Norm here; {}",
                       w.pre.helps.holds() ? _("it helps Pre-Norm too") : _("Pre-Norm does without it")),
                    _("Xiong et al. 2020 find that Post-Norm needs warm-up; here warm-up makes Post-Norm worse, the "
                      "opposite of their finding (a small model, a short run)"),
                    _f("Xiong et al. 2020 find that Post-Norm needs warm-up and Pre-Norm trains without it (at "
                       "d_model 512); in these {} steps at d_model 64 warm-up makes no difference beyond the seeds' "
                       "spread for Post-Norm: a small model and a short run do not show the paper's effect, {}",
                       w.steps,
                       sentence_for(w.pre_lower.outcome, _("but the norm's placement does: Pre-Norm ends lower"),
                                    _("and Post-Norm ends lower"), _("nor does the placement")))));
}

void report_costs(Narrator& nar, const TransformerFindings& f) {
  const CostStudy& c = f.cost;
  nar.say(_("encoder layer, term by term: 4·2·T·d² the four projections (Q, K, V and the output), 2·2·T²·d the "
            "scores (Q·Kᵀ and the weights times V), 2·2·T·d·d_ff the FFN's two layers"));
  nar.say(_("decoder layers: the cross-attention adds 2·2·T·d² (its Q and output) + 2·2·S·d² (K and V on the "
            "source) to the projections and 2·2·T·S·d to the scores; S = T here"));
  nar.say(_f("FLOPs: floating-point operations, 2 per multiply-add (the leading factor 2 of each term); T: the "
             "target positions, S: the source words; d = d_model ({} here, {} for base); d_ff: the FFN's inner "
             "width ({} here, {} for base)", c.d_model, TransformerConfig{}.d_model, c.d_ff, TransformerConfig{}.d_ff));
  Table t({_("model"), _("parameters"), _f("FLOPs per target token (S = T = {})", kCostLengths[0])});
  t.add({_("base (Vaswani et al. 2017)"), millions(c.base.params), millions(c.base.flops_per_token)});
  t.add({_("ours, same formula"), millions(c.ours.params), millions(c.ours.flops_per_token)});
  nar.table(t, true);
  Table shares({"T", _("base: attention"), _("scores alone"), _("ours: attention"), _("scores alone")});
  for (std::size_t k = 0; k < std::size(kCostLengths); ++k)
    shares.add({std::to_string(kCostLengths[k]), percent(c.base.share[k]), percent(c.base.score_share[k]),
                percent(c.ours.share[k]), percent(c.ours.score_share[k])});
  nar.table(shares, true);
  nar.say(_f("attention: projections and scores, as a share of the layers' FLOPs (the rest is the FFN; the output "
             "layer's 2·d·V per token is left out, V here the vocabulary size, not step 4's values); scores alone: the "
             "T²·d and T·S·d terms; the formula shares one embedding table between source, target and output, as the "
             "paper does; for base (V = 37000, §5.1: \"about 37000\") it gives {:.1f}M, the paper says 65M (Table 3; its exact vocabulary and rounding "
             "are not given)", c.base.params / 1e6));
  const std::size_t formula = std::size_t(std::llround(c.ours.params));
  if (c.final_norms == 0 && c.built == formula + c.source_table + c.output_bias)
    nar.say(_f("our model as built: {} parameters = the formula's {} + {} for its separate source table ({} words × "
               "d_model {}, which the formula folds into the shared one) + {} for the output bias", thousands(c.built),
               thousands(formula), thousands(c.source_table), c.source_words, c.d_model, c.output_bias));
  else if (c.built == formula + c.source_table + c.output_bias + c.final_norms)
    nar.say(_f("our model as built: {} parameters = the formula's {} + {} for its separate source table ({} words × "
               "d_model {}, which the formula folds into the shared one) + {} for the output bias + {} for Pre-Norm's "
               "final LayerNorms (γ and β of each stack)", thousands(c.built), thousands(formula),
               thousands(c.source_table), c.source_words, c.d_model, c.output_bias, c.final_norms));
  else
    nar.say(_f("our model as built: {} parameters; the formula gives {}", thousands(c.built), thousands(formula)));
  const TrainingTimeAccount& a = f.time;
  const StepTiming& st = f.step;
  nar.result(_f("one training step, measured now: {:.1f} ms CPU ({:.1f}–{:.1f} ms over the {} steps), {:.1f} ms wall "
                "(wall / CPU = {:.1f}: {})", st.median_cpu_ms, st.min_cpu_ms, st.max_cpu_ms, st.reps, st.median_ms,
                a.step_wall_ratio,
                sentence_for(a.step_waited.outcome, _("the rest of the wall clock was spent waiting for a core"),
                             _("the step hardly waited for a core"), _("not measured"))));
  nar.say(_f("(medians of {} steps after 2 warm-up "
                "steps; batch {} × source {} → target {}; OpenBLAS threads: {}, set by --threads, while the header counts "
                "those of the rest of the run; forward + backward + Adam; 1-minute load average when timed: {})",
                st.reps, st.batch, st.src_len, st.tgt_len, f.threads,
                std::isfinite(a.load_now) ? fmt::format("{:.1f}", a.load_now) : std::string(_("not known"))));
  nar.say(_f("training sentences average {:.1f} source words, close to the 30 timed here", a.mean_train_length));
  nar.result(_f("stored in the checkpoint, not timed in this run: {:.1f} s of training, the wall clock of the whole "
                "run ({} steps and {} greedy validation passes over {} sentences)", a.recorded_s, a.steps,
                a.validations, a.valid_sentences));
  if (a.alone_s > 0.0) {
    // Like with like: the two stored wall clocks of one training; then the step timed now beside
    // the idle run's time per step, judged against the spread of the steps timed now.
    nar.result(_f("stored in README.md, not timed in this run: the same training retrained alone on the idle "
                  "machine took {:.1f} s (its weights came out bit for bit the shipped ones)", a.alone_s));
    nar.say(words_for(a.recorded_waited.outcome,
                      _f("recorded / alone = {:.1f}× (at least {:.1f}×, this course's cut-off): the recorded time "
                         "is mostly waiting; that run shared 2 cores with other jobs (README.md records load "
                         "averages of 20–245 while it trained), so its wall clock measures the machine, not the "
                         "model", a.recorded_over_alone, kRecordedWaited),
                      _f("recorded / alone = {:.1f}× (under {:.1f}×, this course's cut-off): the recorded time is "
                         "about the work; that run had the cores nearly to itself", a.recorded_over_alone,
                         kRecordedWaited),
                      _("not measured")));
    const std::string idle = _f("per step: the idle run's {:.1f} s / {} steps = {:.1f} ms (its {} validation passes "
                                "and start-up included; wall clock, taken as CPU time because on an idle machine "
                                "a step does not wait); the {} steps timed now took {:.1f}–{:.1f} ms CPU: ", a.alone_s, a.steps,
                                a.alone_step_ms, a.validations, st.reps, a.step_min_cpu_ms, a.step_max_cpu_ms);
    nar.say(idle + words_for(a.alone_step_in_spread.outcome,
                             a.median_vs_alone < 0.0
                                 ? _f("the idle figure lies inside that spread, but the median step timed now, {:.1f} "
                                      "ms, is {:.0f}% below it; the idle figure also holds the validation passes and "
                                      "start-up, so the two agree only in size, not to the millisecond",
                                      st.median_cpu_ms, -100.0 * a.median_vs_alone)
                                 : _f("the idle figure lies inside that spread, but the median step timed now, {:.1f} "
                                      "ms, is {:.0f}% above it; the idle figure also holds the validation passes and "
                                      "start-up, so the two agree only in size, not to the millisecond",
                                      st.median_cpu_ms, 100.0 * a.median_vs_alone),
                             a.alone_step_ms > a.step_max_cpu_ms
                                 ? _("the idle figure is above every step timed now; its total also holds the "
                                     "validation passes and start-up, which it does not separate from the steps")
                                 : _("every step timed now took more CPU time than the idle run's average: the load "
                                     "this run shares the machine with likely slows its CPU work too (shared caches "
                                     "and memory; not measured here), so this run cannot reproduce the idle figure"),
                             _("not measured")));
  } else {
    nar.result(_f("the CPU work that takes, measured now: {} × {:.1f} ms + {} × {:.2f} s = {:.1f} s; recorded / work = "
                  "{:.1f}×", a.steps, a.step_cpu_ms, a.validations, a.valid_cpu_s, a.estimate_s, a.ratio));
    nar.say(_f("(one validation pass: this run's greedy translation of the {} test sentences took {:.2f} s CPU, × {} / "
               "{} sentences = {:.2f} s)", a.test_sentences, a.test_cpu_s, a.valid_sentences, a.test_sentences,
               a.valid_cpu_s));
    nar.say(sentence_for(a.accounted.outcome,
                         _("the recorded time is the work: the run had the cores to itself"),
                         _("the rest is waiting: the training shared the cores with other jobs, so its wall clock "
                           "measures the machine, not the model"),
                         _("not measured")));
  }
  for (const std::string& line : peer_step_lines(st, f.threads, c.built, f.peer)) nar.say(line);
  nar.code("attn/studies/transformer_cost.hpp: encoder_layer_cost, decoder_layer_cost; attn/studies/transformer_study.hpp: "
           "time_transformer_step; attn/studies/transformer_claims.hpp: account_training_time");
  const std::size_t last = std::size(kCostLengths) - 1;
  nar.why(c.base.score_share[0] < c.base.score_share[last]
              ? _f("at toy lengths the feed-forward and projections dominate; the T² score term takes over as T grows "
                   "(base: {} of the FLOPs at T = {}, {} at T = {}).", percent(c.base.score_share[0]), kCostLengths[0],
                   percent(c.base.score_share[last]), kCostLengths[last])
              : _("the score terms' share does not grow with T here."));
}
namespace {
nlohmann::ordered_json verdict_json(const Verdict& v) {
  auto finite = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); };
  return {{"measured", finite(v.measured)}, {"bound", finite(v.bound)}, {"partly", finite(v.partly)},
          {"outcome", outcome_id(v.outcome)}};
}
nlohmann::ordered_json sentences_json(const std::vector<Tokens>& v) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const Tokens& t : v) a.push_back(fmt::format("{}", fmt::join(t, " ")));
  return a;
}
}  // namespace

void export_results(Narrator& nar, const TransformerFindings& f, const ToyCorpus& corpus) {
  if (!nar.options().export_dir) return;
  const TranslationFindings& t = f.translation;
  std::vector<NamedResult> all;
  for (const ModelEval& e : f.evals) all.push_back({e.name, e.result});
  nlohmann::ordered_json x;
  x["parameters"][t.model] = f.cost.built;
  x["train_ms_per_step"] = {{"ms", f.step.median_ms}, {"cpu_ms", f.step.median_cpu_ms}, {"batch", f.step.batch},
                            {"src_len", f.step.src_len}, {"tgt_len", f.step.tgt_len}, {"threads", f.threads},
                            {"steps", f.step.reps}};
  nlohmann::ordered_json mean_max = nlohmann::ordered_json::array(), hits = nlohmann::ordered_json::array();
  for (const HeadSharpness& h : f.sharpness.heads) mean_max.push_back(h.mean_max);
  for (const CrossHeadScore& h : f.cross.heads) hits.push_back(h.score.hits);
  x["example"] = {{"encoder_mean_max", mean_max}, {"broad_heads", f.sharpness.broad},
                  {"most_read_column", f.sharpness.most_read}, {"most_read_rows", f.sharpness.most_read_rows},
                  {"bos_rows", f.causal.bos_rows}, {"parks_on_bos", verdict_json(f.causal.parks_on_bos)},
                  {"mostly_broad", verdict_json(f.sharpness.mostly_broad)}, {"above_diagonal", f.causal.above},
                  {"masked", verdict_json(f.causal.masked)}, {"cross_hits", hits},
                  {"cross_best_aligns", verdict_json(f.cross.best_aligns)}};
  nlohmann::ordered_json test_hits = nlohmann::ordered_json::array(), test_total = nlohmann::ordered_json::array();
  for (const CrossHeadScore& h : f.cross_test.heads) {
    test_hits.push_back(h.score.hits);
    test_total.push_back(h.score.total);
  }
  x["cross_test"] = {{"pairs", f.cross_test_pairs}, {"hits", test_hits}, {"scored", test_total},
                     {"best", f.cross_test.best}, {"best_aligns", verdict_json(f.cross_test.best_aligns)}};
  const TrainingSummary& tr = f.training;
  x["training"] = {{"steps", tr.steps}, {"batch", tr.batch}, {"warmup", tr.warmup}, {"lr_factor", tr.lr_factor},
                   {"d_model", tr.d_model}, {"peak_lr", tr.peak_lr}, {"train_pairs", tr.train_pairs},
                   {"passes", tr.passes}, {"label_smoothing", tr.smoothing}, {"vocab", tr.vocab},
                   {"label_smoothing_floor", tr.floor}, {"loss_first", tr.loss_first}, {"loss_last", tr.loss_last},
                   {"near_floor", verdict_json(tr.near_floor)}, {"uniform_loss", tr.uniform_loss},
                   {"above_uniform", verdict_json(tr.above_uniform)}, {"grad_warmup_cell", tr.grad.warmup_cell},
                   {"grad_dip_cell", tr.grad.dip_cell}, {"grad_peak_cell", tr.grad.peak_cell},
                   {"grad_peak_at_warmup", verdict_json(tr.grad.peak_at_warmup)}, {"grad_clip", tr.grad.clip},
                   {"grad_clipped_steps", tr.grad.clipped},
                   {"start_entropy", tr.start.entropy}, {"start_unrelated_loss", tr.start.unrelated_loss},
                   {"start_explains", verdict_json(tr.start_explains)}};
  x["translation"] = {{"model", t.model}, {"test_bleu", t.test_bleu}, {"beam_bleu", t.beam_bleu},
                      {"train_bleu", t.train_bleu}, {"train_sentences", t.train_sentences},
                      {"valid_bleu", t.valid_bleu}, {"generalises", verdict_json(t.generalises)},
                      {"bahdanau_buckets_at_least", t.vs_bahdanau.at_least}, {"lowest_bucket_bleu", t.vs_bahdanau.lowest},
                      {"long_bucket", t.long_bucket}, {"pre_better_long", verdict_json(t.pre_better_long)},
                      {"failure_index", t.failure.found ? nlohmann::ordered_json(t.failure.index) : nlohmann::ordered_json(nullptr)},
                      {"failure_copied_from", t.failure.copied_from}, {"failure_wrong_words", t.failure.wrong_words},
                      {"failure_failures", t.failure.failures}, {"failure_milder", t.failure.milder},
                      {"failure_worse", t.failure.worse}, {"failure_median_wrong", t.failure.median_wrong},
                      {"failure_typical", verdict_json(t.failure.typical)},
                      {"failure_length_only", t.failure.length_only},
                      {"failure_wrong_same_length", t.failure.wrong_same_length},
                      {"failure_wrong_other_length", t.failure.wrong_other_length},
                      {"still_improving", verdict_json(t.own.still_improving)},
                      {"other_still_improving", verdict_json(t.other_checkpoint.still_improving)},
                      {"test_exact", t.test_exact},
                      {"bahdanau_bleu", t.bahdanau_bleu}, {"bahdanau_exact", t.bahdanau_exact},
                      {"train_long", t.train_long}, {"train_long_sentences", t.train_long_sentences},
                      {"test_long", t.test_long}, {"test_long_sentences", t.test_long_sentences},
                      {"generalises_long", verdict_json(t.generalises_long)}, {"best_step", t.own.best_step},
                      {"steps", t.own.steps}, {"other_best_step", t.other_checkpoint.best_step}};
  const BeamDiagnosis& b = t.beam;
  x["beam"] = {{"alpha", b.alpha}, {"shorter", {b.beam.shorter, b.greedy.shorter}}, {"longer", {b.beam.longer, b.greedy.longer}},
               {"differ", b.differ}, {"beam_higher", b.beam_higher}, {"beam_shorter", b.beam_shorter},
               {"beam_exact", b.beam_exact}, {"greedy_exact", b.greedy_exact}, {"beam_wrong", b.beam_wrong},
               {"reference_lower", b.reference_lower}, {"search_works", verdict_json(b.search_works)},
               {"beam_exact_all", b.beam_exact_all}, {"greedy_exact_all", b.greedy_exact_all},
               {"sentences", b.sentences}, {"metrics_agree", verdict_json(b.metrics_agree)},
               {"ends_early", verdict_json(b.ends_early)},
               {"model_error", verdict_json(b.model_error)},
               // [beam, greedy]: total output words, brevity penalty, (p₁p₂p₃p₄)^¼; the references' words
               {"words", {b.beam_parts.hyp_len, b.greedy_parts.hyp_len}}, {"reference_words", b.greedy_parts.ref_len},
               {"brevity_penalty", {b.beam_parts.brevity_penalty, b.greedy_parts.brevity_penalty}},
               {"precision", {b.beam_precision, b.greedy_precision}},
               {"length_explains", verdict_json(b.length_explains)}};
  const NormPlacementStudy& n = f.norms;
  x["norm_placement"] = {{"layers", n.layers}, {"batch", n.batch}, {"post_encoder", n.post.encoder},
                         {"post_decoder", n.post.decoder}, {"pre_encoder", n.pre.encoder}, {"pre_decoder", n.pre.decoder},
                         {"post_grows_encoder", verdict_json(n.post_grows_enc)},
                         {"post_grows_decoder", verdict_json(n.post_grows_dec)},
                         {"pre_level_encoder", verdict_json(n.pre_level_enc)},
                         {"pre_level_decoder", verdict_json(n.pre_level_dec)}};
  const TrainingTimeAccount& a = f.time;
  x["training_time"] = {{"recorded_s", a.recorded_s}, {"steps", a.steps}, {"validations", a.validations},
                        {"valid_sentences", a.valid_sentences}, {"step_cpu_ms", a.step_cpu_ms},
                        {"valid_cpu_s", a.valid_cpu_s}, {"estimate_s", a.estimate_s}, {"ratio", a.ratio},
                        {"mean_train_length", a.mean_train_length}, {"accounted", verdict_json(a.accounted)},
                        {"alone_s", a.alone_s}, {"recorded_over_alone", a.recorded_over_alone},
                        {"recorded_waited", verdict_json(a.recorded_waited)}, {"alone_step_ms", a.alone_step_ms},
                        {"step_min_cpu_ms", a.step_min_cpu_ms}, {"step_max_cpu_ms", a.step_max_cpu_ms},
                        {"alone_step_in_spread", verdict_json(a.alone_step_in_spread)},
                        {"median_vs_alone", std::isfinite(a.median_vs_alone) ? nlohmann::ordered_json(a.median_vs_alone)
                                                                              : nlohmann::ordered_json(nullptr)}};
  if (f.warmup)
    x["warmup_study"] = {{"steps", f.warmup->steps}, {"seeds", f.warmup->seeds},
                         {"post_helps", verdict_json(f.warmup->post.helps)},
                         {"pre_helps", verdict_json(f.warmup->pre.helps)},
                         {"pre_lower", verdict_json(f.warmup->pre_lower)}};
  x["eval_cpu_seconds"] = nlohmann::ordered_json::object();
  for (const ModelEval& e : f.evals) x["eval_cpu_seconds"][e.name] = e.cpu_seconds;
  x["cost"] = {{"base_params", f.cost.base.params}, {"ours_formula_params", f.cost.ours.params}, {"built", f.cost.built},
               {"source_table", f.cost.source_table}, {"lengths", kCostLengths},
               {"base_attention_share", f.cost.base.share}, {"base_score_share", f.cost.base.score_share},
               {"ours_attention_share", f.cost.ours.share}, {"ours_score_share", f.cost.ours.score_share}};
  if (f.peer)
    x["pytorch_step"] = {{"framework", f.peer->framework}, {"cpu_ms", f.peer->cpu_ms}, {"wall_ms", f.peer->wall_ms},
                         {"threads", f.peer->threads}, {"measured_on", f.peer->measured_on},
                         {"source", "data/ch08/pytorch_step_time.json"}};
  nar.export_file("results.json", results_json(all, x.dump()));

  // The sentences behind every BLEU, exact-match and token figure (tests/check_ch08_export.py
  // recomputes them with numpy): the test split and the training sample, with every model's output.
  nlohmann::ordered_json tj;
  auto split = [&](const std::vector<SentencePair>& pairs) {
    std::vector<Tokens> src, ref;
    for (const auto& p : pairs) src.push_back(p.src), ref.push_back(p.tgt);
    return nlohmann::ordered_json{{"sources", sentences_json(src)}, {"references", sentences_json(ref)},
                                  {"outputs", nlohmann::ordered_json::object()}};
  };
  tj["test"] = split(corpus.test);
  tj["train_sample"] = split(training_sample(corpus, t.train_sentences));
  for (const ModelEval& e : f.evals)
    tj[e.name == t.model + "_train" ? "train_sample" : "test"]["outputs"][e.name] = sentences_json(e.result.hyps);
  nar.export_file("translations.json", tj.dump());
  nar.manifest_field("regenerate", nlohmann::ordered_json{
      {"translations.json", "every BLEU, exact-match and token-accuracy figure of results.json: the test split, "
                            "the first train_sentences training pairs, each model's greedy or beam outputs"},
      {"norm_placement", "fresh weights (seed 1), not exported: build/bin/08_transformer --export DIR recomputes "
                         "them (attn/studies/transformer_study.hpp: ffn_w2_grad_norms)"},
      {"beam", "the model's scores s(Y) of results.json's beam figures: attn/studies/transformer_claims.hpp: "
               "diagnose_beam on the shipped checkpoint and translations.json"},
      {"training_time", "recorded_s from the checkpoint's metadata; step_cpu_ms measured in the run; valid_cpu_s = "
                        "eval_cpu_seconds of the greedy test run × valid_sentences / test sentences"}}.dump());
}

std::vector<std::string> transformer_takeaway(const TransformerFindings& f) {
  const TranslationFindings& t = f.translation;
  std::vector<std::string> lines = {
      t.vs_bahdanau.at_least == t.vs_bahdanau.buckets
          ? _f("Attention alone, {} parameters: greedy BLEU {} over all lengths ({}% exact), at least {} in every "
               "length bucket and at least Bahdanau's (chapter 01) in every one.", f.cost.built,
               format_score(t.test_bleu), format_score(t.test_exact), format_score(t.vs_bahdanau.lowest))
          : _f("Attention alone, {} parameters: greedy BLEU {} over all lengths ({}% exact), at least {} in every "
               "length bucket, but below Bahdanau's (chapter 01: {}, {}% exact) in {} of {} buckets.", f.cost.built,
               format_score(t.test_bleu), format_score(t.test_exact), format_score(t.vs_bahdanau.lowest),
               format_score(t.bahdanau_bleu), format_score(t.bahdanau_exact),
               t.vs_bahdanau.buckets - t.vs_bahdanau.at_least, t.vs_bahdanau.buckets),
      _f("Beam 4 scores BLEU {} against greedy's {}, with {} exact matches against {} of {}; where the two differ, "
         "the model scores the reference below beam's output for {} of beam's {} wrong outputs: {}",
         format_score(t.beam_bleu), format_score(t.test_bleu), t.beam.beam_exact_all, t.beam.greedy_exact_all,
         t.beam.sentences, t.beam.reference_lower, t.beam.beam_wrong,
         sentence_for(t.beam.model_error.outcome,
                      _("there, its wrong outputs are the model's preferences, not search errors."),
                      _("there, its losses are mostly search errors."), _("the difference is not explained here."))),
  };
  if (t.other_present)
    lines.push_back(_f("Trained {} + {}-layer models on {} words: Pre-Norm BLEU {} vs Post-Norm {} (one seed each).",
                       f.layers, f.layers, t.long_bucket, format_score(t.pre_long), format_score(t.post_long)));
  lines.push_back(_f("At initialisation, in a fresh {} + {}-layer model, the Post-Norm decoder's W2 gradient {} with "
                     "depth (last / first layer {:.3f}, one batch).", f.norms.layers, f.norms.layers,
                     sentence_for(f.norms.post_grows_dec.outcome, _("grows"), _("does not grow"), _("barely grows")),
                     f.norms.post_dec));
  return lines;
}
}  // namespace attn
