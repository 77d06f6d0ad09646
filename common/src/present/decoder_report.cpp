// Chapter 09's presentation (see attn/present/decoder_report.hpp).
#include "attn/present/decoder_report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "attn/attention/gqa.hpp"
#include "attn/nn/layernorm.hpp"
#include "attn/studies/timing.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {
std::string thousands(std::size_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}
std::string bytes_str(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}
Mat rows_of(const Mat& x, std::size_t n, std::size_t cols) {
  n = std::min(n, x.shape(0));
  cols = std::min(cols, x.shape(1));
  return xt::view(x, xt::range(0, n), xt::range(0, cols));
}
}  // namespace

Labels token_labels(const BpeTokenizer& tok, const std::vector<int>& ids) {
  Labels out;
  for (int id : ids) out.push_back(bpe_piece_display(tok, id));
  return out;
}

void show_bpe_merges(Narrator& nar, const BpeTokenizer& tok, std::size_t n) {
  Table t({_("merge"), _("left"), _("right"), _("new token"), _("pair count")}, _("the first merges learned"));
  for (std::size_t r = 0; r < std::min(n, tok.merges.size()); ++r) {
    const BpeMerge& m = tok.merges[r];
    t.add({_f("{} → id {}", r + 1, m.id), bpe_piece_display(tok, m.left),
           bpe_piece_display(tok, m.right), bpe_piece_display(tok, m.id), thousands(std::size_t(m.count))});
  }
  nar.table(t);
  const BpeMerge& last = tok.merges.back();
  nar.say(_f("…{} merges in all; the last one, {} + {} → {}, occurred {} times.", tok.merges.size(),
                         bpe_piece_display(tok, last.left), bpe_piece_display(tok, last.right),
                         bpe_piece_display(tok, last.id), thousands(std::size_t(last.count))));
  nar.say(_f("Vocabulary: {} = 256 bytes + {} merges.", tok.vocab_size(), tok.merges.size()));
}

void show_bpe_split(Narrator& nar, const BpeTokenizer& tok, const std::string& sentence) {
  const std::vector<int> ids = bpe_encode(tok, sentence);
  std::string pieces;
  for (const auto& p : token_labels(tok, ids)) pieces += (pieces.empty() ? "" : " | ") + p;
  nar.say(fmt::format("\"{}\"", sentence));
  nar.say(_f("  -> {} tokens: {}", ids.size(), pieces));
  nar.say(_f("  ({} bytes, {:.2f} bytes per token; ␣ marks a space)", sentence.size(),
                      double(sentence.size()) / double(ids.size())));
}

void compare_norms(Narrator& nar, const DecoderLM& m, const std::vector<int>& prompt) {
  nar.step(_("RMSNorm vs LayerNorm"), "x/√(mean(x²)+ε)·γ  vs  (x−μ)/√(σ²+ε)·γ+β", "Zhang & Sennrich 2019");
  // The residual stream after block 0 for the prompt: a real input to block 1's norm.
  const DecoderLMTrace tr = decoder_lm_trace(m, prompt);
  const Mat x = rows_of(tr.block0_output, 3, m.cfg.d_model);
  const Norm rms = rmsnorm_init(x.shape(1)), ln = layernorm_init(x.shape(1));
  Mat yr, yl;
  Vec rstd, mean;
  rmsnorm_forward(yr, rstd, x, rms, float(m.cfg.norm_eps));
  layernorm_forward(yl, mean, rstd, x, ln, float(m.cfg.norm_eps));
  nar.record("rmsnorm_x", x);
  nar.show("rmsnorm_y", rows_of(yr, 3, 8), {}, {}, _f("RMSNorm(x), γ = 1 (first 8 of {})", x.shape(1)));
  nar.show("layernorm_y", rows_of(yl, 3, 8), {}, {}, _("LayerNorm(x), γ = 1, β = 0"));
  const double mx = xt::mean(xt::view(x, 0, xt::all()))(), mr = xt::mean(xt::view(yr, 0, xt::all()))(),
               ml = xt::mean(xt::view(yl, 0, xt::all()))();
  nar.result(_f("row 0: mean(x) = {:.3f}; mean after RMSNorm {:.3f}, after LayerNorm {:.1e} "
                         "(RMSNorm rescales, LayerNorm also re-centres)", mx, mr, ml));
  const Mat big = Rng(3).normal_mat(4096, m.cfg.d_model);
  const NormCost c = norm_cost(big);
  nar.result(_f("forward on {}×{}: RMSNorm {:.0f} µs, LayerNorm {:.0f} µs: LayerNorm takes {:.2f}× as long "
                         "(paper: RMSNorm cuts running time by 7%–64%)",
                         c.rows, c.channels, c.rms_seconds * 1e6, c.layer_seconds * 1e6,
                         c.layer_seconds / c.rms_seconds));
  nar.code("attn/nn/layernorm.hpp: rmsnorm_forward, layernorm_forward; attn/studies/decoder_study.hpp: norm_cost");
  nar.why(_("one statistic per row instead of two, and no β; Zhang & Sennrich argue the re-centring is "
            "dispensable, and LLaMA uses RMSNorm before every sub-layer."));
}

void compare_ffns(Narrator& nar, const DecoderLMConfig& cfg) {
  nar.step(_("SwiGLU vs ReLU"), "(silu(x·W_gate) ⊙ x·W_up)·W_down", "Shazeer 2020");
  const FfnCost c = ffn_cost(cfg.d_model, cfg.d_ff, 4096, 9);
  Table t({_("feed-forward"), _("hidden"), _("matrices"), _("parameters"), _("forward, 4096 rows")});
  t.add({"ReLU (2017)", std::to_string(c.relu_hidden) + " = 4d", "2", thousands(c.relu_params),
         fmt::format("{:.2f} ms", c.relu_seconds * 1e3)});
  t.add({"SwiGLU (LLaMA)", std::to_string(c.swiglu_hidden) + " ≈ (2/3)·4d", "3", thousands(c.swiglu_params),
         fmt::format("{:.2f} ms", c.swiglu_seconds * 1e3)});
  nar.table(t, true);
  nar.result(_f("the 2/3 rule: 3·{}·{} = {} vs 2·{}·{} = {} parameters ({:+.1f}%, from rounding {} up "
                         "to a multiple of 8)",
                         cfg.d_model, c.swiglu_hidden, thousands(c.swiglu_params), cfg.d_model, c.relu_hidden,
                         thousands(c.relu_params),
                         100.0 * (double(c.swiglu_params) - double(c.relu_params)) / double(c.relu_params),
                         fmt::format("{:.1f}", 8.0 * double(cfg.d_model) / 3.0)));
  nar.code("attn/nn/swiglu.hpp: swiglu_forward; attn/studies/decoder_study.hpp: ffn_cost");
  nar.why(_("the gate multiplies: silu(x·W_gate) can turn each unit of x·W_up on or off, input by input; "
            "Shazeer measured lower perplexity (e^loss per token) than ReLU at the same parameter count."));
}

void compare_positions(Narrator& nar, const DecoderLM& m, const std::vector<int>& prompt) {
  nar.step(_("RoPE vs sinusoidal under a shift"), "(R_m q)·(R_n k) = q·R_{n−m} k", "Su et al. 2021");
  // q and k: layer 0, head 0 projections of the first two prompt tokens (before RoPE).
  const DecoderLMTrace tr = decoder_lm_trace(m, prompt);
  const DecoderBlock& b = m.blocks[0];
  Mat h;
  Vec rstd;
  rmsnorm_forward(h, rstd, rows_of(tr.block0_input, 2, m.cfg.d_model), b.attn_norm, float(m.cfg.norm_eps));
  Mat q, k;
  linear_forward(q, h, b.w_q);
  linear_forward(k, h, b.w_k);
  const std::size_t dh = m.cfg.d_head(), j = std::min<std::size_t>(1, h.shape(0) - 1);
  const Vec qv = xt::view(q, 0, xt::range(0, dh)), kv = xt::view(k, j, xt::range(0, dh));
  const auto rows = shift_scores(qv, kv, 3, {0, 10, 50, 100, 200});
  Table t({_("query at m"), _("key at m + 3"), _("RoPE score"), _("sinusoidal-added score")});
  double rmin = 1e300, rmax = -1e300, smin = 1e300, smax = -1e300;
  for (const auto& r : rows) {
    t.add({std::to_string(r.m), std::to_string(r.m + 3), fmt::format("{:.5f}", r.rope),
           fmt::format("{:.5f}", r.sinusoidal)});
    rmin = std::min(rmin, r.rope);
    rmax = std::max(rmax, r.rope);
    smin = std::min(smin, r.sinusoidal);
    smax = std::max(smax, r.sinusoidal);
  }
  nar.table(t, true);
  nar.result(_f("spread over the five placements: RoPE {:.1e} (float rounding), sinusoidal {:.3f}", rmax - rmin,
                         smax - smin));
  nar.code("attn/position/rope.hpp: rope_rotate; attn/studies/decoder_study.hpp: shift_scores");
  nar.why(_f("RoPE rotates q and k inside attention, so only the distance survives in q·k; this model "
             "pairs adjacent dimensions (2i, 2i+1) of each {}-dim head, as chapter 05 does.", dh));
}

void compare_kv_heads(Narrator& nar, const DecoderLMConfig& cfg) {
  nar.step(_("GQA vs MHA: the cache"), "bytes/token = 2·layers·G·d_head·bytes", "Ainslie et al. 2023");
  Table t({_("model"), _("layers"), "H / G", "d_head", _("bytes"), _("per token"), _("4096 tokens")},
          _("H: query heads, G: K/V heads; bytes: per number (4 for float32, 2 for bf16)"));
  auto row = [&](const std::string& name, std::size_t layers, std::size_t heads, std::size_t g, std::size_t dh,
                 std::size_t bytes) {
    const std::size_t per = kv_cache_bytes_per_token(layers, g, dh, bytes);
    t.add({name, std::to_string(layers), fmt::format("{} / {}", heads, g), std::to_string(dh), std::to_string(bytes),
           bytes_str(double(per)), bytes_str(double(per) * 4096)});
    return per;
  };
  const std::size_t L = cfg.n_layers, H = cfg.n_heads, dh = cfg.d_head();
  const std::size_t mha = row(_("this model, MHA"), L, H, H, dh, 4);
  const std::size_t gqa = row(_("this model, GQA (shipped)"), L, H, cfg.n_kv_heads, dh, 4);
  row(_("this model, MQA"), L, H, 1, dh, 4);
  const std::size_t big_mha = row(_("70B-like, MHA"), 80, 64, 64, 128, 2);
  const std::size_t big_gqa = row(_("70B-like, GQA (LLaMA 2)"), 80, 64, 8, 128, 2);
  row(_("70B-like, MQA"), 80, 64, 1, 128, 2);
  nar.table(t, true);
  nar.result(_f("GQA with {} K/V heads stores {}× less than MHA here; at 70B scale (80 layers, 64 heads "
                         "of 128, bf16) 8 K/V heads cut {} to {} per token",
                         cfg.n_kv_heads, mha / gqa, bytes_str(double(big_mha)), bytes_str(double(big_gqa))));
  nar.code("attn/attention/gqa.hpp: kv_cache_bytes_per_token");
  nar.why(_("every generated token adds its keys and values for every layer; the cache, not the weights, limits "
            "how many long sequences fit in memory."));
}

void show_block_shapes(Narrator& nar, const DecoderLM& m, std::size_t t) {
  const DecoderLMConfig& c = m.cfg;
  const std::size_t d = c.d_model, H = c.n_heads, G = c.n_kv_heads, dh = c.d_head(), f = c.d_ff;
  nar.say(_f("x  ({}×{})  the residual stream, T = {} prompt tokens", t, d, t));
  nar.say(fmt::format("├─ h = RMSNorm(x)·γ_attn             γ ({})", d));
  nar.say(_f("├─ q = h·W_Q  ({}×{}) -> {} heads × {}", d, H * dh, H, dh));
  nar.say(_f("├─ k = h·W_K, v = h·W_V  ({}×{} each) -> {} heads × {}", d, G * dh, G, dh));
  nar.say(_f("├─ q, k = RoPE at positions 0 … {}: pairs (2i, 2i+1), θ_i = {:.0f}^(−2i/{})", t - 1,
                      c.rope_theta, dh));
  nar.say(_f("├─ head i: softmax(q_i·k_gᵀ/√{} + causal mask)·v_g, g = ⌊i/{}⌋  -> ({}×{})", dh, H / G, t,
               H * dh));
  nar.say(_f("x' = x + that·W_O  ({}×{}) · ({}×{})", t, H * dh, H * dh, d));
  nar.say(_f("├─ h' = RMSNorm(x')·γ_ffn -> silu(h'·W_gate) ⊙ h'·W_up  ({}×{} each)", d, f));
  nar.say(_f("y  = x' + that·W_down ({}×{})   × {} blocks", f, d, c.n_layers));
  nar.say(fmt::format("logits = RMSNorm(y)·W_out ({}×{})", d, c.vocab));
  Table p({_("part"), _("shape"), _("parameters")});
  const std::size_t attn = d * H * dh + 2 * d * G * dh + H * dh * d, ffn = 3 * d * f, norms = 2 * d;
  p.add({_("token embedding"), fmt::format("{}×{}", c.vocab, d), thousands(c.vocab * d)});
  p.add({_("per block: attention"), "W_Q, W_K, W_V, W_O", thousands(attn)});
  p.add({_("per block: SwiGLU"), "W_gate, W_up, W_down", thousands(ffn)});
  p.add({_("per block: 2 RMSNorm γ"), fmt::format("2×{}", d), thousands(norms)});
  p.add({_f("{} blocks", c.n_layers), "", thousands(c.n_layers * (attn + ffn + norms))});
  p.add({_("final RMSNorm + output"), fmt::format("{} + {}×{}", d, d, c.vocab), thousands(d + d * c.vocab)});
  p.add({_("total"), "", thousands(parameter_count(m))});
  nar.table(p, true);
}

void export_block0(Narrator& nar, const DecoderLM& m, const DecoderLMTrace& trace, const Labels& tokens) {
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
  HeatmapStyle style;
  style.color = nar.options().color;
  nar.heatmap("attn_last_layer_head0", w, tokens, tokens,
              _f("layer {} of 0…{}, head 0; rows are queries, '·' masked", last, last),
              style);
}

ValidationFigures report_training(Narrator& nar, const TinyLm& lm) {
  const Metadata& md = lm.metadata;
  auto get = [&](const char* k) { return md.count(k) ? md.at(k) : std::string("?"); };
  nar.say(_f("trained with --train --seed {}: {} AdamW steps × {} windows × {} tokens ({} tokens seen) in "
                      "{:.0f} s of wall-clock time with {} OpenBLAS thread(s)",
                      get("seed"), get("steps"), get("batch"), get("time"), get("train_tokens_seen"),
                      std::stod(md.count("train_seconds") ? md.at("train_seconds") : "0"), get("blas_threads")));
  Table c({_("step"), _("train loss"), _("valid loss")}, _("training curve (data/ch09/training_curve.csv)"));
  const std::size_t n = lm.curve.size(), stride = std::max<std::size_t>(1, n / 6);
  for (std::size_t i = 0; i < n; ++i)
    if (i % stride == 0 || i + 1 == n)
      c.add({std::to_string(lm.curve[i].step), fmt::format("{:.3f}", lm.curve[i].train_loss),
             fmt::format("{:.3f}", lm.curve[i].valid_loss)});
  nar.table(c);
  // Loss on the first kValidWindows windows of 256 held-out tokens, and the bytes those targets hold.
  const std::size_t T = 256;
  const double loss = decoder_lm_eval_loss(lm.model, lm.valid_tokens, kValidWindows, T);
  const std::size_t w = std::min(kValidWindows, (lm.valid_tokens.size() - 1) / T);
  const std::vector<int> targets(lm.valid_tokens.begin() + 1, lm.valid_tokens.begin() + long(w * T + 1));
  const double bytes = double(bpe_decode(lm.tokenizer, targets).size()), tokens = double(targets.size());
  const double bpb = loss * tokens / (bytes * std::log(2.0));
  Table a({_("model"), _("parameters"), _("text"), _("vocabulary"), _("valid loss"), "bits/byte"},
          _("for scale only: different text, vocabulary and size"));
  a.add({_("this model"), thousands(parameter_count(lm.model)), _("KJV Bible"),
         std::to_string(lm.model.cfg.vocab) + " BPE", _f("{:.3f} / token", loss), fmt::format("{:.3f}", bpb)});
  a.add({"llama2.c 260K", "260K", "TinyStories", "512 BPE", _f("{:.2f} / token", 1.30), "—"});
  a.add({"nanoGPT char (CPU)", "~0.8M", "Shakespeare", _f("{} chars", 65), _f("{:.2f} / char", 1.88),
         _f("{:.2f} (per char)", 1.88 / std::log(2.0))});
  nar.table(a, true);
  nar.say(_("the other two rows are cited, not measured here: llama2.c's README (its model table, the 260K model) "
            "and nanoGPT's README (the character-level Shakespeare model trained on a CPU)"));
  nar.result(_f("validation: loss {:.4f} nats per token, perplexity {:.2f}, {:.3f} bits per byte", loss,
                         std::exp(loss), bpb));
  nar.result(_f("  on the first {} windows of {} held-out tokens ({} tokens, {} bytes)", w, T,
                         targets.size(), std::size_t(bytes)));
  nar.code("attn/models/decoder_lm.hpp: decoder_lm_eval_loss; attn/studies/tiny_lm.hpp: train_tiny_lm");
  nar.why(_("a loss per token depends on how many bytes a token holds (BPE vs characters) and on the text "
            "(TinyStories is simple by design); bits per byte removes the first difference, not the second."));
  return {loss, bpb};
}

void show_sampling_step(Narrator& nar, const TinyLm& lm, const std::vector<int>& prompt, const SamplerConfig& sc) {
  const Vec logits = decoder_lm_last_logits(lm.model, prompt);
  const Vec raw = sampling_distribution(logits, {1.0f, 0, 1.0f});
  const Vec tempered = sampling_distribution(logits, {sc.temperature, 0, 1.0f});
  const Vec final_p = sampling_distribution(logits, sc);
  nar.record("next_probs", final_p);
  Table t({_("rank"), _("token"), "logit", "p (τ = 1)", fmt::format("p (τ = {})", sc.temperature), "p (top-k/top-p)"},
          _("the next token after the prompt"));
  for (const auto& [id, p] : top_entries(raw, 5)) {
    const std::size_t i = std::size_t(id);
    t.add({std::to_string(t.rows() + 1), bpe_piece_display(lm.tokenizer, id), fmt::format("{:.3f}", logits(i)),
           fmt::format("{:.4f}", p), fmt::format("{:.4f}", tempered(i)), fmt::format("{:.4f}", final_p(i))});
  }
  nar.table(t);
  std::size_t kept = 0;
  double kept_mass = 0.0;
  for (std::size_t i = 0; i < final_p.size(); ++i)
    if (final_p(i) > 0.0f) {
      ++kept;
      kept_mass += tempered(i);
    }
  nar.result(_f("kept {} of {} tokens, holding {:.3f} of the tempered mass; renormalised, then one is drawn",
                         kept, final_p.size(), kept_mass));
  nar.code("attn/models/decoder_lm_generate.hpp: sampling_distribution, generate_tokens");
  nar.why(_("τ < 1 sharpens the distribution, top-p drops the long tail of unlikely tokens that make text derail."));
}

void print_generated(Narrator& nar, const std::string& raw) {
  std::string text;  // bytes outside printable ASCII (a byte token alone can be half a UTF-8 character) -> '?'
  for (unsigned char c : raw) text += (c == '\n' || (c >= 0x20 && c < 0x7f)) ? char(c) : '?';
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (line.size() > 90) {
      std::size_t cut = line.rfind(' ', 90);
      if (cut == std::string::npos || cut == 0) cut = 90;
      nar.result("  │ " + line.substr(0, cut));
      line = line.substr(cut + (line[cut] == ' ' ? 1 : 0));
    }
    nar.result("  │ " + line);
  }
}

double kv_cache_study(Narrator& nar, const TinyLm& lm, const std::vector<int>& prompt, const SamplerConfig& sc,
                    std::uint64_t seed, bool bench) {
  const std::vector<std::size_t> lengths = bench ? std::vector<std::size_t>{16, 32, 64, 128, 256, 512}
                                                 : std::vector<std::size_t>{16, 32, 64};
  const int repeats = bench ? 2 : 3;  // best of: the least disturbed run on a shared machine
  const auto rows = kv_speed_sweep(lm.model, prompt, lengths, sc, seed, repeats);
  Table t({_("new tokens"), _("cached"), _("tokens/s"), _("no cache"), _("tokens/s"), _("speed-up"), _("same tokens")},
          _f("generation after the prompt, best of {}", repeats));
  std::vector<double> n, tc, tu;
  bool all_same = true;
  for (const auto& r : rows) {
    t.add({std::to_string(r.tokens), fmt::format("{:.3f} s", r.cached_seconds),
           fmt::format("{:.0f}", double(r.tokens) / r.cached_seconds), fmt::format("{:.3f} s", r.uncached_seconds),
           fmt::format("{:.0f}", double(r.tokens) / r.uncached_seconds),
           fmt::format("{:.1f}×", r.uncached_seconds / r.cached_seconds), r.identical ? _("yes") : _("NO")});
    n.push_back(double(r.tokens));
    tc.push_back(r.cached_seconds);
    tu.push_back(r.uncached_seconds);
    all_same = all_same && r.identical;
  }
  nar.table(t, true);
  nar.result(_f("log-log slope of time vs tokens: cached {:.2f}, uncached {:.2f} (1 = linear, 2 = quadratic)",
                         loglog_slope(n, tc), loglog_slope(n, tu)));
  nar.result(_f("tokens identical: {}", all_same ? _("yes") : _("NO")));
  if (bench && prompt.size() + lengths.back() > lm.model.cfg.context)
    nar.say(_f("(past {} positions the RoPE tables are extended for timing; the model never trained there)",
                        lm.model.cfg.context));
  if (!bench) nar.say(_("(--bench extends the sweep to 512 tokens)"));
  const std::size_t np = std::min<std::size_t>(128, lm.valid_tokens.size());
  const PrefillDecode pd = prefill_vs_decode(lm.model, {lm.valid_tokens.begin(), lm.valid_tokens.begin() + long(np)});
  nar.result(_f("prefill of {} tokens in one pass: {:.1f} µs/token; the same tokens decoded one at a "
                         "time: {:.1f} µs/token (decode / prefill = {:.2f}); final logits differ by {:.1e}",
                         pd.tokens, pd.prefill_seconds / double(pd.tokens) * 1e6,
                         pd.decode_seconds / double(pd.tokens) * 1e6, pd.decode_seconds / pd.prefill_seconds,
                         pd.max_logit_diff));
  nar.code("attn/studies/decoder_study.hpp: kv_speed_sweep, prefill_vs_decode");
  nar.why(_("prefill multiplies whole matrices at once; decoding does the same arithmetic one row at a time, "
            "in smaller pieces. Without the cache each step would redo the whole prefix: O(t²) in total."));
  return rows.back().uncached_seconds / rows.back().cached_seconds;
}

double paged_cache_study(Narrator& nar, const TinyLm& lm, const SamplerConfig& sc, std::uint64_t seed) {
  // Six prompts of mixed lengths from the held-out text, and mixed numbers of new tokens.
  const std::vector<std::size_t> prompt_len{3, 9, 17, 30, 45, 60}, n_new{10, 40, 25, 70, 5, 50};
  std::vector<std::vector<int>> prompts;
  std::size_t at = 0;
  for (std::size_t len : prompt_len) {
    prompts.emplace_back(lm.valid_tokens.begin() + long(at), lm.valid_tokens.begin() + long(at + len));
    at += 500;
  }
  const PagedStudy s = paged_study(lm.model, prompts, n_new, sc, seed, 16);
  Table t({_("sequence"), _("prompt"), _("new"), _("K/V rows stored"), _f("blocks of {}", s.block_size), _("slots unused")},
          _("a batch decoded together through one paged cache"));
  std::size_t unused = 0;
  for (std::size_t i = 0; i < s.sequences; ++i) {
    const std::size_t blocks = (s.lengths[i] + s.block_size - 1) / s.block_size;
    unused += blocks * s.block_size - s.lengths[i];
    t.add({std::to_string(i), std::to_string(prompt_len[i]), std::to_string(n_new[i]), std::to_string(s.lengths[i]),
           std::to_string(blocks), std::to_string(blocks * s.block_size - s.lengths[i])});
  }
  nar.table(t, true);
  nar.say(_("K/V rows stored = prompt + new − 1: the last new token is never fed back, so its keys and values are "
            "never computed"));
  nar.result(_f("paged: {} blocks = {} for {} stored tokens ({} exactly; {} slots unused in last blocks); "
                         "contiguous, {} × {} reserved: {} — {:.1f}× the paged memory",
                         s.blocks_used, bytes_str(double(s.paged_bytes)), s.tokens_stored, bytes_str(double(s.exact_bytes)),
                         unused, s.sequences, s.max_len, bytes_str(double(s.contiguous_bytes)),
                         double(s.contiguous_bytes) / double(s.paged_bytes)));
  nar.result(_f("tokens equal to each sequence decoded alone with the contiguous cache: {}",
                s.identical ? _("yes") : _("NO")));
  nar.code("attn/models/decoder_lm_generate.hpp: generate_batch_paged; attn/studies/decoder_study.hpp: paged_study");
  nar.why(_("a contiguous cache must reserve the longest possible sequence up front; blocks are taken as tokens "
            "arrive, so the waste is under one block per sequence (vLLM, Kwon et al. 2023)."));
  return double(s.contiguous_bytes) / double(s.paged_bytes);
}

}  // namespace attn
