// Chapter 04 · Multi-head attention — project, split into heads, attend per head, concatenate, mix
// with W_O; every intermediate printed (d_model 16, 4 heads); then the original Transformer's
// parameters and FLOPs, and MQA / GQA with their KV-cache bytes per token.
//   build/bin/04_multi_head                  the lesson (under 1 s)
//   build/bin/04_multi_head --export out     also writes every tensor as .npy + manifest.json
// Export names: X W_Q W_K W_V W_O Q_heads K_heads V_heads weights heads_out concat output
// (no biases in this chapter's layer; Q = X·W_Q, right-multiplied) and gqa_output mqa_output.
#include <cmath>

#include <fmt/format.h>

#include "attn/present/cli.hpp"
#include "attn/data/data_files.hpp"
#include "attn/attention/gqa.hpp"
#include "attn/attention/mha_trace.hpp"
#include "attn/attention/multi_head.hpp"
#include "attn/data/npy.hpp"
#include "attn/present/side_by_side.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "attn/studies/transformer_cost.hpp"
#include "attn/data/word_vectors.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
std::string si(double x) {  // 3.1M, 420K, 1.2G
  if (x >= 1e9) return fmt::format("{:.2f}G", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.2f}M", x / 1e6);
  if (x >= 1e3) return fmt::format("{:.1f}K", x / 1e3);
  return fmt::format("{:.0f}", x);
}
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("04", /*default_seed=*/4, /*total_steps=*/6);
  std::string sentence = "the cat eats the fish";
  std::size_t d_model = 16, heads = 4;
  ch.app().add_option("--sentence", sentence, _("the words to attend over (2 to 12 words)"))->capture_default_str()
      ->check([](const std::string& s) {
        auto n = split_words(s).size();
        return n >= 2 && n <= 12 ? std::string() : _f("needs 2 to 12 words, got {}", n);
      });
  ch.app().add_option("--d-model", d_model, _("model width (a multiple of --heads)"))->capture_default_str()->check(CLI::Range(2, 128));
  ch.app().add_option("--heads", heads, _("number of heads (divides --d-model, at most 8)"))->capture_default_str()->check(CLI::Range(1, 8));
  ch.app().parse_complete_callback([&] {  // a relation between two flags: checked before any work, exit 2
    if (d_model % heads != 0) throw CLI::ValidationError("--heads", _f("{} does not divide --d-model {}", heads, d_model));
  });
  ch.set_question(_("Question: why run several small attentions side by side instead of one big one — and what do they cost?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels words = split_words(sentence);
    const std::size_t T = words.size(), dh = d_model / heads;
    Rng rng(nar.options().seed);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step(_("Tokens and four weight matrices"), _("W_Q, W_K, W_V, W_O ∈ ℝ^(d_model×d_model)"), _("Vaswani et al. 2017, §3.2.2"));
    const Mat X = word_vectors(words, d_model, nar.options().seed);
    nar.show("X", X, words, {}, _f("(T×d_model) = ({}×{})", T, d_model));
    const MultiHead p = multi_head_init(d_model, heads, heads, rng, /*bias=*/false);
    nar.show("W_Q", p.w_q, {}, {}, _("U(−1/√d_model, 1/√d_model), as PyTorch's nn.Linear; no biases in this chapter"));
    nar.record("W_K", p.w_k);
    nar.record("W_V", p.w_v);
    nar.record("W_O", p.w_o);
    nar.code("attn/attention/multi_head.hpp: multi_head_init");
    nar.why(_("the same parameter count as one big head: h heads of d_model/h columns each share the four matrices."));

    nar.step(_("Project, then split into heads"), _("Q = X·W_Q  (T×d_model)  →  Q_heads (h×T×d_head)"));
    const MhaTrace t = multi_head_trace(X, p);
    nar.say(_f("d_head = d_model / h = {} / {} = {}; head i owns columns [{}·i, {}·(i+1)) of Q, K and V", d_model, heads, dh, dh, dh));
    nar.say(_("heads are numbered from 0 here, in tensors and heatmaps alike (the paper writes head_1 … head_h)"));
    nar.show("Q_heads", t.q_heads, words, {}, _("each head's slice of Q"));
    nar.show("K_heads", t.k_heads, words);
    nar.show("V_heads", t.v_heads, words);
    nar.code("attn/attention/mha_trace.hpp: multi_head_trace, split_heads");
    nar.why(_("splitting is only a reshape: no new numbers, just h separate (T×d_head) problems."));

    nar.step(_("Attention in every head at once"), _("head_i = softmax(Q_i·K_iᵀ/√d_head)·V_i"));
    nar.record("weights", t.weights);
    if (!nar.quiet()) {
      std::vector<std::string> maps, titles;
      std::string legend;
      for (std::size_t h = 0; h < heads; ++h) {
        Labels short_words;  // first letters keep four maps on one screen
        for (const auto& w : words) short_words.push_back(w.substr(0, 1));
        std::string map = format_heatmap(slice_of(t.weights, h), h == 0 ? words : Labels(T, ""), short_words, {0.0, 1.0});
        const std::size_t cut = map.rfind('\n', map.size() - 2);  // the legend is the map's last line
        legend = map.substr(map.find_first_not_of(' ', cut + 1));  // one legend under all the maps
        maps.push_back(map.substr(0, cut));
        titles.push_back(_f("head {}", h));
      }
      nar.say(_f("weights (h×T×T) = ({}×{}×{}), one heatmap per head, rows = queries:", heads, T, T));
      std::fputs(side_by_side(maps, titles, 3, "  ", terminal_columns()).c_str(), stdout);
      nar.say(legend.substr(0, legend.find('\n')));
    }
    double most_different = 0.0;
    for (std::size_t a = 0; a < heads; ++a)
      for (std::size_t b = a + 1; b < heads; ++b)
        most_different = std::max(most_different, max_abs_diff(slice_of(t.weights, a), slice_of(t.weights, b)));
    if (heads > 1)
      nar.result(_f("largest difference between two heads' weights: {:.3f} — each head attends its own way",
                             most_different));
    else
      nar.result(_("one head: nothing to compare — with h = 1 this is chapter 03's single attention"));
    nar.say(_("W_Q, W_K, W_V are random: these patterns mean nothing yet; chapter 10 reads the heads of a trained model."));
    nar.show("heads_out", t.heads_out, words, {}, _("each head's weighted sum of its values"));
    nar.code("attn/attention/mha_trace.hpp: multi_head_trace");
    nar.why(_("different projections make different similarity questions; one softmax could only average them into one map."));

    nar.step(_("Concatenate and mix"), _("MultiHead(X) = Concat(head_1, …, head_h)·W_O"));
    nar.show("concat", t.concat, words, {}, _("heads side by side again: (T×h·d_head)"));
    nar.show("output", t.output, words, {}, _("W_O lets every output column read every head"));
    Tensor3 x3 = xt::zeros<float>({std::size_t(1), T, d_model});
    std::copy(X.begin(), X.end(), x3.begin());
    Tensor3 layer_out;
    MultiHeadCacheT<float> cache;
    multi_head_forward(layer_out, cache, x3, x3, p);
    nar.result(_f("max |output − training layer's multi_head_forward| = {:.1e}", max_abs_diff(t.output, slice_of(layer_out, 0))));
    if (const auto gx_path = find_data_file("golden/mha/X.npy")) {
      // The whole set comes from X.npy's folder; each file is shape-checked under its own name.
      const std::string dir = gx_path->substr(0, gx_path->size() - std::string("X.npy").size());
      auto golden = [&](const char* n, std::vector<std::size_t> shape) {
        const std::string path = dir + n + ".npy";
        NpyArray a = read_npy(path);
        expect_npy_shape(a, shape, path);
        return a;
      };
      auto gm = [&](const char* n, std::size_t rows) { return npy_to_mat(golden(n, {rows, 16}), n); };
      auto gv = [&](const char* n) { return npy_to_vec(golden(n, {16}), n); };
      const Mat gx = gm("X", kAnyDim);
      if (gx.shape(0) == 0) throw NpyError(dir + _("X.npy: holds no tokens (shape (0, 16))"));
      MultiHead g;
      g.n_heads = g.n_kv_heads = 4;
      g.w_q = gm("W_Q", 16), g.w_k = gm("W_K", 16), g.w_v = gm("W_V", 16), g.w_o = gm("W_O", 16);
      g.b_q = gv("b_Q"), g.b_k = gv("b_K"), g.b_v = gv("b_V"), g.b_o = gv("b_O");
      const Mat want = gm("output", gx.shape(0));
      nar.result(_f("PyTorch parity: nn.MultiheadAttention (16 wide, 4 heads, biases) vs ours on the golden "
                             "inputs: max |diff| = {:.1e} (data/golden/mha)", max_abs_diff(multi_head_trace(gx, g).output, want)));
    }
    nar.code("attn/attention/mha_trace.hpp: merge_heads; attn/attention/multi_head.hpp: multi_head_forward");
    nar.why(_("concatenation alone would keep heads apart; W_O is where their findings are combined."));

    // ---------------------------------------------------------------- the original configuration
    nar.step(_("The original Transformer, counted"), _("per layer: 8·T·d² (projections) + 4·T²·d (scores) + 4·T·d·d_ff (FFN)"),
             _("Vaswani et al. 2017, Table 3 (base)"));
    const TransformerConfig cfg;
    const TransformerParams tp = transformer_params(cfg);
    const LayerCost enc = encoder_layer_cost(cfg, 1), dec = decoder_layer_cost(cfg, 1, 1);
    Table params({_("part"), _("attention"), _("feed-forward"), _("norms"), _("total")});
    params.add({_("encoder layer"), si(enc.attention_params), si(enc.ffn_params), si(enc.norm_params), si(enc.params())});
    params.add({_("decoder layer"), si(dec.attention_params), si(dec.ffn_params), si(dec.norm_params), si(dec.params())});
    params.add({_("6 + 6 layers"), "", "", "", si(tp.encoder + tp.decoder)});
    params.add({_("embedding (shared, 37000×512)"), "", "", "", si(tp.embedding)});
    params.add({_("model"), "", "", "", si(tp.total())});
    nar.table(params, /*as_result=*/true);
    nar.result(_f("our count {:.1f}M vs the paper's 65M (Table 3; its exact vocabulary and rounding are not given)", tp.total() / 1e6));
    Table flops({"T", _("projections"), _("scores QKᵀ, AV"), _("feed-forward"), _("attention share")},
                _("FLOPs of one encoder layer on one sequence of T tokens (a multiply-add counts 2)"));
    for (std::size_t len : {32u, 128u, 512u, 1024u, 2048u, 8192u}) {
      const LayerCost c = encoder_layer_cost(cfg, len);
      flops.add({std::to_string(len), si(c.projection_flops), si(c.score_flops), si(c.ffn_flops),
                 fmt::format("{:.0f}%", 100.0 * c.attention_share())});
    }
    nar.table(flops, /*as_result=*/true);
    nar.code("attn/studies/transformer_cost.hpp: transformer_params, encoder_layer_cost");
    nar.why(_("projections and FFN grow like T, scores like T²: attention is half the work at T = 1024 and the scores alone "
            "match the feed-forward at T = d_ff = 2048; beyond that attention dominates."));

    // ---------------------------------------------------------------- MQA and GQA
    nar.step(_("MQA and GQA: share keys and values"), _("query head i reads K/V head ⌊i / (h/g)⌋"), _("Shazeer 2019; Ainslie et al. 2023"));
    const std::size_t g = heads % 2 == 0 ? heads / 2 : heads;
    const MultiHead pg = multi_head_init(d_model, heads, g, rng, false), pm = multi_head_init(d_model, heads, 1, rng, false);
    const MhaTrace tg = multi_head_trace(X, pg), tm = multi_head_trace(X, pm);
    nar.show("gqa_output", tg.output, words, {}, _f("GQA: {} query heads, {} K/V heads", heads, g));
    nar.record("mqa_output", tm.output);
    MultiHead as_mha = pg;  // GQA with its K/V heads copied out per query head is plain MHA
    as_mha.n_kv_heads = heads;
    as_mha.w_k = merge_heads(repeat_kv(split_heads(pg.w_k, g), heads));
    as_mha.w_v = merge_heads(repeat_kv(split_heads(pg.w_v, g), heads));
    nar.result(_f("GQA == MHA with each K/V head repeated for its group: max |diff| = {:.1e}",
                           max_abs_diff(tg.output, multi_head_trace(X, as_mha).output)));
    Table kv({_("LLaMA-2-70B-like (d 8192, 64 × 128, 80 layers)"), _("K/V heads"), _("attn params/layer"), _("KV cache/token (bf16)")});
    for (std::size_t kvh : {64u, 8u, 1u}) {
      const AttentionParamCount c = attention_param_count(8192, 64, kvh, 128);
      const std::size_t bytes = kv_cache_bytes_per_token(80, kvh, 128);
      kv.add({kvh == 64 ? "MHA" : kvh == 1 ? "MQA" : _("GQA (LLaMA 2 70B's choice)"), std::to_string(kvh), si(double(c.total())),
              _f("{:.0f} KiB", double(bytes) / 1024.0)});
    }
    nar.table(kv, /*as_result=*/true);
    nar.code("attn/attention/gqa.hpp: repeat_kv, attention_param_count, kv_cache_bytes_per_token");
    nar.why(_("decoding re-reads the whole cache for every new token; 8 K/V heads make it 8× smaller, at a small quality cost."));

    nar.takeaway({
        _("Multi-head attention = split Q, K, V into h column blocks, attend in each, concatenate, multiply by W_O; "
        "it matches PyTorch's nn.MultiheadAttention and h = 1 is chapter 03's single head."),
        _f("Original Transformer: ~{:.0f}M parameters by our count (paper: 65M); attention's FLOP share grows with "
                    "T: {:.0f}% at T = 32, {:.0f}% at T = 1024, {:.0f}% at T = 8192.", tp.total() / 1e6,
                    100.0 * encoder_layer_cost(cfg, 32).attention_share(),
                    100.0 * encoder_layer_cost(cfg, 1024).attention_share(),
                    100.0 * encoder_layer_cost(cfg, 8192).attention_share()),
        _f("GQA/MQA shrink the KV cache by h/g ({:.1f} MiB → {:.0f} KiB → {:.0f} KiB per token at 70B-like sizes).",
                    double(kv_cache_bytes_per_token(80, 64, 128)) / (1024.0 * 1024.0),
                    double(kv_cache_bytes_per_token(80, 8, 128)) / 1024.0,
                    double(kv_cache_bytes_per_token(80, 1, 128)) / 1024.0),
    });
  });
}
