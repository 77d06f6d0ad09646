// Chapter 09 · A modern decoder — the LLaMA-style block (Pre-Norm, RMSNorm, SwiGLU, RoPE, GQA) built
// from the core's parts, each beside what it replaced; a ~1M-parameter language model trained on
// the King James Bible with a byte-level BPE tokenizer; generation, the KV cache and a paged cache.
//   build/bin/09_modern_decoder                    the lesson from the shipped model (under 10 s)
//   build/bin/09_modern_decoder --prompt "And Jesus said" --tokens 80 --temperature 0.7 --seed 3
//   build/bin/09_modern_decoder --bench            the KV-cache sweep to 512 tokens
//   build/bin/09_modern_decoder --train            relearn tokenizer + model (scripts/install-deps --corpus)
//   build/bin/09_modern_decoder --export out       block 0 in full, attn_weights, manifest "config"
// Export names: block0_input block0_output attn_norm_weight W_Q W_K W_V W_O ffn_norm_weight W_gate
// W_up W_down attn_weights (layers × heads × T × T, for the prompt) attn_last_layer_head0 rmsnorm_x
// rmsnorm_y layernorm_y next_probs; manifest.json also holds "config" and "rope_pairing".
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/models/decoder_lm_generate.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/progress.hpp"
#include "attn/present/decoder_report.hpp"
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

using namespace attn;

int main(int argc, char** argv) {
  ChapterApp ch("09", /*default_seed=*/9, /*total_steps=*/9);
  std::string prompt = "And God said";
  std::size_t n_tokens = 60, top_k = 0;
  float temperature = 0.8f, top_p = 0.95f;
  bool bench = false, train = false;
  int train_threads = 1;
  TinyLmTrainSetup setup;
  setup.train.steps = 1500;  // the shipped model's recipe (1500 × 8 windows; see README for the time)
  setup.train.batch = 8;
  ch.app().add_option("--prompt", prompt, _("text the model continues"))->capture_default_str()
      ->check([](const std::string& s) { return s.empty() ? std::string(_("must not be empty")) : std::string(); });
  ch.app().add_option("--tokens", n_tokens, _("tokens to generate (prompt + tokens ≤ 256)"))->capture_default_str()
      ->check(CLI::Range(1, 250));
  ch.app().add_option("--temperature", temperature, _("softmax temperature; 0 = greedy"))->capture_default_str()
      ->check(CLI::Range(0.0, 5.0));
  ch.app().add_option("--top-k", top_k, _("keep the k most probable tokens; 0 = all"))->capture_default_str()
      ->check(CLI::Range(0, 512));
  ch.app().add_option("--top-p", top_p, _("nucleus: keep the most probable tokens up to this mass"))->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  ch.app().add_flag("--bench", bench, _("time generation with and without the KV cache for 16 … 512 tokens"));
  ch.app().add_flag("--train", train, _("relearn the tokenizer and the model; rewrites data/ch09/"));
  ch.app().add_option("--train-steps", setup.train.steps, _("AdamW steps with --train"))->capture_default_str()
      ->check(CLI::Range(1, 100000));
  ch.app().add_option("--train-batch", setup.train.batch, _("windows of 256 tokens per step with --train"))
      ->capture_default_str()->check(CLI::Range(1, 256));
  ch.app().add_option("--train-threads", train_threads,
                      _("OpenBLAS threads for --train (1 rewrites the shipped weights bit for bit, and is faster here)"))
      ->capture_default_str()->check(CLI::Range(1, 2));
  ch.app().add_option("--corpus", setup.bible_dump, _("the Bible as `bible -f` prints it (default data/ch09/kjv_bible.txt)"));
  // A prompt that leaves no room for --tokens is a usage error (exit 2), found once the flags are read.
  ch.app().callback([&] {
    if (train) return;
    std::size_t n = 0;
    try {
      if (auto tok_file = find_data_file("ch09/tokenizer.json")) n = bpe_encode(bpe_load(*tok_file), prompt).size();
    } catch (const BpeError&) {
      return;  // a broken tokenizer file is reported, with its name, when the run loads it
    }
    if (n + n_tokens > 256)
      throw CLI::ValidationError("--prompt", _f("{} tokens + --tokens {} exceed the context of 256", n,
                                                         n_tokens));
  });
  ch.set_question(_("Question: what did decoders change after 2017 — and can a 1M-parameter one learn to write?"));

  return ch.run(argc, argv, [&](Narrator& nar) {
    // ------------------------------------------------------------------ the shipped model (or --train)
    TinyLm lm;
    if (train) {
      if (setup.bible_dump.empty()) {
        auto p = find_data_file("ch09/kjv_bible.txt");
        if (!p) throw std::runtime_error(_("no corpus: run scripts/install-deps --corpus (Debian's bible-kjv), "
                                           "or pass --corpus FILE"));
        setup.bible_dump = *p;
      }
      setup.out_dir = data_dir() + "/ch09";
      std::filesystem::create_directories(setup.out_dir);
      setup.blas_threads = train_threads;  // another count sums in another order: the last digits differ
      setup.train.seed = nar.options().seed;
      ProgressBar bar(std::int64_t(setup.train.steps), !nar.quiet() && stderr_is_terminal());
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
      lm = load_tiny_lm(setup.out_dir);
    } else {
      lm = load_tiny_lm();
    }
    const DecoderLM& m = lm.model;
    const DecoderLMConfig& cfg = m.cfg;
    nar.manifest_field("config", config_json(cfg));
    nar.manifest_field("rope_pairing", "\"interleaved\"");
    const std::vector<int> prompt_ids = bpe_encode(lm.tokenizer, prompt);
    if (prompt_ids.size() + n_tokens > cfg.context)
      throw std::invalid_argument(_f("--prompt is {} tokens; with --tokens {} that exceeds the context of {}",
                                              prompt_ids.size(), n_tokens, cfg.context));

    // ------------------------------------------------------------------ 1. tokenizer
    nar.step(_("A byte-level BPE tokenizer"), _("merge the most frequent pair, 256 times"), "Sennrich et al. 2016");
    show_bpe_merges(nar, lm.tokenizer, 8);
    show_bpe_split(nar, lm.tokenizer, "In the beginning God created the heaven and the earth.");
    const double bytes_per_token = double(lm.valid_text.size()) / double(lm.valid_tokens.size());
    nar.result(_f("held-out text: {} bytes -> {} tokens = {:.2f} bytes per token (bytes alone: 1.00)",
                           lm.valid_text.size(), lm.valid_tokens.size(), bytes_per_token));
    nar.code("attn/data/bpe.hpp: bpe_train, bpe_encode");
    nar.why(_f("a frequent word becomes one token, so 256 tokens of context cover ~{:.0f} bytes of text; "
                        "any byte still encodes.", 256 * bytes_per_token));

    // ------------------------------------------------------------------ 2-5. the block's pieces
    compare_norms(nar, m, prompt_ids);
    compare_ffns(nar, cfg);
    compare_positions(nar, m, prompt_ids);
    compare_kv_heads(nar, cfg);

    // ------------------------------------------------------------------ 6. the block, every shape
    nar.step(_("The LLaMA-style block, every shape"), "x + Attn(RMSNorm(x)) + SwiGLU(…)", "Touvron et al. 2023");
    const DecoderLMTrace trace = decoder_lm_trace(m, prompt_ids);
    show_block_shapes(nar, m, prompt_ids.size());
    export_block0(nar, m, trace, token_labels(lm.tokenizer, prompt_ids));
    nar.code("attn/models/decoder_lm.hpp: decoder_lm_forward, decoder_lm_trace");
    nar.why(_f("every shape follows from d = {}, {} query heads, {} K/V heads and d_ff = {}; --export writes block 0's "
               "tensors, so each product can be checked by hand.", cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_ff));

    // ------------------------------------------------------------------ 7. training and validation
    nar.step(_("The trained model: validation loss"), "bits/byte = loss · tokens / (bytes · ln 2)");
    const ValidationFigures vf = report_training(nar, lm);

    // ------------------------------------------------------------------ 8. generation
    nar.step(_("Generation"), _("softmax(z/τ), top-k, top-p, draw"), "Holtzman et al. 2020");
    const SamplerConfig sc{temperature, top_k, top_p};
    show_sampling_step(nar, lm, prompt_ids, sc);
    const std::vector<int> gen = generate_tokens(m, prompt_ids, n_tokens, sc, nar.options().seed);
    nar.result(_f("seed {}, τ = {}, top-k = {}, top-p = {}:", nar.options().seed, temperature,
                           top_k == 0 ? std::string(_("off")) : std::to_string(top_k), top_p));
    print_generated(nar, prompt + bpe_decode(lm.tokenizer, gen));

    // ------------------------------------------------------------------ 9. KV cache and paged cache
    nar.step(_("The KV cache, and a paged cache"), _("a decode step costs O(d²) + O(t·d)"), "Kwon et al. 2023");
    const double speedup = kv_cache_study(nar, lm, prompt_ids, sc, nar.options().seed, bench);
    const double paged_saving = paged_cache_study(nar, lm, sc, nar.options().seed);

    nar.takeaway({
        _f("{} parameters: {:.3f} nats/token, {:.3f} bits/byte on held-out chapters.", parameter_count(m),
                    vf.loss, vf.bits_per_byte),
        _f("KV cache: {:.1f}× faster at the longest length, same tokens; paged: {:.1f}× less memory.",
                    speedup, paged_saving),
        _("RMSNorm, SwiGLU at 2/3 width, RoPE, shared K/V heads: each measured against what it replaced.")});
    nar.finish();
  });
}
