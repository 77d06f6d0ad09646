// Chapter 09's presentation (see attn/present/decoder_report.hpp).
#include "attn/present/decoder_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "attn/data/text_corpus.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/number_format.hpp"
#include "attn/present/verdict_words.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
Mat rows_of(const Mat& x, std::size_t n, std::size_t cols) {
  n = std::min(n, x.shape(0));
  cols = std::min(cols, x.shape(1));
  return xt::view(x, xt::range(0, n), xt::range(0, cols));
}
std::string us(double seconds) { return fmt::format("{:.0f} µs", seconds * 1e6); }
std::string ms(double seconds) { return fmt::format("{:.2f} ms", seconds * 1e3); }
// sentence_for with composed sentences: the one the outcome picks.
std::string words_for(Outcome o, const std::string& holds, const std::string& fails, const std::string& otherwise) {
  return sentence_for(o, holds.c_str(), fails.c_str(), otherwise.c_str());
}
// The same with a sentence for Outcome::partly.
std::string words_for(Outcome o, const std::string& holds, const std::string& fails, const std::string& partly,
                      const std::string& otherwise) {
  return o == Outcome::partly ? partly : words_for(o, holds, fails, otherwise);
}
}  // namespace

TinyLm train_tiny_lm_narrated(Narrator& nar, TinyLmTrainSetup& setup) {
  ProgressBar bar(std::int64_t(setup.train.steps), !nar.quiet());
  auto cb = bar.callback();
  setup.train.on_step = [&](std::size_t s, double loss, double) {
    cb(s, loss, std::int64_t(setup.train.batch * setup.train.time));
  };
  setup.train.on_eval = [&](std::size_t s, double vl) {
    if (!nar.quiet()) fmt::print(stderr, "\n  {}\n", _f("step {:>5}: validation loss {:.4f}", s, vl));
  };
  const TinyLmTrainReport r = train_tiny_lm(setup);
  bar.finish();
  nar.result(_f("trained: {} chapters ({} bytes, {} tokens) for training, {} held out; tokenizer {:.1f} s; "
                "{} steps × {} windows × 256 tokens in {:.0f} s with {} OpenBLAS thread(s)",
                r.chapters_train, r.train_bytes, r.train_tokens, r.chapters_valid, r.tokenizer_seconds,
                setup.train.steps, setup.train.batch, r.train_seconds, setup.blas_threads));
  return load_tiny_lm(setup.out_dir);
}

Labels token_labels(const BpeTokenizer& tok, const std::vector<int>& ids) {
  Labels out;
  for (int id : ids) out.push_back(bpe_piece_display(tok, id));
  return out;
}

void report_tokenizer(Narrator& nar, const TinyLm& lm, std::size_t n_merges, const std::string& sentence) {
  const BpeTokenizer& tok = lm.tokenizer;
  nar.say(_("the text: the King James Version of the Bible (KJV) in the standard modern spelling that Debian's "
            "bible-kjv carries (\"unto\", where the 1611 printing has \"vnto\"); the tokenizer below and the model "
            "every later step uses are learned from it; every 20th chapter is held out for validation (step 7 names "
            "them)"));
  nar.say(_f("BPE: start from the 256 bytes, count every pair of adjacent tokens in the text, replace the most "
             "frequent pair (a, b) by one new token ab, and repeat: {} times here", tok.merges.size()));
  Table t({_("merge"), _("left"), _("right"), _("new token"), _("pair count")},
          _("the first merges learned (␣ marks a space)"));
  for (std::size_t r = 0; r < std::min(n_merges, tok.merges.size()); ++r) {
    const BpeMerge& m = tok.merges[r];
    t.add({_f("{} → id {}", r + 1, m.id), bpe_piece_display(tok, m.left), bpe_piece_display(tok, m.right),
           bpe_piece_display(tok, m.id), format_count(std::size_t(m.count))});
  }
  nar.table(t);
  const BpeMerge& last = tok.merges.back();
  nar.say(_f("…{} merges in all; the last one, {} + {} → {}, occurred {} times.", tok.merges.size(),
             bpe_piece_display(tok, last.left), bpe_piece_display(tok, last.right), bpe_piece_display(tok, last.id),
             format_count(std::size_t(last.count))));
  nar.say(_f("Vocabulary: {} = 256 bytes + {} merges.", tok.vocab_size(), tok.merges.size()));
  const std::vector<int> ids = bpe_encode(tok, sentence);
  std::string pieces;
  for (const auto& p : token_labels(tok, ids)) pieces += (pieces.empty() ? "" : " | ") + p;
  nar.say(fmt::format("\"{}\"", sentence));
  nar.say(_f("  -> {} tokens: {}", ids.size(), pieces));
  nar.say(_f("  ({} bytes, {:.2f} bytes per token)", sentence.size(),
             double(sentence.size()) / double(ids.size())));
  const double per_token = double(lm.valid_text.size()) / double(lm.valid_tokens.size());
  nar.result(_f("held-out text: {} bytes -> {} tokens = {:.2f} bytes per token (bytes alone: 1.00)",
                format_count(lm.valid_text.size()), format_count(lm.valid_tokens.size()), per_token));
  nar.code("attn/data/bpe.hpp: bpe_train, bpe_encode");
  nar.why(_f("a frequent word becomes one token, so the model's context, the {} tokens it reads at once, "
             "covers ~{:.0f} bytes of text; any byte still encodes.", lm.model.cfg.context,
             double(lm.model.cfg.context) * per_token));
}

namespace {
// A saving 1 − new/old as words: "20% less time", or "205% more time" when it is negative.
std::string less_or_more_time(double saving) {
  return saving >= 0.0 ? _f("{:.0f}% less time", 100.0 * saving) : _f("{:.0f}% more time", -100.0 * saving);
}
}  // namespace

void report_norms(Narrator& nar, const NormStudy& s) {
  nar.say(_("LLaMA: Meta's family of open decoder models (Touvron et al. 2023), whose block this chapter builds "
            "piece by piece"));
  nar.say(_f("x: the residual stream after block 0 for the prompt's first {} tokens, one row per token, d_model = "
             "{} wide (the model's width); the residual stream is the vector each block adds its output to, x' = x "
             "+ …, drawn in step 6", s.x.shape(0), s.x.shape(1)));
  nar.say(_f("μ and σ²: the mean and variance of the row's entries; ε = {:g} in both norms: a small constant "
             "that keeps the division finite; γ: a learned gain, β: a learned shift (one per channel)", s.eps));
  nar.record("rmsnorm_x", s.x);
  nar.show("rmsnorm_y", rows_of(s.rms_y, 3, 8), {}, {}, _f("RMSNorm(x), γ = 1 (first 8 of {})", s.x.shape(1)));
  nar.show("layernorm_y", rows_of(s.ln_y, 3, 8), {}, {}, _("LayerNorm(x), γ = 1, β = 0"));
  nar.result(_f("row 0: mean(x) = {:.3f}; mean after RMSNorm {:.3f}, after LayerNorm {:.1e} "
                "(RMSNorm rescales, LayerNorm also re-centres)", s.mean_x, s.mean_rms, s.mean_ln));
  nar.result(_f("failure case, row 0 + {:g} (mean {:.3f}): mean after RMSNorm {:.3f}, after LayerNorm {:.1e}; the "
                "largest |RMSNorm − LayerNorm| in the row grows from {:.3f} to {:.3f}, while LayerNorm's output "
                "moves by only {:.1e}", kNormShift, s.mean_x + kNormShift, s.shifted_mean_rms, s.shifted_mean_ln,
                s.gap_rms_ln, s.shifted_gap_rms_ln, s.shifted_ln_change));
  Table t({_("forward"), _("best"), _("median")},
          _f("forward on {}×{} random rows, {} runs each, the two alternated", s.rows, s.channels, s.rms.runs));
  t.add({"RMSNorm", us(s.rms.best), us(s.rms.median)});
  t.add({"LayerNorm", us(s.layer.best), us(s.layer.median)});
  nar.table(t, true);
  const RangeVerdict& v = s.saving;
  nar.result(_f("RMSNorm takes {} than LayerNorm (best runs), {} (medians)", less_or_more_time(v.from_best),
                less_or_more_time(v.from_median)));
  std::string blocks;
  for (double b : s.block_savings) blocks += (blocks.empty() ? "" : ", ") + less_or_more_time(b);
  if (!blocks.empty())
    nar.result(_f("the same from {} more blocks of {} alternated runs (best runs): {}; one run's figure moves by "
                  "this much", s.block_savings.size(), kNormBlockRuns, blocks));
  nar.result(sentence_for(v.outcome, _("verdict: RMSNorm is faster in both the best and the median runs"),
                  _("verdict: RMSNorm is slower in both the best and the median runs"),
                  _("verdict: faster in one figure, slower in the other: within this machine's noise")));
  if (s.disturbed.holds())
    nar.say(_f("(a median is {:.1f}× its best run, beyond {:.1f}×: the machine's load disturbed those runs, so the "
               "median figure says more about the load than about the norms; the best runs are the steadier guide)",
               s.disturbed.measured, kDisturbed));
  nar.say(_f("paper: {:.0f}%–{:.0f}% less running time for whole models (Zhang & Sennrich 2019); this step times one "
             "operation alone, which is not comparable to that range (the figures above also vary from run to run)",
             100.0 * kRmsNormSavingLo, 100.0 * kRmsNormSavingHi));
  nar.code("attn/nn/layernorm.hpp: rmsnorm_forward, layernorm_forward; attn/studies/decoder_study.hpp: norm_study");
  nar.why(_("one statistic per row instead of two, and no β; Zhang & Sennrich argue the re-centring is "
            "dispensable, and LLaMA uses RMSNorm before every sub-layer."));
}

void report_ffns(Narrator& nar, const FfnCost& c) {
  nar.say(_("SwiGLU: a gated linear unit (GLU, Dauphin et al. 2017) whose gate is silu, also called Swish; "
            "silu(x) = x·σ(x), here σ is the logistic sigmoid 1/(1 + e^−x), not step 2's σ²; ⊙: the "
            "element-wise product"));
  Table t({_("feed-forward"), _("hidden, d_ff"), _("matrices"), _("parameters"), _("best"), _("median")},
          _f("forward on {} random rows, {} runs each, the two alternated", c.rows, c.relu.runs));
  t.add({_("ReLU (Vaswani et al. 2017)"), std::to_string(c.relu_hidden) + " = 4·d_model", "2", format_count(c.relu_params),
         ms(c.relu.best), ms(c.relu.median)});
  t.add({"SwiGLU (LLaMA)", std::to_string(c.swiglu_hidden) + " ≈ (2/3)·4·d_model", "3", format_count(c.swiglu_params),
         ms(c.swiglu.best), ms(c.swiglu.median)});
  nar.table(t, true);
  nar.result(_f("the 2/3 rule: 3·{}·{} = {} vs 2·{}·{} = {} parameters ({:+.1f}%, from rounding {:.1f} up "
                "to a multiple of 8); the multiply-adds per row grow with the parameters: the same matrix work",
                c.d_model, c.swiglu_hidden, format_count(c.swiglu_params), c.d_model, c.relu_hidden,
                format_count(c.relu_params),
                100.0 * (double(c.swiglu_params) - double(c.relu_params)) / double(c.relu_params),
                8.0 * double(c.d_model) / 3.0));
  nar.result(_f("SwiGLU / ReLU time, this run: {:.2f}× (medians), {:.2f}× (best runs); the gap between the two is "
                "this run's spread, and another run on a shared machine can land outside both",
                c.swiglu.median / c.relu.median, c.swiglu.best / c.relu.best));
  nar.result(sentence_for(c.swiglu_slower.outcome,
                  _("SwiGLU is slower here although its matrix work is the same; likely causes, not timed one by one "
                    "here: it also computes silu (one exp per hidden unit) and the product with x·W_up, and splits "
                    "the work into three narrower products"),
                  _("SwiGLU is faster here, despite its extra silu and product: the ReLU pass is the slower "
                    "one on this machine"),
                  _f("SwiGLU took {:.2f}× ReLU's time in this run (medians), but the gap is inside the runs' spread "
                     "(median − best): within noise, not judged slower or faster", c.swiglu.median / c.relu.median)
                      .c_str()));  // the string lives until nar.result has printed it
  nar.say(_("quality is not measured here: Shazeer 2020 (Table 1) reports lower held-out log-perplexity for "
            "SwiGLU than ReLU at equal parameters and computation"));
  nar.code("attn/nn/swiglu.hpp: swiglu_forward; attn/studies/decoder_study.hpp: ffn_cost");
  nar.why(_("ReLU also switches each hidden unit on or off input by input, but by the sign of the very value it "
            "passes on; SwiGLU's gate silu(x·W_gate) has its own matrix and multiplies a second projection x·W_up, "
            "so whether a unit passes and what it passes are learned apart (the gated linear unit, Dauphin et al. "
            "2017). Shazeer 2020 measures the gain (Table 1) and, in his conclusion, offers no explanation for it."));
}

void report_shift(Narrator& nar, const ShiftStudy& s) {
  nar.say(_f("RoPE: rotary position embedding; R_m rotates each pair of dimensions (2i, 2i+1) of q or k by the "
             "angle m·θ_i, m being the token's position and θ_i = {:.0f}^(−2i/{}) the frequency of pair i = 0…{}",
             s.rope_theta, s.d_k, s.d_k / 2 - 1));
  nar.say(_f("q, k: head 0's query of the prompt's first token and key of its second, from the trained "
             "block 0 (d_k = {}); RoPE score: (R_m q)·(R_{{m+{}}} k); sinusoidal-added score: (q + PE(m))·(k + "
             "PE(m + {})), the table added to q and k themselves", s.d_k, s.distance, s.distance));
  nar.say(_("(a simplification: a sinusoidal model such as chapter 08's adds PE to the input x, before W_Q and "
            "W_K, so its q·k holds the same cross terms through the projections; either way the score depends "
            "on m, not only on the distance; PE(m)·PE(m + 3) alone is the same for every m, a sum of cos(3·θ_i) over "
            "the table's frequencies θ_i, so what moves are the cross terms q·PE(m + 3) and PE(m)·k)"));
  Table t({_("query at m"), _f("key at m + {}", s.distance), _("RoPE score"), _("sinusoidal-added score")});
  for (const ShiftScore& r : s.rows)
    t.add({std::to_string(r.m), std::to_string(r.m + s.distance), fmt::format("{:.5f}", r.rope),
           fmt::format("{:.5f}", r.sinusoidal)});
  nar.table(t, true);
  nar.result(_f("spread over the {} placements: RoPE {:.1e}, sinusoidal {:.3f}", s.rows.size(), s.rope_spread,
                s.sinusoidal_spread));
  nar.result(sentence_for(s.rope_invariant.outcome,
                  _("RoPE's score does not move with the shift (its spread is float rounding); the "
                    "sinusoidal one does"),
                  _("RoPE's score moves with the shift: more than float rounding"), _("RoPE: not measurable")));
  nar.code("attn/position/rope.hpp: rope_rotate; attn/studies/decoder_study.hpp: rope_shift_study");
  nar.why(_f("RoPE rotates q and k inside attention, so only the distance survives in q·k; this model "
             "pairs adjacent dimensions (2i, 2i+1) of each head of d_k = {}, as chapter 05 does.", s.d_k));
}

void report_kv_heads(Narrator& nar, const std::vector<KvCacheRow>& rows) {
  nar.say(_("KV cache: the keys and values of every earlier token, kept so that each new token computes only "
            "its own row of them (step 9 times it); its size per token is what this step compares"));
  nar.say(_("MHA: multi-head attention, one K/V head per query head (G = H; chapter 04); GQA: grouped-query "
            "attention, each group of H / G query heads shares one K/V head (Ainslie et al. 2023); MQA: "
            "multi-query attention, G = 1 (Shazeer 2019)"));
  nar.say(_("H: query heads, G: K/V heads; the leading 2: one key and one value vector per K/V head; bytes: per "
            "stored number, 4 for float32 and 2 for bf16 (bfloat16: 16 bits with float32's exponent range, as "
            "large models store their caches)"));
  nar.say(_("70B-like: the shape of Llama 2 70B as released (its configuration: 80 layers, 64 query heads of 128, "
            "8 K/V heads); its paper gives the 70B model GQA (Touvron et al. 2023b, \"Llama 2: Open Foundation and "
            "Fine-Tuned Chat Models\", §2.2 and Table 1)"));
  Table t({_("model"), _("layers"), "H / G", "d_k", _("bytes"), _("per token"), _("context"), _("per sequence")});
  std::size_t mha = 0, gqa = 0, big_mha = 0, big_gqa = 0, g = 0;
  const KvCacheRow *small = nullptr, *big = nullptr;  // the shipped rows
  for (const KvCacheRow& r : rows) {
    const bool here = r.model == "this";
    const std::string kind = r.kv_heads == r.query_heads ? "MHA" : r.kv_heads == 1 ? "MQA" : "GQA";
    std::string name = here ? _f("this model, {}", kind) : _f("70B-like, {}", kind);
    if (r.shipped) name += here ? _(" (as trained)") : " (Llama 2)";
    t.add({name, std::to_string(r.layers), fmt::format("{} / {}", r.query_heads, r.kv_heads), std::to_string(r.d_k),
           std::to_string(r.bytes_per_number), format_count(r.bytes_per_token) + " B", format_count(r.context),
           format_bytes(double(r.bytes_per_token) * double(r.context))});
    if (kind == "MHA") (here ? mha : big_mha) = r.bytes_per_token;
    if (r.shipped) {
      (here ? gqa : big_gqa) = r.bytes_per_token;
      (here ? small : big) = &r;
      if (here) g = r.kv_heads;
    }
  }
  nar.table(t, true);
  nar.say(_("context: the longest sequence each model is built for (Llama 2: 4096 tokens, Touvron et al. 2023b, "
            "Table 1); per sequence: one sequence's cache when it fills that context"));
  nar.result(_f("{} K/V heads store {}× less than MHA here; at 70B scale (80 layers, 64 heads of 128, bf16) 8 K/V "
                "heads cut {} to {} per token",
                g, gqa ? mha / gqa : 0, format_bytes(double(big_mha)), format_bytes(double(big_gqa))));
  // The weights beside the cache: how many full-context sequences' caches (shipped K/V heads) equal them.
  auto equal_weights = [](const KvCacheRow* r) {
    const double seq = r ? double(r->bytes_per_token) * double(r->context) : 0.0;
    return seq > 0.0 ? r->weight_bytes / seq : 0.0;
  };
  const double n_small = equal_weights(small), n_big = equal_weights(big);
  if (n_small > 0.0 && n_big > 0.0)
    nar.result(_f("weights: this model {} ({} parameters × 4 B), the 70B-like {} (its name's nominal 70·10⁹ × 2 B); "
                  "the caches of {:.0f} and {:.0f} full-context sequences (as trained / GQA) weigh as much",
                  format_bytes(small->weight_bytes), format_count(std::size_t(small->weight_bytes / 4.0)),
                  format_bytes(big->weight_bytes), n_small, n_big));
  nar.code("attn/attention/gqa.hpp: kv_cache_bytes_per_token; attn/studies/decoder_study.hpp: kv_cache_table");
  nar.why(_("every generated token adds its keys and values for every layer: the weights are one fixed cost, "
            "the cache grows with sequences × length, so past the counts above it is the cache, not the weights, "
            "that takes most of the memory."));
}

void report_block(Narrator& nar, const DecoderLM& m, const DecoderLMTrace& trace, const Labels& tokens) {
  const DecoderLMConfig& c = m.cfg;
  const std::size_t t = tokens.size(), d = c.d_model, H = c.n_heads, G = c.n_kv_heads, dk = c.d_head(), f = c.d_ff;
  nar.say(_f("x  ({}×{})  the residual stream, T = {} prompt tokens", t, d, t));
  nar.say(fmt::format("├─ h = RMSNorm(x)·γ_attn             γ ({})", d));
  nar.say(_f("├─ q = h·W_Q  ({}×{}) -> {} heads × {}", d, H * dk, H, dk));
  nar.say(_f("├─ k = h·W_K, v = h·W_V  ({}×{} each) -> {} heads × {}", d, G * dk, G, dk));
  nar.say(_f("├─ q, k = RoPE at positions 0 … {}: pairs (2i, 2i+1), θ_i = {:.0f}^(−2i/{})", t - 1, c.rope_theta, dk));
  nar.say(_f("├─ head i: softmax(q_i·k_gᵀ/√{} + causal mask)·v_g, g = ⌊i/{}⌋  -> ({}×{})", dk, H / G, t, H * dk));
  nar.say(_f("x' = x + that·W_O  ({}×{}) · ({}×{})", t, H * dk, H * dk, d));
  nar.say(_f("├─ h' = RMSNorm(x')·γ_ffn -> silu(h'·W_gate) ⊙ h'·W_up  ({}×{} each)", d, f));
  nar.say(_f("y  = x' + that·W_down ({}×{})   × {} blocks", f, d, c.n_layers));
  nar.say(fmt::format("logits = RMSNorm(y)·W_out ({}×{})", d, c.vocab));
  nar.say(_f("logits: one score per vocabulary token ({} of them); softmax turns the last row's into the "
             "next token's probabilities", c.vocab));
  const BlockParameters p = block_parameters(m);
  Table pt({_("part"), _("shape"), _("parameters")});
  pt.add({_("token embedding"), fmt::format("{}×{}", c.vocab, d), format_count(p.embedding)});
  pt.add({_("per block: attention"), "W_Q, W_K, W_V, W_O", format_count(p.attention)});
  pt.add({_("per block: SwiGLU"), "W_gate, W_up, W_down", format_count(p.ffn)});
  pt.add({_("per block: 2 RMSNorm γ"), fmt::format("2×{}", d), format_count(p.norms)});
  pt.add({_f("{} blocks", p.blocks), "", format_count(p.all_blocks)});
  pt.add({_("final RMSNorm + output"), fmt::format("{} + {}×{}", d, d, c.vocab), format_count(p.head)});
  pt.add({_("total"), "", format_count(p.total)});
  nar.table(pt, true);
  const DecoderBlock& b = m.blocks[0];
  nar.record("block0_input", trace.block0_input);
  nar.record("block0_output", trace.block0_output);
  nar.record("attn_norm_weight", b.attn_norm.gamma);
  nar.record("W_Q", b.w_q.w);
  nar.record("W_K", b.w_k.w);
  nar.record("W_V", b.w_v.w);
  nar.record("W_O", b.w_o.w);
  nar.record("ffn_norm_weight", b.ffn_norm.gamma);
  nar.record("W_gate", b.ffn.gate.w);
  nar.record("W_up", b.ffn.up.w);
  nar.record("W_down", b.ffn.down.w);
  nar.record("attn_weights", trace.attn_weights);
  const std::size_t last = trace.attn_weights.shape(0) - 1;
  const Mat w = xt::view(trace.attn_weights, last, 0, xt::all(), xt::all());
  nar.record("attn_last_layer_head0", w);
  Mat drawn = w;  // the masked cells as −∞, so that the map draws them '·'
  for (std::size_t i = 0; i < drawn.shape(0); ++i)
    for (std::size_t j = i + 1; j < drawn.shape(1); ++j) drawn(i, j) = -std::numeric_limits<float>::infinity();
  HeatmapStyle style;
  style.color = nar.options().color;
  style.vmin = 0.0;
  style.vmax = 1.0;
  nar.heatmap("attn_last_layer_head0", drawn, tokens, tokens,
              _f("layer {} of 0…{}, head 0; rows are queries, '·' masked", last, last), style);
  std::string largest;  // each row's largest weight and the key it falls on, so equal shades can be told apart
  const std::size_t shown = std::min<std::size_t>(w.shape(0), 8);
  for (std::size_t i = 0; i < shown; ++i) {
    std::size_t at = 0;
    for (std::size_t j = 1; j <= i; ++j)
      if (w(i, j) > w(i, at)) at = j;
    largest += fmt::format("{}{} → {} {:.3f}", i ? "; " : "", tokens[i], tokens[at], w(i, at));
  }
  nar.result(_f("each row's largest weight{}: {}", shown < w.shape(0) ? _f(" (first {} rows)", shown) : std::string(),
                largest));
  nar.say(_("look at: each row is one query token and sums to 1; the darkest cell of a row is the token it reads "
            "most, itself included (row 0 can only read itself); two cells of one shade can differ by up to 0.2, "
            "so the line above gives the largest weight itself"));
  nar.code("attn/models/decoder_lm.hpp: decoder_lm_forward, decoder_lm_trace");
  nar.why(_f("every shape follows from d_model = {}, {} query heads, {} K/V heads and d_ff = {} (step 3's SwiGLU "
             "hidden width); --export writes block 0's tensors, so each product can be checked by hand.", d, H, G, f));
}

void report_training(Narrator& nar, const TinyLm& lm, const ValidationFigures& v) {
  const Metadata& md = lm.metadata;
  auto get = [&](const char* k) { return md.count(k) ? md.at(k) : std::string("?"); };
  auto count = [&](const char* k) {  // a number in the metadata, with thousands separators
    const std::string v = get(k);
    return v.find_first_not_of("0123456789") == std::string::npos && !v.empty() ? format_count(std::stoull(v)) : v;
  };
  nar.say(_f("trained earlier with --train --seed {} and loaded from data/ch09/: {} AdamW steps × {} windows × {} tokens ({} tokens seen) in "
             "{:.0f} s of wall-clock time with {} (recorded by that training run on its machine, not timed now)",
             get("seed"), get("steps"), get("batch"), get("time"), count("train_tokens_seen"),
             std::stod(md.count("train_seconds") ? md.at("train_seconds") : "0"),
             get("blas_threads") == "1" ? std::string(_("1 OpenBLAS thread"))
                                        : _f("{} OpenBLAS threads", get("blas_threads"))));
  nar.say(_("AdamW: Adam (a step per weight scaled by running means of its gradient and squared gradient) with "
            "weight decay applied to the weights directly (Loshchilov & Hutter 2019)"));
  nar.say(_("loss: the mean over tokens of −ln p(the true next token), in nats (natural-log units; "
            "1 nat = 1/ln 2 ≈ 1.443 bits); perplexity = e^loss"));
  Table c({_("step"), _("train loss"), _("valid loss")}, _("training curve (data/ch09/training_curve.csv)"));
  const std::size_t n = lm.curve.size(), stride = (n + 15) / 16;  // every row of the shipped curve (15 rows)
  for (std::size_t i = 0; i < n; ++i)
    if (i % stride == 0 || i + 1 == n)
      c.add({std::to_string(lm.curve[i].step), fmt::format("{:.3f}", lm.curve[i].train_loss),
             fmt::format("{:.3f}", lm.curve[i].valid_loss)});
  nar.table(c);
  nar.say(stride == 1 ? _("train loss: the mean over the training batches since the previous row (random windows of "
                          "the training chapters); valid loss: the first 32 windows of the held-out text, scored at "
                          "the row's step")
                      : _f("train loss: the mean over the training batches since the file's previous row (the table "
                           "shows every {}th row; random windows of the training chapters); valid loss: the first 32 "
                           "windows of the held-out text, scored at the row's step", stride));
  Table a({_("model"), _("parameters"), _("text"), _("vocabulary"), _("valid loss"), "bits/byte"},
          _("for scale only: different text, vocabulary and size"));
  a.add({_("this model"), format_count(parameter_count(lm.model)), _("KJV Bible"),
         std::to_string(lm.model.cfg.vocab) + " BPE", _f("{:.3f} / token", v.loss), fmt::format("{:.3f}", v.bits_per_byte)});
  a.add({"llama2.c 260K", "260K", "TinyStories", "512 BPE", _f("{:.2f} / token", 1.30), "—"});
  a.add({"nanoGPT char (CPU)", "~0.8M", "Shakespeare", _f("{} chars", 65), _f("{:.2f} / char", 1.88),
         _f("{:.2f} (per char)", 1.88 / std::log(2.0))});
  nar.table(a, true);
  nar.say(_("the other two rows are cited, not measured here: llama2.c's README (its model table, the 260K model) "
            "and nanoGPT's README (the character-level Shakespeare model trained on a CPU)"));
  nar.result(_f("validation: loss {:.4f} nats per token, perplexity {:.2f}, {:.3f} bits per byte", v.loss,
                v.perplexity, v.bits_per_byte));
  nar.result(_f("  on the first {} windows of {} held-out tokens ({} tokens, {} bytes)", v.windows, v.window_tokens,
                format_count(v.tokens), format_count(v.bytes)));
  if (!v.held_out.empty())
    nar.say(_f("the held-out text (data/ch09/kjv_valid.txt): every 20th chapter of the Bible in order, {} of its {}: "
               "{}, {}, {}, …, {}; the first windows begin with {}", v.held_out.size(), format_count(kKjvChapters),
               v.held_out[0], v.held_out[std::min<std::size_t>(1, v.held_out.size() - 1)],
               v.held_out[std::min<std::size_t>(2, v.held_out.size() - 1)], v.held_out.back(), v.held_out[0]));
  // Why the last row's training loss is above its validation loss: the lag, and which text is scored.
  const std::size_t last_step = n ? lm.curve[n - 1].step : 0, previous_step = n > 1 ? lm.curve[n - 2].step : 0;
  nar.say(_f("why the training loss is the higher: at step {} it is {:.3f} against {:.3f}; it fell by {:.3f} since "
             "step {}, so as a mean over those steps it lags the model of step {} by about half of that, {:.3f} "
             "(if it fell steadily)", last_step, v.train_last, v.loss, 2.0 * v.train_lag, previous_step, last_step,
             v.train_lag));
  nar.say(_f("the same model on {} windows spread evenly over the whole held-out text ({} to {}): {:.3f} ± {:.3f} "
             "(one standard error over the windows), against the first {} windows' {:.3f}", v.spread_windows,
             v.held_out.empty() ? std::string("?") : v.held_out.front(),
             v.held_out.empty() ? std::string("?") : v.held_out.back(), v.spread_loss, v.spread_se, v.windows,
             v.loss));
  nar.result(words_for(v.train_like_held_out.outcome,
                       _f("the training loss less its lag, {:.3f}, lies within two standard errors of the held-out "
                          "text at large ({:.3f} to {:.3f}; the lag itself is an estimate): the gap in the table is "
                          "consistent with the lag and with which held-out windows are scored, rather than with "
                          "better scores on unseen text",
                          v.train_last - v.train_lag, v.spread_loss - 2.0 * v.spread_se,
                          v.spread_loss + 2.0 * v.spread_se),
                       _f("the training loss less its lag, {:.3f}, is above even the held-out text at large (by "
                          "more than two standard errors): the training chapters score worse than the held-out "
                          "ones here; this run cannot say why, since the training text is not shipped",
                          v.train_last - v.train_lag),
                       _f("the training loss less its lag, {:.3f}, is below the held-out text at large (by more "
                          "than two standard errors): the model scores better on text it trained on",
                          v.train_last - v.train_lag),
                       _("the training and held-out losses could not be compared")));
  nar.code("attn/models/decoder_lm.hpp: decoder_lm_eval_loss; attn/studies/decoder_study.hpp: validation_figures");
  nar.why(_("a loss per token depends on how many bytes a token holds (BPE vs characters) and on the text "
            "(TinyStories is simple by design); bits per byte removes the first difference, not the second."));
}

void report_sampling(Narrator& nar, const TinyLm& lm, const NextTokenStudy& s, const SamplerConfig& sc) {
  nar.say(_("z: the logits after the prompt; τ: the temperature, which divides them (τ < 1 sharpens the "
            "distribution, τ > 1 flattens it, τ = 0 always takes the most probable token: greedy)"));
  nar.say(_("top-k keeps the k most probable tokens; top-p (nucleus) keeps the most probable tokens until "
            "their probabilities add up to p; the rest get 0 and the kept ones are renormalised"));
  nar.record("next_logits", s.logits);
  nar.record("next_probs", s.final_p);
  Table t({_("rank"), _("token"), "logit z", "p (τ = 1)", fmt::format("p (τ = {})", sc.temperature), "p (top-k/top-p)"},
          _("the next token after the prompt"));
  for (int id : s.top) {
    const std::size_t i = std::size_t(id);
    t.add({std::to_string(t.rows() + 1), bpe_piece_display(lm.tokenizer, id), fmt::format("{:.3f}", s.logits(i)),
           fmt::format("{:.4f}", s.raw(i)), fmt::format("{:.4f}", s.tempered(i)), fmt::format("{:.4f}", s.final_p(i))});
  }
  nar.table(t);
  if (sc.temperature <= 0.0f)
    nar.result(_f("τ = 0: the most probable token ('{}') gets p = 1 and every other 0; nothing is drawn, the argmax "
                  "is taken", bpe_piece_display(lm.tokenizer, s.top.front())));
  else if (s.kept == 1)
    nar.result(_f("kept 1 of {} tokens ('{}'), holding {:.3f} of the tempered mass: with one token left nothing is "
                  "drawn, it is taken", s.final_p.size(), bpe_piece_display(lm.tokenizer, s.top.front()), s.kept_mass));
  else
    nar.result(_f("kept {} of {} tokens, holding {:.3f} of the tempered mass; renormalised, then one is drawn",
                  s.kept, s.final_p.size(), s.kept_mass));
  nar.code("attn/models/decoder_lm_generate.hpp: sampling_distribution, generate_tokens");
  std::string cut;  // the filters this run used
  if (sc.top_k > 0) cut = _f("top-k = {}", sc.top_k);
  if (sc.top_p < 1.0f) cut += (cut.empty() ? "" : _(" and ")) + _f("top-p = {}", sc.top_p);
  nar.why(sc.temperature <= 0.0f
              ? std::string(_("the raw distribution leaves a long tail of unlikely tokens; with τ = 0 this run draws "
                              "nothing: it takes the most probable token every time."))
          : cut.empty() || s.kept == s.final_p.size()
              ? _f("the raw distribution leaves a long tail of unlikely tokens; drawn often enough, one of them "
                   "derails the text; this run cuts nothing off, only τ = {} reshapes it.",
                   sc.temperature)
              : _f("the raw distribution leaves a tail of unlikely tokens: here the {} tokens this run's {} cuts "
                   "off hold {:.3f} of its mass at τ = 1, about one draw in {:.0f}; Holtzman et al. 2020 argue "
                   "that draws from such a tail make text incoherent (not measured here), so the cut removes "
                   "them{}.", s.final_p.size() - s.kept, cut, s.raw_cut_mass,
                   s.raw_cut_mass > 0.0 ? 1.0 / s.raw_cut_mass : 0.0,
                   sc.temperature < 1.0f ? _f(" and τ = {} moves mass towards the likelier tokens", sc.temperature)
                                         : std::string()));
}

std::string printable_text(const std::string& raw) {
  std::string text;
  for (std::size_t i = 0; i < raw.size();) {
    const unsigned char c = static_cast<unsigned char>(raw[i]);
    if (c == '\n' || (c >= 0x20 && c < 0x7f)) {
      text += char(c);
      ++i;
      continue;
    }
    // A whole UTF-8 character (lead byte, then its continuation bytes) is kept; anything else is '?'.
    const std::size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool whole = len > 0 && i + len <= raw.size();
    for (std::size_t k = 1; whole && k < len; ++k) whole = (static_cast<unsigned char>(raw[i + k]) & 0xc0) == 0x80;
    if (whole) {
      text += raw.substr(i, len);
      i += len;
    } else {
      text += '?';
      ++i;
    }
  }
  return text;
}

void print_generated(Narrator& nar, const std::string& raw) {
  std::istringstream in(printable_text(raw));
  std::string line;
  while (std::getline(in, line)) {
    while (line.size() > 90) {
      std::size_t cut = line.rfind(' ', 90);
      if (cut == std::string::npos || cut == 0) cut = 90;
      while (cut > 1 && (static_cast<unsigned char>(line[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
      nar.result("  │ " + line.substr(0, cut));
      line = line.substr(cut + (line[cut] == ' ' ? 1 : 0));
    }
    nar.result("  │ " + line);
  }
}

void report_decoding(Narrator& nar, const TinyLm& lm, const std::string& prompt, const DecodingComparison& d,
                     const SamplerConfig& sc) {
  nar.result(_f("sampled: seed {}, τ = {}, top-k = {}, top-p = {}:", nar.options().seed, sc.temperature,
                sc.top_k == 0 ? std::string(_("off")) : std::to_string(sc.top_k), sc.top_p));
  if (sc.temperature <= 0.0f || sc.top_k == 1)
    nar.say(_("(with τ = 0 or top-k = 1 nothing is drawn: this text is greedy too, so the two below are the same)"));
  print_generated(nar, prompt + bpe_decode(lm.tokenizer, d.sampled));
  nar.result(_("greedy: τ = 0, the most probable token every time:"));
  print_generated(nar, prompt + bpe_decode(lm.tokenizer, d.greedy));
  nar.result(_f("raw: seed {}, τ = 1, no top-k or top-p: every token can be drawn, the tail included:",
                nar.options().seed));
  print_generated(nar, prompt + bpe_decode(lm.tokenizer, d.raw));
  nar.say(_f("(each text stops after --tokens {} new tokens, even mid-word)", d.greedy.size()));
  nar.result(_f("4-token spans that already occurred earlier in the same text: greedy {:.0f}%, sampled {:.0f}% "
                "(one text each, from one seed: an example, not a rate)", 100.0 * d.greedy_repeats,
                100.0 * d.sampled_repeats));
  nar.result(sentence_for(d.greedy_loops.outcome,
                  _f("greedy text repeats itself more ({:.0f}% of its 4-token spans against {:.0f}%): once a "
                     "phrase is its own likeliest continuation it tends to come back; sampling breaks away by chance",
                     100.0 * d.greedy_repeats, 100.0 * d.sampled_repeats).c_str(),
                  _("here sampling repeats itself more than greedy decoding does"),
                  _("greedy and sampled text repeat themselves about as much here (within 10 points)")));
  nar.say(_("papers: Holtzman et al. 2020 find greedy and beam search text degenerating into repetition, and "
            "top-p sampling avoiding it"));
}

void report_kv_cache(Narrator& nar, const KvCacheStudy& s, std::size_t context, bool bench) {
  const DecodeStepCost& c = s.cost;
  if (s.past_context)
    nar.say(_f("t: the tokens already in the cache (prompt and generated so far); the context, {} tokens, is the "
               "longest sequence the model was trained for; this --bench sweep times generations past it (see "
               "below), where the cache holds more", c.context));
  else
    nar.say(_f("t: the tokens already in the cache (prompt and generated so far); the context, {} tokens, is the "
               "longest sequence the model was trained for, and no generation here goes past it", c.context));
  nar.say(_f("one cached step at position t: {:.2f}M FLOPs (floating-point operations; a multiply-add counts 2) "
             "that do not grow with t (the projections, SwiGLU and the output layer: the d_model² terms and "
             "d_model·V, V = {} the vocabulary) + {:.0f}·t (the scores over the t cached keys and the weighted "
             "sum of their values: the t·d_model term)", c.fixed / 1e6, c.vocab, c.per_position));
  nar.say(words_for(c.fixed_dominates.outcome,
                    _f("the t term equals the rest at t ≈ {:.0f}, past the context of {}: at t = {} it adds {:.0f}% "
                       "to a step, so by the FLOP count the cached total grows nearly linearly in the tokens generated (the "
                       "slope below tests it)",
                       c.crossover, c.context, c.context, 100.0 * c.growth),
                    _f("the t term equals the rest at t ≈ {:.0f}, inside the context of {}: past it the cached "
                       "total grows faster than linearly", c.crossover, c.context),
                    _("the step's cost could not be split")));
  Table t({_("new tokens"), _("cached"), _("tokens/s"), _("no cache"), _("tokens/s"), _("speed-up"), _("same tokens")},
          _f("generation after the prompt, best of {} runs with the cache and {} without", s.cached_repeats,
             s.repeats));
  for (const KvSpeedRow& r : s.rows)
    t.add({std::to_string(r.tokens), fmt::format("{:.4f} s", r.cached_seconds),
           fmt::format("{:.0f}", double(r.tokens) / r.cached_seconds), fmt::format("{:.3f} s", r.uncached_seconds),
           fmt::format("{:.0f}", double(r.tokens) / r.uncached_seconds),
           fmt::format("{:.1f}×", r.uncached_seconds / r.cached_seconds), r.identical ? _("yes") : _("NO")});
  nar.table(t, true);
  nar.say(words_for(s.times_grow.outcome,
                    _f("every longer generation took at least as long as the shorter one before it, and each "
                       "step's time ratio stayed within {:.1f}× of its FLOP count's ratio, with the cache and "
                       "without", kKvStepOffWork),
                    _f("disturbed run: in {} of the {} steps down the table the time fell, or its ratio to the row "
                       "before was more than {:.1f}× off the FLOP count's ratio, which the work does not explain; this "
                       "run's speed-ups and slopes measure the machine's load more than the cache, so neither is judged "
                       "below (run again on a quieter machine)",
                       std::size_t(s.times_grow.measured), s.rows.size() - 1, kKvStepOffWork),
                    _("too few lengths to check that the times grow")));
  if (s.times_grow.outcome == Outcome::fails)
    nar.result(_f("speed-up at {} tokens: not judged (the table above is disturbed, so its last row's {:.1f}× is "
                  "not the cache's alone)", s.rows.back().tokens, s.speedup));
  else
    nar.result(_f("speed-up at {} tokens, this run: {:.1f}× from the best runs, {:.1f}× from the medians (the gap "
                  "between the two is this run's spread; on a shared machine another run can land outside both)",
                  s.rows.back().tokens, s.speedup, s.speedup_median));
  if (s.cached_repeats > s.repeats)
    nar.say(_f("the best-run ratios set a best of {} against a best of {}: more runs give a lower best, so on a "
               "loaded machine those ratios lean high; the medians' ratio leans less", s.cached_repeats, s.repeats));
  nar.result(_f("log-log slope of time vs tokens: cached {:.2f} ± {:.2f}, uncached {:.2f} ± {:.2f} (± 2 standard "
                "errors of the fit to {} lengths, {} to {} tokens; 1 = linear, 2 = quadratic)", s.cached_slope,
                2.0 * s.cached_slope_se, s.uncached_slope, 2.0 * s.uncached_slope_se, s.rows.size(),
                s.rows.front().tokens, s.rows.back().tokens));
  const bool disturbed = s.times_grow.outcome == Outcome::fails;
  const auto slope_word = [&](Outcome o) {
    return disturbed ? std::string(_("not judged (the table is disturbed)")) : std::string(outcome_word(o));
  };
  nar.result(_f("cached nearer linear than quadratic: {}; uncached nearer quadratic than linear: {}",
                slope_word(s.cached_linear.outcome), slope_word(s.uncached_quadratic.outcome)));
  nar.result(_f("the FLOP count alone gives slopes of {:.2f} cached and {:.2f} uncached for these lengths (the "
                "prompt's feed included)", s.cached_flop_slope, s.uncached_flop_slope));
  const auto against_flops = [&](const Verdict& v) {
    if (disturbed) return std::string(_("not judged (the table is disturbed)"));
    return words_for(v.outcome, _("steeper than the FLOP count: time it leaves out, not arithmetic"),
                     _("shallower than the FLOP count"), _("consistent with the FLOP count"));
  };
  nar.result(_f("measured against it: cached {}; uncached {}", against_flops(s.cached_vs_flops),
                against_flops(s.uncached_vs_flops)));
  if (s.cached_vs_flops.outcome == Outcome::holds && !disturbed)
    nar.say(_("the cached steps slow down more than their arithmetic grows; this run does not time where the "
              "extra goes (memory traffic of the growing cache, allocation per step), so it is not explained here"));
  if (s.uncached_vs_flops.outcome == Outcome::fails && !disturbed)
    nar.say(_("without the cache each step is one feed of the whole sequence, as in prefill below: a longer "
              "feed multiplies larger matrices, which get more done per second, so time grows slower than the "
              "FLOPs"));
  nar.say(_f("verdict rule: holds = the slope's whole ± range lies on its exponent's side of {0} (halfway between 1 "
             "and 2); does not hold = wholly on the other side; within noise = the range crosses {0} (on a shared "
             "machine the slopes change from run to run); not judged = the ± is wider than {1}, the distance from "
             "either exponent to {0}, or the table is disturbed", kKvSlopeMidpoint, kKvSlopeTooNoisy));
  nar.result(sentence_for(s.same_tokens.outcome, _("tokens identical with and without the cache: yes"),
                  _("tokens identical with and without the cache: NO"), _("tokens identical: not measured")));
  if (s.past_context)
    nar.say(_f("(past {} positions the RoPE tables are extended for timing; the model never trained there)", context));
  if (!bench) nar.say(_("(--bench extends the sweep to 512 tokens)"));
  const PrefillDecode& pd = s.prefill;
  nar.say(_("prefill: feeding a whole prompt in one pass, every row at once, which fills the cache before "
            "the first new token"));
  nar.result(_f("prefill of {} tokens in one pass: {:.1f} µs/token; the same tokens decoded one at a "
                "time: {:.1f} µs/token (best of {} runs each; decode / prefill = {:.2f}); final logits differ by "
                "{:.1e}", pd.tokens, pd.prefill_seconds / double(pd.tokens) * 1e6,
                pd.decode_seconds / double(pd.tokens) * 1e6, pd.repeats, pd.decode_seconds / pd.prefill_seconds,
                pd.max_logit_diff));
  nar.code("attn/studies/decoder_study.hpp: kv_cache_study, kv_speed_sweep, decode_step_cost, prefill_vs_decode");
  nar.why(sentence_for(pd.prefill_faster.outcome,
                       _("prefill multiplies whole matrices at once; decoding does the same arithmetic one row at a "
                         "time, in smaller pieces. Without the cache each step redoes the whole prefix: O(t²) FLOPs "
                         "in total once t is long, but at these lengths the FLOP slope above is still below 2."),
                       _("prefill multiplies whole matrices at once and should be the faster per token, but in this "
                         "run it was not: the machine's load decided it (run again). Without the cache each step "
                         "redoes the whole prefix: O(t²) FLOPs in total once t is long."),
                       _("without the cache each step redoes the whole prefix: O(t²) FLOPs in total once t is "
                         "long.")));
}

void report_paged(Narrator& nar, const PagedStudy& s) {
  Table t({_("sequence"), _("prompt"), _("new"), _("K/V rows stored"), _f("blocks of {}", s.block_size), _("slots unused")},
          _("a batch decoded together through one paged cache"));
  for (std::size_t i = 0; i < s.sequences; ++i)
    t.add({std::to_string(i), std::to_string(s.prompt_lengths[i]), std::to_string(s.n_new[i]),
           std::to_string(s.lengths[i]), std::to_string(s.blocks[i]), std::to_string(s.unused[i])});
  nar.table(t, true);
  nar.say(_("K/V rows stored = prompt + new − 1: the last new token is never fed back, so its keys and values are "
            "never computed"));
  nar.result(_f("paged: {} blocks = {} for {} stored tokens ({} exactly; {} slots unused in last blocks); "
                "contiguous, {} × {} reserved: {} — {:.1f}× the paged memory",
                s.blocks_used, format_bytes(double(s.paged_bytes)), s.tokens_stored, format_bytes(double(s.exact_bytes)),
                s.unused_total, s.sequences, s.max_len, format_bytes(double(s.contiguous_bytes)), s.ratio));
  nar.say(_f("the ratio rests on these lengths: the sequences store {:.1f} rows on average of the {} reserved for "
             "each; paged memory follows the rows stored, contiguous memory the rows reserved, so {} sequences "
             "that each filled the context would give {:.1f}×", s.mean_length, s.max_len, s.sequences,
             s.full_ratio));
  nar.result(_f("tokens equal to each sequence decoded alone with the contiguous cache: {}",
                s.identical ? _("yes") : _("NO")));
  nar.code("attn/models/decoder_lm_generate.hpp: generate_batch_paged; attn/studies/decoder_study.hpp: paged_study");
  nar.why(_("a contiguous cache must reserve the longest possible sequence up front; blocks are taken as tokens "
            "arrive, so the waste is under one block per sequence (vLLM, Kwon et al. 2023)."));
}

std::vector<std::string> decoder_takeaway(const DecoderFindings& f) {
  const bool same = f.kv.same_tokens.holds() && f.paged.identical;
  std::size_t mha = 0, shipped = 0;  // this model's cache bytes per token
  for (const KvCacheRow& r : f.caches)
    if (r.model == "this") {
      if (r.kv_heads == r.query_heads) mha = r.bytes_per_token;
      if (r.shipped) shipped = r.bytes_per_token;
    }
  std::vector<std::string> lines;
  lines.push_back(_f("{} parameters: {:.3f} nats/token, {:.3f} bits/byte on the first {} held-out windows "
                     "(from {}), {:.3f} ± {:.3f} nats/token over the held-out chapters at large; can it write? step "
                     "8's texts are its answer: this chapter measures the loss, not whether the text makes sense.",
                     format_count(f.parameters), f.validation.loss, f.validation.bits_per_byte,
                     f.validation.windows,
                     f.validation.held_out.empty() ? std::string("?") : f.validation.held_out.front(),
                     f.validation.spread_loss, f.validation.spread_se));
  if (f.kv.times_grow.outcome == Outcome::fails)
    lines.push_back(_f("KV cache: this run's timings were disturbed (step 9's times did not follow the work), "
                       "so no speed-up is given here; {}; paged: {:.1f}× less memory for "
                       "sequences averaging {:.0f} of {} positions.",
                       same ? _("the same tokens") : _("but different tokens"), f.paged.ratio, f.paged.mean_length,
                       f.paged.max_len));
  else
    lines.push_back(_f("KV cache, this run: {:.1f}× faster at {} tokens from the best runs, {:.1f}× from the medians "
                       "({} runs with the cache, {} without), {}; paged: {:.1f}× less memory for sequences averaging "
                       "{:.0f} of {} positions.", f.kv.speedup, f.kv.rows.empty() ? 0 : f.kv.rows.back().tokens,
                       f.kv.speedup_median, f.kv.cached_repeats, f.kv.repeats,
                       same ? _("the same tokens") : _("but different tokens"), f.paged.ratio, f.paged.mean_length,
                       f.paged.max_len));
  lines.push_back(_f("Measured in this run: RMSNorm took {} (best runs) and {} (medians) than "
                     "LayerNorm ({}), SwiGLU {:.2f}× (best runs) and {:.2f}× (medians) ReLU's time ({}), RoPE's "
                     "scores {} under a shift; computed from the shapes: GQA's cache {}× smaller.",
                     less_or_more_time(f.norms.saving.from_best), less_or_more_time(f.norms.saving.from_median),
                     sentence_for(f.norms.saving.outcome, _("faster in both, as one operation alone"),
                                  _("slower in both"), _("within noise")),
                     f.ffn.swiglu.best / f.ffn.relu.best, f.ffn.swiglu.median / f.ffn.relu.median,
                     sentence_for(f.ffn.swiglu_slower.outcome, _("slower"), _("faster"),
                                  _("within the runs' spread: not judged")),
                     sentence_for(f.shift.rope_invariant.outcome, _("unchanged"), _("changed"), _("unmeasured")),
                     shipped ? mha / shipped : 0));
  lines.push_back(_("Cited, not measured: SwiGLU's lower perplexity (Shazeer 2020)."));
  lines.push_back(_f("Greedy decoding: {:.0f}% of its 4-token spans repeat, against {:.0f}% when sampling ({}; one "
                     "text each, from one seed).",
                     100.0 * f.decoding.greedy_repeats, 100.0 * f.decoding.sampled_repeats,
                     sentence_for(f.decoding.greedy_loops.outcome, _("greedy repeats more"), _("sampling repeats more"),
                          _("no clear difference"))));
  return lines;
}

std::string validation_manifest(const ValidationFigures& v) {
  return fmt::format(
      "{{\"text\": \"data/ch09/kjv_valid.txt\", \"tokenizer\": \"data/ch09/tokenizer.json\", "
      "\"model\": \"data/ch09/decoder_lm.safetensors\", \"windows\": {}, \"window_tokens\": {}, "
      "\"targets\": \"tokens 1 to windows·window_tokens of the encoded text\", \"tokens\": {}, \"bytes\": {}, "
      "\"loss_nats\": {:.6f}, \"bits_per_byte\": {:.6f}, \"held_out_chapters\": {}, "
      "\"spread_windows\": {}, \"spread_loss\": {:.6f}, \"spread_se\": {:.6f}, \"train_last\": {:.6f}, "
      "\"train_lag\": {:.6f}, \"train_like_held_out\": \"{}\"}}",
      v.windows, v.window_tokens, v.tokens, v.bytes, v.loss, v.bits_per_byte, v.held_out.size(), v.spread_windows,
      v.spread_loss, v.spread_se, v.train_last, v.train_lag, outcome_id(v.train_like_held_out.outcome));
}

}  // namespace attn
