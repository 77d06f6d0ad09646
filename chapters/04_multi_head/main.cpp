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
  ch.app().add_option("--sentence", sentence, "the words to attend over (2 to 12 words)")->capture_default_str()
      ->check([](const std::string& s) {
        auto n = split_words(s).size();
        return n >= 2 && n <= 12 ? std::string() : fmt::format("needs 2 to 12 words, got {}", n);
      });
  ch.app().add_option("--d-model", d_model, "model width (a multiple of --heads)")->capture_default_str()->check(CLI::Range(2, 128));
  ch.app().add_option("--heads", heads, "number of heads (divides --d-model, at most 8)")->capture_default_str()->check(CLI::Range(1, 8));
  ch.app().parse_complete_callback([&] {  // a relation between two flags: checked before any work, exit 2
    if (d_model % heads != 0) throw CLI::ValidationError("--heads", fmt::format("{} does not divide --d-model {}", heads, d_model));
  });
  ch.set_question("Question: why run several small attentions side by side instead of one big one — and what do they cost?");

  return ch.run(argc, argv, [&](Narrator& nar) {
    const Labels words = split_words(sentence);
    const std::size_t T = words.size(), dh = d_model / heads;
    Rng rng(nar.options().seed);

    // ---------------------------------------------------------------- the mechanism, small
    nar.step("Tokens and four weight matrices", "W_Q, W_K, W_V, W_O ∈ ℝ^(d_model×d_model)", "Vaswani et al. 2017, §3.2.2");
    const Mat X = word_vectors(words, d_model, nar.options().seed);
    nar.show("X", X, words, {}, fmt::format("(T×d_model) = ({}×{})", T, d_model));
    const MultiHead p = multi_head_init(d_model, heads, heads, rng, /*bias=*/false);
    nar.show("W_Q", p.w_q, {}, {}, "U(−1/√d_model, 1/√d_model), as PyTorch's nn.Linear; no biases in this chapter");
    nar.record("W_K", p.w_k);
    nar.record("W_V", p.w_v);
    nar.record("W_O", p.w_o);
    nar.why("the same parameter count as one big head: h heads of d_model/h columns each share the four matrices.");

    nar.step("Project, then split into heads", "Q = X·W_Q  (T×d_model)  →  Q_heads (h×T×d_head)");
    const MhaTrace t = multi_head_trace(X, p);
    nar.say(fmt::format("d_head = d_model / h = {} / {} = {}; head i owns columns [{}·i, {}·(i+1)) of Q, K and V", d_model, heads, dh, dh, dh));
    nar.show("Q_heads", t.q_heads, words, {}, "each head's slice of Q");
    nar.show("K_heads", t.k_heads, words);
    nar.show("V_heads", t.v_heads, words);
    nar.why("splitting is only a reshape: no new numbers, just h separate (T×d_head) problems.");

    nar.step("Attention in every head at once", "head_i = softmax(Q_i·K_iᵀ/√d_head)·V_i");
    nar.record("weights", t.weights);
    if (!nar.quiet()) {
      std::vector<std::string> maps, titles;
      std::string legend;
      for (std::size_t h = 0; h < heads; ++h) {
        Labels short_words;  // first letters keep four maps on one screen
        for (const auto& w : words) short_words.push_back(w.substr(0, 1));
        std::string map = format_heatmap(slice_of(t.weights, h), h == 0 ? words : Labels(T, ""), short_words, {0.0, 1.0});
        legend = map.substr(map.rfind("legend:"));  // one legend under all the maps
        maps.push_back(map.substr(0, map.rfind('\n', map.rfind("legend:"))));
        titles.push_back(fmt::format("head {}", h + 1));
      }
      nar.say(fmt::format("weights (h×T×T) = ({}×{}×{}), one heatmap per head, rows = queries:", heads, T, T));
      std::fputs(side_by_side(maps, titles).c_str(), stdout);
      nar.say(legend.substr(0, legend.find('\n')));
    }
    double most_different = 0.0;
    for (std::size_t a = 0; a < heads; ++a)
      for (std::size_t b = a + 1; b < heads; ++b)
        most_different = std::max(most_different, max_abs_diff(slice_of(t.weights, a), slice_of(t.weights, b)));
    nar.result(fmt::format("largest difference between two heads' weights: {:.3f} — each head attends its own way", most_different));
    nar.show("heads_out", t.heads_out, words, {}, "each head's weighted sum of its values");
    nar.why("different projections make different similarity questions; one softmax could only average them into one map.");

    nar.step("Concatenate and mix", "MultiHead(X) = Concat(head_1, …, head_h)·W_O");
    nar.show("concat", t.concat, words, {}, "heads side by side again: (T×h·d_head)");
    nar.show("output", t.output, words, {}, "W_O lets every output column read every head");
    Tensor3 x3 = xt::zeros<float>({std::size_t(1), T, d_model});
    std::copy(X.begin(), X.end(), x3.begin());
    Tensor3 layer_out;
    MultiHeadCacheT<float> cache;
    multi_head_forward(layer_out, cache, x3, x3, p);
    nar.result(fmt::format("max |output − training layer's multi_head_forward| = {:.1e}", max_abs_diff(t.output, slice_of(layer_out, 0))));
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
      if (gx.shape(0) == 0) throw NpyError(dir + "X.npy: holds no tokens (shape (0, 16))");
      MultiHead g;
      g.n_heads = g.n_kv_heads = 4;
      g.w_q = gm("W_Q", 16), g.w_k = gm("W_K", 16), g.w_v = gm("W_V", 16), g.w_o = gm("W_O", 16);
      g.b_q = gv("b_Q"), g.b_k = gv("b_K"), g.b_v = gv("b_V"), g.b_o = gv("b_O");
      const Mat want = gm("output", gx.shape(0));
      nar.result(fmt::format("PyTorch parity: nn.MultiheadAttention (16 wide, 4 heads, biases) vs ours on the golden "
                             "inputs: max |diff| = {:.1e} (data/golden/mha)", max_abs_diff(multi_head_trace(gx, g).output, want)));
    }
    nar.why("concatenation alone would keep heads apart; W_O is where their findings are combined.");

    // ---------------------------------------------------------------- the original configuration
    nar.step("The original Transformer, counted", "per layer: 8·T·d² (projections) + 4·T²·d (scores) + 4·T·d·d_ff (FFN)",
             "Vaswani et al. 2017, Table 3 (base)");
    const TransformerConfig cfg;
    const TransformerParams tp = transformer_params(cfg);
    const LayerCost enc = encoder_layer_cost(cfg, 1), dec = decoder_layer_cost(cfg, 1, 1);
    Table params({"part", "attention", "feed-forward", "norms", "total"});
    params.add({"encoder layer", si(enc.attention_params), si(enc.ffn_params), si(enc.norm_params), si(enc.params())});
    params.add({"decoder layer", si(dec.attention_params), si(dec.ffn_params), si(dec.norm_params), si(dec.params())});
    params.add({"6 + 6 layers", "", "", "", si(tp.encoder + tp.decoder)});
    params.add({"embedding (shared, 37000×512)", "", "", "", si(tp.embedding)});
    params.add({"model", "", "", "", si(tp.total())});
    nar.table(params, /*as_result=*/true);
    nar.result(fmt::format("our count {:.1f}M vs the paper's 65M (Table 3; its exact vocabulary and rounding are not given)", tp.total() / 1e6));
    Table flops({"T", "projections", "scores QKᵀ, AV", "feed-forward", "attention share"});
    for (std::size_t len : {32u, 128u, 512u, 1024u, 2048u, 8192u}) {
      const LayerCost c = encoder_layer_cost(cfg, len);
      flops.add({std::to_string(len), si(c.projection_flops), si(c.score_flops), si(c.ffn_flops),
                 fmt::format("{:.0f}%", 100.0 * c.attention_share())});
    }
    nar.table(flops, /*as_result=*/true);
    nar.why("projections and FFN grow like T, scores like T²: attention is half the work at T = 1024 and the scores alone "
            "match the feed-forward at T = d_ff = 2048; beyond that attention dominates.");

    // ---------------------------------------------------------------- MQA and GQA
    nar.step("MQA and GQA: share keys and values", "query head i reads K/V head ⌊i / (h/g)⌋", "Shazeer 2019; Ainslie et al. 2023");
    const std::size_t g = heads % 2 == 0 ? heads / 2 : heads;
    const MultiHead pg = multi_head_init(d_model, heads, g, rng, false), pm = multi_head_init(d_model, heads, 1, rng, false);
    const MhaTrace tg = multi_head_trace(X, pg), tm = multi_head_trace(X, pm);
    nar.show("gqa_output", tg.output, words, {}, fmt::format("GQA: {} query heads, {} K/V heads", heads, g));
    nar.record("mqa_output", tm.output);
    MultiHead as_mha = pg;  // GQA with its K/V heads copied out per query head is plain MHA
    as_mha.n_kv_heads = heads;
    as_mha.w_k = merge_heads(repeat_kv(split_heads(pg.w_k, g), heads));
    as_mha.w_v = merge_heads(repeat_kv(split_heads(pg.w_v, g), heads));
    nar.result(fmt::format("GQA == MHA with each K/V head repeated for its group: max |diff| = {:.1e}",
                           max_abs_diff(tg.output, multi_head_trace(X, as_mha).output)));
    Table kv({"LLaMA-2-70B-like (d 8192, 64 × 128, 80 layers)", "K/V heads", "attn params/layer", "KV cache/token (bf16)"});
    for (std::size_t kvh : {64u, 8u, 1u}) {
      const AttentionParamCount c = attention_param_count(8192, 64, kvh, 128);
      const std::size_t bytes = kv_cache_bytes_per_token(80, kvh, 128);
      kv.add({kvh == 64 ? "MHA" : kvh == 1 ? "MQA" : "GQA (LLaMA 2 70B's choice)", std::to_string(kvh), si(double(c.total())),
              fmt::format("{:.0f} KiB", double(bytes) / 1024.0)});
    }
    nar.table(kv, /*as_result=*/true);
    nar.why("decoding re-reads the whole cache for every new token; 8 K/V heads make it 8× smaller, at a small quality cost.");

    nar.takeaway({
        "Multi-head attention = split Q, K, V into h column blocks, attend in each, concatenate, multiply by W_O; "
        "it matches PyTorch's nn.MultiheadAttention and h = 1 is chapter 03's single head.",
        "Original Transformer: ~63M parameters by our count (paper: 65M); attention's FLOP share grows with T: "
        "34% at T = 32, half at T = 1024, 82% at T = 8192.",
        "GQA/MQA shrink the KV cache by h/g (2.5 MiB → 320 KiB → 40 KiB per token at 70B-like sizes).",
    });
  });
}
