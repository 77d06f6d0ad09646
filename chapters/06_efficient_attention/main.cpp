// Chapter 06 · Efficient attention — exact attention costs n² time and memory. Which patterns and
// reorderings make it cheaper, what does each cost, and how far is each from exact attention?
// Window, dilated window, Longformer, BigBird, linear attention, the exact tiled (online-softmax)
// computation, and the KV cache of autoregressive decoding — each measured.
//   build/bin/06_efficient_attention                      the lesson + the sweep (under 30 s)
//   build/bin/06_efficient_attention --sizes 1024,16384    another sweep
// Export names: window_mask dilated_mask longformer_mask bigbird_mask (0 visible, −∞ masked)
// online_trace sweep; manifest.json also holds "sweep_variants" and "sweep_columns".
#include <cmath>

#include <fmt/format.h>

#include "attn/present/ch06_report.hpp"
#include "attn/present/chapters.hpp"
#include "attn/present/cli.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("06", /*default_seed=*/6, /*total_steps=*/6);
  std::vector<std::size_t> sizes = {256, 512, 1024, 2048, 4096, 8192};
  EfficientSweepConfig sweep_cfg;
  std::size_t decode_steps = 192;
  ch.app().add_option("--sizes", sizes, _("sequence lengths n of the sweep"))->delimiter(',')->capture_default_str()
      ->check(CLI::Range(16, 65536));
  ch.app().add_option("--window", sweep_cfg.window,
                      _("window size w of the sweep: the keys one query sees, itself included (odd: centred)"))
      ->capture_default_str()->check(whole_number_of_parity(1, 8191, /*even=*/false));
  ch.app().add_option("--max-full-mib", sweep_cfg.max_full_mib, _("skip full attention when scores + weights need more"))
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& s) {  // std::stod alone would let nan and inf through
        double x = 0.0;
        std::size_t used = 0;
        try { x = std::stod(s, &used); } catch (const std::exception&) { used = 0; }
        if (used != s.size() || !std::isfinite(x)) return _f("{} is not a finite number", s);
        return x >= 1.0 && x <= 1e6 ? std::string() : _f("{} is not in 1 … 1e6", s);
      }, "MiB in [1 - 1e6]"));
  ch.app().add_option("--repeats", sweep_cfg.repeats, _("runs per point of the sweep (fewer once a point took 2 s)"))
      ->capture_default_str()->check(CLI::Range(1, 50));
  ch.app().add_option("--decode-steps", decode_steps, _("tokens generated in the KV-cache step"))->capture_default_str()
      ->check(CLI::Range(8, 4096));
  ch.set_question(_("Question: exact attention costs n² — what do window, sparse, linear and tiled attention buy, and at what error?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    Rng rng(nar.options().seed);
    sweep_cfg.seed = nar.options().seed;

    // ---------------------------------------------------------------- patterns, small
    nar.step(_("Sliding and dilated windows"), _("query i sees keys i−w+1 … i  (dilated: i, i−r, i−2r, …)"),
             _("Beltagy et al. 2020; Jiang et al. 2023 (Mistral 7B)"));
    const std::size_t n = 16, w = 4;
    const SparsePattern win = sliding_window_pattern(n, w, true), dil = dilated_window_pattern(n, w, 2, true);
    show_pattern(nar, "window_mask", win, _f("causal window w = {}: each token sees itself and {} before it", w, w - 1));
    show_pattern(nar, "dilated_mask", dil, _f("dilated, w = {}, r = 2: the same {} keys, twice the reach", w, w));
    report_window_pairs(nar, n, w, win, dil);
    nar.say(_("Mistral 7B: position i sees i − 4096 … i, a window of w = 4097 keys (the paper's W = 4096 counts the "
              "keys before i; our w counts i too); stacked layers reach further, layer k up to k·(w − 1) tokens back "
              "(chapter 03 measured ⌈(n − 1)/(w − 1)⌉ layers)."));
    nar.say(_f("Correction: the source article {} says LLaMA 3 does too; it does not — LLaMA 3 uses full causal "
               "attention with GQA (Dubey et al. 2024).", source_article()));
    nar.code("attn/attention/sparse_attention.hpp: sliding_window_pattern, dilated_window_pattern");
    nar.why(_("some heads attend mostly to the neighbouring tokens (Clark et al. 2019, \"What Does BERT Look At?\", "
              "§3.1); a window keeps that and drops the quadratic rest."));

    nar.step(_("Global tokens and random blocks"), _("BigBird = window blocks + global blocks + random blocks"),
             _("Zaheer et al. 2020; Beltagy et al. 2020"));
    const std::size_t nb = 32, lf_w = 5;  // Longformer's centred window: 5 keys, 2 each side and itself
    const SparsePattern lf = longformer_pattern(nb, (lf_w + 1) / 2, {0});
    const SparsePattern bb = to_token_pattern(bigbird_pattern(nb, 4, 1, 1, 1, nar.options().seed));
    show_pattern(nar, "longformer_mask", lf, _f("Longformer: centred window w = {} (non-causal) + global token 0", lf_w));
    show_pattern(nar, "bigbird_mask", bb, _("BigBird, blocks of 4: 3 window blocks + 1 global + 1 random"));
    nar.result(_f("density: Longformer {:.0f}%, BigBird {:.0f}% of the 32×32 pairs; at n = 4096 BigBird keeps {:.1f}% "
                  "(blocks of {}, {} random blocks, as in step 6)", 100 * lf.density(), 100 * bb.density(),
                  100 * to_token_pattern(bigbird_pattern(4096, sweep_cfg.block, 1, sweep_cfg.global_blocks,
                                                         sweep_cfg.random_blocks, sweep_cfg.seed)).density(),
                  sweep_cfg.block, sweep_cfg.random_blocks));
    nar.say(_("Complexity depends on the pattern: window/BigBird O(n), strided (Child et al. 2019) O(n√n), LSH "
              "(locality-sensitive hashing; Reformer, Kitaev et al. 2020) O(n log n)."));
    nar.say(_f("(The source article's companion card {} gives O(n log n·d) for sparse attention in general — that "
               "is one pattern's cost, not all.)", source_card()));
    nar.code("attn/attention/sparse_attention.hpp: longformer_pattern, bigbird_pattern, to_token_pattern");
    nar.why(_("global tokens carry information across the whole sequence in two hops (any token → a global token → any "
              "token); random blocks make short paths likely (Zaheer et al. 2020, §2–3, on BigBird's graph)."));

    // ---------------------------------------------------------------- linear attention
    nar.step(_("Linear attention: reorder the product"), _("row i: φ(q_i)ᵀ(φ(K)ᵀ·V) / φ(q_i)ᵀΣ_j φ(k_j), not (φ(Q)·φ(K)ᵀ)·V first;  φ = elu + 1"),
             _("Katharopoulos et al. 2020"));
    const Mat lq = rng.normal_mat(64, 16), lk = rng.normal_mat(64, 16), lv = rng.normal_mat(64, 16);
    report_linear(nar, linear_attention_check(lq, lk, lv));
    nar.code("attn/attention/linear_attention.hpp: linear_attention, linear_attention_causal");
    nar.why(_("with a d×d state, generation costs O(d²) per token at any length — an RNN; state-space models (Mamba: Gu & Dao 2023) refine this."));

    // ---------------------------------------------------------------- tiled exact attention
    nar.step(_("Exact attention in tiles: the online softmax for one row"), _("m' = max(m, rowmax);  α = e^(m−m');  ℓ' = α·ℓ + Σ e^(s−m')"),
             _("Milakov & Gimelshein 2018; Dao et al. 2022"));
    const Mat tq = rng.normal_mat(40, 8) * 1.5f, tk = rng.normal_mat(40, 8) * 1.5f, tv = rng.normal_mat(40, 8);
    const Mat grad = rng.normal_mat(40, 8);
    nar.say(_f("Q, K: 40 rows × d_k = {}, V: 40 × {}; query row 5, its 40 keys in tiles of 8 (scores already "
               "scaled by 1/√d_k):", tq.shape(1), tv.shape(1)));
    report_tiled(nar, tiled_attention_check(tq, tk, tv, grad, /*tile=*/8, /*trace_row=*/5), 40, 8);
    nar.code("attn/attention/tiled_attention.hpp: tiled_attention_forward, tiled_attention_backward");
    nar.why(_("when a later tile has a bigger max, α < 1 shrinks everything summed so far; the result is exact, the memory O(tile)."));

    // ---------------------------------------------------------------- KV cache
    nar.step(_("Decoding with a KV cache"), _("step t: q_t attends to K[0..t], V[0..t] — keep them instead of recomputing"),
             _("Pope et al. 2022; Ainslie et al. 2023 (GQA); Shazeer 2019 (MQA)"));
    report_kv_cache(nar, time_kv_cache(256, 8, 2, decode_steps, nar.options().seed), decode_steps);
    nar.code("attn/studies/efficient_sweep.hpp: time_kv_cache; attn/attention/kv_cache.hpp: decoder_attention_step");
    nar.why(_("without a cache step t redoes the projections of all t tokens (O(n²·d²) in total); the cache trades that for memory, "
            "which GQA/MQA shrink by sharing K/V heads."));

    // ---------------------------------------------------------------- the sweep
    nar.step(_("Every variant against n"), _f("one head, d_k = {}, non-causal, window w = {} (dilated: r = {}, every r-th key), "
                                              "BigBird blocks of b = {} tokens with g = {} global and {} random blocks",
                                              sweep_cfg.d, sweep_cfg.window, sweep_cfg.dilation, sweep_cfg.block,
                                              sweep_cfg.global_blocks, sweep_cfg.random_blocks));
    const EfficientSweep sweep = sweep_efficient_variants(sizes, sweep_cfg);
    report_sweep(nar, sweep, sweep_cfg);
    nar.code("attn/studies/efficient_sweep.hpp: sweep_efficient_variants, judge_sweep");
    nar.why(_("random inputs spread attention over every key, so nothing local is there to keep: a pattern sees few of "
              "the keys that full attention averages, and its output cannot come close to full attention's."));

    nar.takeaway(ch06_takeaway(sweep, sweep_cfg.fit_from));
  });
}
