// Chapter 06 · Efficient attention — exact attention costs n² time and memory. Which patterns and
// reorderings make it cheaper, what does each cost, and how far is each from exact attention?
// Window, dilated window, Longformer, BigBird, linear attention, the exact tiled (online-softmax)
// computation, and the KV cache of autoregressive decoding — each measured.
//   build/bin/06_efficient_attention                      the lesson + the sweep (under 30 s)
//   build/bin/06_efficient_attention --sizes 1024,16384    another sweep
// Export names: window_mask dilated_mask longformer_mask bigbird_mask online_trace sweep.
#include <cmath>

#include <fmt/format.h>

#include "attn/attention/attention.hpp"
#include "attn/present/cli.hpp"
#include "attn/studies/efficient_sweep.hpp"
#include "attn/attention/gqa.hpp"
#include "attn/attention/kv_cache.hpp"
#include "attn/attention/linear_attention.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/tensor/rng.hpp"
#include "attn/attention/sparse_attention.hpp"
#include "attn/attention/tiled_attention.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

namespace {
// 1 where a query may look, 0 where not: a pattern as a picture.
Mat visible(const SparsePattern& p) {
  Mat m = xt::zeros<float>({p.rows, p.cols});
  for (std::size_t i = 0; i < p.rows; ++i)
    for (std::size_t t = p.row_start[i]; t < p.row_start[i + 1]; ++t) m(i, p.keys[t]) = 1.0f;
  return m;
}
double max_diff(const Mat& a, const Mat& b) { return double(xt::amax(xt::abs(a - b))()); }
std::string fmt_err(double e) { return e < 0 ? "—" : fmt::format("{:.1e}", e); }
}  // namespace

int main(int argc, char** argv) {
  ChapterApp ch("06", /*default_seed=*/6, /*total_steps=*/6);
  std::vector<std::size_t> sizes = {256, 512, 1024, 2048, 4096, 8192};
  EfficientSweepConfig sweep_cfg;
  std::size_t decode_steps = 192;
  ch.app().add_option("--sizes", sizes, _("sequence lengths n of the sweep"))->delimiter(',')->capture_default_str()
      ->check(CLI::Range(16, 65536));
  ch.app().add_option("--window", sweep_cfg.window, _("window half-width w of the sweep (2w − 1 keys)"))->capture_default_str()
      ->check(CLI::Range(1, 4096));
  ch.app().add_option("--max-full-mib", sweep_cfg.max_full_mib, _("skip full attention when scores + weights need more"))
      ->capture_default_str()
      ->check(CLI::Validator([](std::string& s) {  // CLI::Range lets nan through (every comparison is false)
        double x = 0.0;
        try { x = std::stod(s); } catch (const std::exception&) { return std::string(); }  // Range reports it
        return std::isfinite(x) ? std::string() : std::string(_("must be a finite number"));
      }, "FINITE") & CLI::Range(1.0, 1e6));
  ch.app().add_option("--decode-steps", decode_steps, _("tokens generated in the KV-cache step"))->capture_default_str()
      ->check(CLI::Range(8, 4096));
  ch.set_question(_("Question: exact attention costs n² — what do window, sparse, linear and tiled attention buy, and at what error?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    Rng rng(nar.options().seed);
    sweep_cfg.seed = nar.options().seed;

    // ---------------------------------------------------------------- patterns, small
    nar.step(_("Sliding and dilated windows"), _("query i sees keys i−w+1 … i  (dilated: i, i−r, i−2r, …)"),
             _("Beltagy et al. 2020; Jiang et al. 2023 (Mistral 7B)"));
    const std::size_t n = 16;
    Labels pos;
    for (std::size_t i = 0; i < n; ++i) pos.push_back(std::to_string(i));
    const SparsePattern win = sliding_window_pattern(n, 4, true), dil = dilated_window_pattern(n, 4, 2, true);
    nar.heatmap("window_mask", visible(win), pos, pos, _("causal window w = 4: each token sees itself and 3 before it"), {0.0, 1.0});
    nar.heatmap("dilated_mask", visible(dil), pos, pos, _("dilated, w = 4, r = 2: same cost, twice the reach"), {0.0, 1.0});
    nar.result(_f("visible pairs: full causal {}, window {}, dilated {} — cost grows as n·w, not n²",
                           n * (n + 1) / 2, win.nnz(), dil.nnz()));
    nar.say(_("Mistral 7B uses a 4096-token sliding window (stacked layers reach further: layer L sees ~L·W back)."));
    nar.say(_("Correction: one source article says LLaMA 3 does too; it does not — LLaMA 3 uses full causal attention with GQA."));
    nar.code("attn/attention/sparse_attention.hpp: sliding_window_pattern, dilated_window_pattern");
    nar.why(_("most of a token's attention mass in language is local; a window keeps that and drops the quadratic rest."));

    nar.step(_("Global tokens and random blocks"), _("BigBird = window blocks + global blocks + random blocks"),
             _("Zaheer et al. 2020; Beltagy et al. 2020"));
    const std::size_t nb = 32;
    Labels pos32;
    for (std::size_t i = 0; i < nb; ++i) pos32.push_back(std::to_string(i));
    const SparsePattern lf = longformer_pattern(nb, 3, {0});
    const SparsePattern bb = to_token_pattern(bigbird_pattern(nb, 4, 1, 1, 1, nar.options().seed));
    nar.heatmap("longformer_mask", visible(lf), pos32, pos32, _("Longformer: window 3 + token 0 global (row and column)"), {0.0, 1.0});
    nar.heatmap("bigbird_mask", visible(bb), pos32, pos32, _("BigBird, blocks of 4: 3 window blocks + 1 global + 1 random"), {0.0, 1.0});
    nar.result(_f("density: Longformer {:.0f}%, BigBird {:.0f}% of the 32×32 pairs; at n = 4096 BigBird keeps {:.1f}%",
                           100 * lf.density(), 100 * bb.density(),
                           100 * to_token_pattern(bigbird_pattern(4096, 64, 1, 1, 2, 1)).density()));
    nar.say(_("Complexity depends on the pattern: window/BigBird O(n), strided (Child et al. 2019) O(n√n), LSH (Reformer) O(n log n)."));
    nar.say(_("(One article gives O(n log n·d) for sparse attention in general — that is one pattern's cost, not all.)"));
    nar.code("attn/attention/sparse_attention.hpp: longformer_pattern, bigbird_pattern, to_token_pattern");
    nar.why(_("global tokens carry information across the whole sequence in two hops; random blocks make short paths likely."));

    // ---------------------------------------------------------------- linear attention
    nar.step(_("Linear attention: reorder the product"), _("φ(Q)·(φ(K)ᵀ·V) instead of (φ(Q)·φ(K)ᵀ)·V,  φ = elu + 1"),
             _("Katharopoulos et al. 2020"));
    const Mat lq = rng.normal_mat(64, 16), lk = rng.normal_mat(64, 16), lv = rng.normal_mat(64, 16);
    const Mat par = linear_attention_causal(lq, lk, lv), quad = linear_attention_quadratic(lq, lk, lv, true);
    nar.result(_f("causal recurrent form (a 16×16 state updated per token) vs quadratic form: max diff {:.1e}",
                           max_diff(par, quad)));
    const Mat soft = scaled_dot_product_attention(lq, lk, lv).output;
    nar.result(_f("vs softmax attention on the same inputs: max diff {:.2f} — a different model, not an approximation",
                           max_diff(linear_attention(lq, lk, lv), soft)));
    nar.code("attn/attention/linear_attention.hpp: linear_attention, linear_attention_causal");
    nar.why(_("with a d×d state, generation costs O(d²) per token at any length — an RNN; state-space models (Mamba) refine this."));

    // ---------------------------------------------------------------- tiled exact attention
    nar.step(_("Exact attention in tiles: the online softmax for one row"), _("m' = max(m, rowmax);  α = e^(m−m');  ℓ' = α·ℓ + Σ e^(s−m')"),
             _("Milakov & Gimelshein 2018; Dao et al. 2022"));
    const Mat tq = rng.normal_mat(40, 8) * 1.5f, tk = rng.normal_mat(40, 8) * 1.5f, tv = rng.normal_mat(40, 8);
    std::vector<OnlineSoftmaxStep> trace;
    const TiledAttentionResult tiled = tiled_attention_forward(tq, tk, tv, 8, 8, false, 0.0f, &trace, 5);
    Table tt({"keys", _("tile max"), _("m before"), _("m after"), "α = e^(m−m')", _("ℓ before"), _("ℓ after")});
    Mat trace_m = xt::zeros<float>({trace.size(), std::size_t(6)});
    for (std::size_t t = 0; t < trace.size(); ++t) {
      const auto& s = trace[t];
      tt.add({fmt::format("{}–{}", s.begin, s.end - 1), fmt::format("{:.3f}", s.tile_max), fmt::format("{:.3f}", s.m_before),
              fmt::format("{:.3f}", s.m_after), fmt::format("{:.4f}", s.alpha), fmt::format("{:.4f}", s.l_before),
              fmt::format("{:.4f}", s.l_after)});
      const float vals[] = {s.tile_max, s.m_before, s.m_after, s.alpha, s.l_before, s.l_after};
      for (std::size_t c = 0; c < 6; ++c) trace_m(t, c) = vals[c];
    }
    nar.say(_("query row 5 of 40, keys in tiles of 8 (scores already scaled by 1/√d):"));
    nar.table(tt);
    nar.record("online_trace", trace_m);
    const Mat exact = scaled_dot_product_attention(tq, tk, tv).output;
    nar.result(_f("tiled (8×8 tiles) vs materialised attention: max diff {:.1e}; the 40×40 matrix never existed",
                           max_diff(tiled.output, exact)));
    Mat g = rng.normal_mat(40, 8);
    Mat dq = xt::zeros<float>({40, 8}), dk = dq, dv = dq, dq0 = dq, dk0 = dq, dv0 = dq;
    tiled_attention_backward(dq, dk, dv, g, tq, tk, tv, tiled.output, tiled.logsumexp, 8, 8);
    attention_backward(dq0, dk0, dv0, g, tq, tk, tv);
    nar.result(_f("backward recomputing tiles from L = m + log ℓ vs materialised backward: max diff dQ {:.1e}, dK {:.1e}, dV {:.1e}",
                           max_diff(dq, dq0), max_diff(dk, dk0), max_diff(dv, dv0)));
    nar.code("attn/attention/tiled_attention.hpp: tiled_attention_forward, tiled_attention_backward");
    nar.why(_("when a later tile has a bigger max, α < 1 shrinks everything summed so far; the result is exact, the memory O(tile)."));

    // ---------------------------------------------------------------- KV cache
    nar.step(_("Decoding with a KV cache"), _("step t: q_t attends to K[0..t], V[0..t] — keep them instead of recomputing"),
             _("Pope et al. 2022; Ainslie et al. 2023 (GQA); Shazeer 2019 (MQA)"));
    const KVCacheTiming kv = time_kv_cache(256, 8, 2, decode_steps, nar.options().seed);
    nar.result(_f("{} tokens, d_model 256, 8 heads (GQA, 2 KV heads): with cache {:.1f} ms, without {:.1f} ms ({:.1f}× faster); "
                           "same tokens (max diff {:.1e})", decode_steps, kv.with_cache * 1e3, kv.without_cache * 1e3,
                           kv.without_cache / kv.with_cache, kv.max_diff));
    Table kvt({_("config (fp16 cache)"), "layers", "heads", _("KV heads"), _("head dim"), _("KiB / token"), _("GiB at 8k tokens")});
    struct Cfg { const char* name; std::size_t layers, heads, kv_heads, hd; };
    for (const Cfg& c : {Cfg{_("7B-like, MHA"), 32, 32, 32, 128}, Cfg{_("same, GQA (8 KV heads)"), 32, 32, 8, 128},
                         Cfg{_("same, MQA (1 KV head)"), 32, 32, 1, 128}}) {
      const std::size_t bytes = kv_cache_bytes_per_token(c.layers, c.kv_heads, c.hd, 2);
      kvt.add({c.name, std::to_string(c.layers), std::to_string(c.heads), std::to_string(c.kv_heads), std::to_string(c.hd),
               fmt::format("{:.0f}", bytes / 1024.0), fmt::format("{:.2f}", bytes * 8192.0 / (1024.0 * 1024 * 1024))});
    }
    nar.table(kvt, /*as_result=*/true);
    nar.code("attn/studies/efficient_sweep.hpp: time_kv_cache; attn/attention/kv_cache.hpp: decoder_attention_step");
    nar.why(_("without a cache step t redoes the projections of all t tokens (O(n²·d²) in total); the cache trades that for memory, "
            "which GQA/MQA shrink by sharing K/V heads."));

    // ---------------------------------------------------------------- the sweep
    nar.step(_("Every variant against n"), _f("one head, d = {}, non-causal, w = {} (2w−1 keys), BigBird blocks of {}",
                                                    sweep_cfg.d, sweep_cfg.window, sweep_cfg.block));
    const std::vector<VariantSweep> sweep = sweep_efficient_variants(sizes, sweep_cfg);
    std::vector<std::string> head = {_("variant"), _("cost")};
    for (std::size_t s : sizes) head.push_back(fmt::format("n={} ms", s));
    head.insert(head.end(), {_("slope"), _("work MiB @max"), _("err vs full @max")});
    Table st(head);
    Mat sweep_m = xt::zeros<float>({sweep.size() * sizes.size(), std::size_t(5)});
    for (std::size_t vi = 0; vi < sweep.size(); ++vi) {
      const auto& s = sweep[vi];
      std::vector<std::string> row = {s.name, s.complexity};
      double err = -1, work = 0;
      for (std::size_t pi = 0; pi < s.points.size(); ++pi) {
        const auto& p = s.points[pi];
        row.push_back(p.skipped ? _("skip") : fmt::format("{:.2f}", p.seconds * 1e3));
        if (!p.skipped) {
          work = p.work_mib;
          if (p.err_vs_full >= 0) err = p.err_vs_full;
        } else {
          nar.say(_f("skipped {} at n = {}: {}", s.name, p.n, p.note));
        }
        const float vals[] = {float(vi), float(p.n), float(p.seconds), float(p.work_mib), float(p.err_vs_full)};
        for (std::size_t c = 0; c < 5; ++c) sweep_m(vi * sizes.size() + pi, c) = vals[c];
      }
      row.push_back(std::isnan(s.slope) ? "—" : fmt::format("{:.2f}", s.slope));
      row.push_back(fmt::format("{:.2f}", work));
      row.push_back(fmt_err(err));
      st.add(row);
    }
    nar.table(st, /*as_result=*/true);
    nar.record("sweep", sweep_m);
    nar.say(_("slope: least-squares fit of log(time) on log(n) for n ≥ 1024 (best of a few runs each; other programs "
              "on a busy machine can push a slope away from its cost). work: counted buffers at the largest n measured."));
    nar.say(_("err vs full: max |variant − full attention| at the largest n where full attention ran (Q, K, V ~ N(0, 1))."));
    for (const auto& s : sweep) {  // full attention's slope above 2: time per score element grows with n
      if (s.name != "full" || std::isnan(s.slope) || s.slope <= 2.1) continue;
      const VariantPoint* lo = nullptr;
      const VariantPoint* hi = nullptr;
      for (const auto& p : s.points)
        if (!p.skipped && p.n >= 1024) {
          if (lo == nullptr) lo = &p;
          hi = &p;
        }
      if (lo && hi && hi != lo)
        nar.result(_f("full attention's slope {:.2f} is above 2: time per score element {:.2f} ns at n = {}, "
                               "{:.2f} ns at n = {}", s.slope, lo->seconds * 1e9 / (double(lo->n) * lo->n), lo->n,
                               hi->seconds * 1e9 / (double(hi->n) * hi->n), hi->n));
      nar.say(_("the work is n² either way; each element costs more once the n×n scores and weights (work MiB) no "
              "longer fit in the CPU's caches and stream through main memory."));
    }
    nar.code("attn/studies/efficient_sweep.hpp: sweep_efficient_variants");
    nar.why(_("random inputs spread attention over every key, the worst case for local patterns: their error is the mass they drop."));

    double lo_slope = INFINITY, hi_slope = -INFINITY;
    for (const auto& s : sweep)
      if ((s.name == "window" || s.name == "dilated" || s.name == "longformer" || s.name == "bigbird") && !std::isnan(s.slope))
        lo_slope = std::min(lo_slope, s.slope), hi_slope = std::max(hi_slope, s.slope);
    nar.takeaway({std::isfinite(lo_slope)
                      ? _f("Window, dilated, Longformer and BigBird cost O(n) (slopes {:.2f}–{:.2f} here) but change the "
                           "answer: they drop keys.", lo_slope, hi_slope)
                      : _("Window, dilated, Longformer and BigBird cost O(n) but change the answer: they drop keys."),
                  _("Linear attention is O(n) and a different model; tiled attention is exact at O(n²) time and O(tile) memory."),
                  _("The KV cache turns decoding from quadratic recomputation into one projection per token; GQA/MQA shrink it.")});
  });
}
