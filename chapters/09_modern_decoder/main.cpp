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
// rmsnorm_y layernorm_y next_logits next_probs; manifest.json also holds "config", "rope_pairing"
// and "validation" (the held-out files, windows and figures step 7 prints).
// Each step: one study (attn/studies/decoder_study.hpp) measures, one report prints it
// (attn/present/decoder_report.hpp).

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/models/decoder_lm_generate.hpp"
#include "attn/present/cli.hpp"
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
      ->check(finite_range(0.0, 5.0));
  ch.app().add_option("--top-k", top_k, _("keep the k most probable tokens; 0 = all"))->capture_default_str()
      ->check(CLI::Range(0, 512));
  ch.app().add_option("--top-p", top_p, _("nucleus: keep the most probable tokens up to this mass"))->capture_default_str()
      ->check(finite_range(0.01, 1.0));
  ch.app().add_flag("--bench", bench, _("time generation with and without the KV cache for 16 … 512 tokens"));
  CLI::Option* train_flag = ch.app().add_flag("--train", train, _("relearn the tokenizer and the model; rewrites data/ch09/"));
  ch.app().add_option("--train-steps", setup.train.steps, _("AdamW steps with --train"))->capture_default_str()
      ->check(CLI::Range(1, 100000));
  ch.app().add_option("--train-batch", setup.train.batch, _("windows of 256 tokens per step with --train"))
      ->capture_default_str()->check(CLI::Range(1, 256));
  ch.app().add_option("--train-threads", train_threads,
                      _("OpenBLAS threads for --train (1 rewrites the shipped weights bit for bit)"))
      ->capture_default_str()->check(CLI::Range(1, 2));
  ch.app().add_option("--corpus", setup.bible_dump, _("with --train: the Bible, one verse a line after its reference "
                                                  "(\"Ge1:1 In the …\"), as `bible -f Gen1:1-Rev22:21 > FILE` writes "
                                                  "it (Debian's bible-kjv); default data/ch09/kjv_bible.txt, which "
                                                  "scripts/install-deps --corpus makes"))
      ->type_name("FILE")->needs(train_flag);  // the lesson loads the shipped model: alone it would be ignored
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
      setup.out_dir = data_dir() + "/ch09";  // made by the training, after its checks
      setup.blas_threads = train_threads;  // another count sums in another order: the last digits differ
      setup.train.seed = nar.options().seed;
      lm = train_tiny_lm_narrated(nar, setup);
    } else {
      lm = load_tiny_lm();
    }
    const DecoderLM& m = lm.model;
    nar.manifest_field("config", config_json(m.cfg));
    nar.manifest_field("rope_pairing", "\"interleaved\"");
    const std::vector<int> prompt_ids = bpe_encode(lm.tokenizer, prompt);
    if (prompt_ids.size() + n_tokens > m.cfg.context)
      throw std::invalid_argument(_f("--prompt is {} tokens; with --tokens {} that exceeds the context of {}",
                                     prompt_ids.size(), n_tokens, m.cfg.context));
    const SamplerConfig sc{temperature, top_k, top_p};
    const std::uint64_t seed = nar.options().seed;
    DecoderFindings f;  // what the takeaway sums up

    nar.step(_("A byte-level BPE (byte-pair encoding) tokenizer"), "(a, b) → ab, × 256",
             _("Sennrich et al. 2016; byte-level: Radford et al. 2019 (GPT-2)"));
    report_tokenizer(nar, lm, 8, "In the beginning God created the heaven and the earth.");

    nar.step(_("RMSNorm vs LayerNorm"), "x/√(mean(x²)+ε)·γ  vs  (x−μ)/√(σ²+ε)·γ+β", "Zhang & Sennrich 2019");
    report_norms(nar, f.norms = norm_study(m, prompt_ids));

    nar.step(_("SwiGLU vs ReLU"), "(silu(x·W_gate) ⊙ x·W_up)·W_down", "Shazeer 2020");
    report_ffns(nar, f.ffn = ffn_cost(m.cfg.d_model, m.cfg.d_ff, 4096, seed));

    nar.step(_("RoPE vs sinusoidal under a shift"), "(R_m q)·(R_n k) = q·R_{n−m} k", "Su et al. 2021");
    report_shift(nar, f.shift = rope_shift_study(m, prompt_ids));

    nar.step(_("GQA vs MHA: the cache"), "bytes/token = 2·layers·G·d_k·bytes", "Ainslie et al. 2023");
    report_kv_heads(nar, f.caches = kv_cache_table(m.cfg, parameter_count(m)));

    nar.step(_("The LLaMA-style block"), "x' = x + Attn(RMSNorm(x)),  y = x' + SwiGLU(RMSNorm(x'))",
             "Touvron et al. 2023");
    report_block(nar, m, decoder_lm_trace(m, prompt_ids), token_labels(lm.tokenizer, prompt_ids));

    nar.step(_("The trained model: validation loss"), "bits/byte = loss · tokens / (bytes · ln 2)");
    f.validation = validation_figures(lm);
    f.parameters = parameter_count(m);
    report_training(nar, lm, f.validation);
    nar.manifest_field("validation", validation_manifest(f.validation));

    nar.step(_("Generation"), _("p = softmax(z/τ), top-k, top-p, draw"), "Holtzman et al. 2020");
    report_sampling(nar, lm, next_token_study(m, prompt_ids, sc), sc);
    report_decoding(nar, lm, prompt, f.decoding = compare_decoding(m, prompt_ids, n_tokens, sc, seed), sc);

    nar.step(_("The KV cache, and a paged cache"), _("cost per step = O(d_model²) + O(t·d_model)"), "Kwon et al. 2023");
    report_kv_cache(nar, f.kv = kv_cache_study(lm, prompt_ids, sc, seed, bench), m.cfg.context, bench);
    report_paged(nar, f.paged = paged_study(lm, sc, seed));

    nar.takeaway(decoder_takeaway(f));
  });
}
