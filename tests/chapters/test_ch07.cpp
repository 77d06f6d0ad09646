// Chapter 07 end to end: every step runs with shapes and token labels; the export satisfies the
// contract (exact names) and the tiny example recomputes from its .npy files alone (Q = Y·W_Q,
// K = X·W_K, V = X·W_V, scores, weights, output, in double); the image example's weights recompute
// and its printed count matches them; the trained-model step's alignment agreement is recounted
// from the exported weights and the corpus's true alignment; bad flags exit 2, a missing model 1.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "attn/attention/alignment.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/data_files.hpp"
#include "attn/data/npy.hpp"
#include "attn/models/seq2seq_train.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/data/safetensors.hpp"
#include "attn/present/number_format.hpp"
#include "attn/present/terminal.hpp"
#include "attn/studies/image_conditioning.hpp"
#include "attn/studies/transformer_claims.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
const char* kProgram07 = "07_cross_attention";

// The first capture group of `pattern` in `text`, or "" (fails the test).
std::string capture(const std::string& text, const std::string& pattern) {
  std::smatch m;
  const bool found = std::regex_search(text, m, std::regex(pattern));
  CHECK_MESSAGE(found, "no line matches " << pattern);
  return found ? m[1].str() : std::string();
}

// Every (layer, head) row of step 9's table, recounted from the exported cross_weights (L, H, T, S)
// against Bahdanau's exported weights and the corpus's true alignment; rows sum to 1.
void check_agreement_table(const std::string& out, const NpyArray& cw, const Mat& bahdanau, const SentencePair& pair) {
  REQUIRE(cw.shape.size() == 4);
  const std::size_t L = cw.shape[0], H = cw.shape[1], T = pair.tgt.size(), S = pair.src.size();
  REQUIRE(cw.shape == Shape{L, H, T, S});
  const std::vector<int> b_align = argmax_alignment(bahdanau);
  std::string perfect;
  for (std::size_t l = 0; l < L; ++l) {
    std::size_t all_words = 0;
    for (std::size_t h = 0; h < H; ++h) {
      Mat m = Mat::from_shape({T, S});
      for (std::size_t i = 0; i < T; ++i) {
        double row = 0.0;
        for (std::size_t j = 0; j < S; ++j) row += (m(i, j) = float(cw.data[((l * H + h) * T + i) * S + j]));
        CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
      }
      const AlignmentScore vb = alignment_hits(argmax_alignment(m), b_align);
      const AlignmentScore vt = alignment_hits(argmax_alignment(m), pair.alignment);
      const std::string row = fmt::format("\\n *{} +{} +{}/{} \\(\\d+\\.\\d%\\) +{}/{} \\(", l, h, vb.hits, vb.total,
                                          vt.hits, vt.total);
      CHECK_MESSAGE(std::regex_search(out, std::regex(row)), "no table row " << row);
      all_words += vt.hits == vt.total;
    }
    perfect += fmt::format("{}layer {}: {} of {}", l ? ", " : "", l, all_words, H);
  }
  const std::string joined = std::regex_replace(out, std::regex("\n +"), " ");  // narration may wrap the line
  const std::size_t at = joined.find("at every word: " + perfect);
  CHECK_MESSAGE(at != std::string::npos, "expected " << perfect);
  if (at != std::string::npos) CHECK(joined.compare(at + 15 + perfect.size(), 1, ",") != 0);  // no further layer
}

// The test pair whose source the chapter printed ("source:    …").
const SentencePair& printed_pair(const std::string& out, const ToyCorpus& corpus) {
  const std::string source = capture(out, "source: +([a-z ]+)\\n");
  for (const auto& p : corpus.test) {
    std::string s;
    for (const auto& w : p.src) s += (s.empty() ? "" : " ") + w;
    if (s == source) return p;
  }
  FAIL("the printed source is not a test sentence: " << source);
  return corpus.test.front();
}
}  // namespace

TEST_CASE("chapter 07 runs every step with shapes and token labels") {
  const RunResult r = run_program(kProgram07, {"--no-color"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  for (int s = 1; s <= 10; ++s) CHECK(r.has("Step " + std::to_string(s) + "/10"));
  CHECK(r.has("Chapter 07 · Cross-attention"));
  CHECK(r.has("X (4×8)"));
  CHECK(r.has("Y (3×8)"));
  CHECK(r.has("Q (3×4)"));
  CHECK(r.has("K (4×4)"));
  CHECK(r.has("scores (3×4)"));
  CHECK(r.has("weights (3×4) heatmap"));
  CHECK(r.has("          the      cat       is sleeping"));  // source words over the columns
  CHECK(r.has("weights are 3×4 (target × source); row sums: min 1.000000, max 1.000000"));
  CHECK(r.has("max |Δweights| = 0.0e+00 (weights 3×3), max |Δoutput| = 0.0e+00 (output 3×4): the same computation"));
  CHECK(r.has("padding_mask (3×6)"));
  CHECK(r.has("legend: '█' visible (mask 0: a real word), '·' masked (mask −∞: padding, weight exactly 0)"));
  CHECK(r.has("image_weights (64×5)"));
  CHECK(r.has("Takeaway"));
  // Step 9 shows the shipped Transformer when there is one, and says plainly when there is none.
  if (fs::exists(fs::path(ATTN_DATA_DIR) / "ch08" / "transformer_post.safetensors")) {
    CHECK(r.has("the best of "));
    CHECK(r.has("picked after the fact"));
    CHECK(r.has("test sentences of 8 to 12 words"));
    CHECK_FALSE(r.has("not shipped yet"));
  } else {
    CHECK(r.has("chapter 08's trained Transformer is not shipped yet"));
  }
  for (const char* s_len : {"3×2", "3×4", "3×8", "3×16", "3×32", "3×60"}) CHECK_MESSAGE(r.has(s_len), "no row with weights " << s_len);
  CHECK(r.out.find('\x1b') == std::string::npos);
  // No printed line is wider than 100 columns.
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(display_width(line) <= 100, line);
}

TEST_CASE("chapter 07 --export: the tiny example recomputes from its .npy files") {
  const fs::path dir = scratch_dir("ch07-export");
  const RunResult r = run_program(kProgram07, {"--quiet", "--export", dir.string(), "--seed", "11", "--source",
                                             "a b c d e", "--target", "x y", "--d-k", "3"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream mf(dir / "manifest.json");
  REQUIRE(mf.good());
  const auto j = nlohmann::json::parse(mf);
  CHECK(j["chapter"] == "07");
  CHECK(j["seed"] == 11);
  std::set<std::string> names;
  for (const auto& t : j["tensors"]) {
    names.insert(t["name"].get<std::string>());
    CHECK(read_npy((dir / t["file"].get<std::string>()).string()).shape == t["shape"].get<Shape>());
  }
  for (const char* n : {"Y", "X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "weights", "output", "image_latent", "image_text",
                        "image_W_Q", "image_W_K", "image_W_V", "image_weights", "image_output", "bahdanau_weights"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << n);
  auto load = [&](const std::string& n) { return npy_to_mat(read_npy((dir / (n + ".npy")).string()), n); };
  const Mat Y = load("Y"), X = load("X"), Q = load("Q"), K = load("K"), V = load("V");
  CHECK(shape_of(Y) == Shape{2, 8});
  CHECK(shape_of(X) == Shape{5, 8});
  CHECK(max_abs_diff(Q, gemm_reference(Y, load("W_Q"))) < 1e-5);  // queries from the target …
  CHECK(max_abs_diff(K, gemm_reference(X, load("W_K"))) < 1e-5);  // … keys and values from the source
  CHECK(max_abs_diff(V, gemm_reference(X, load("W_V"))) < 1e-5);
  const Mat S = load("scores");
  REQUIRE(shape_of(S) == Shape{2, 5});
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t k = 0; k < 5; ++k) {
      double dot = 0.0;
      for (std::size_t c = 0; c < 3; ++c) dot += double(Q(i, c)) * K(k, c);
      CHECK(std::abs(dot / std::sqrt(3.0) - S(i, k)) < 1e-5);
    }
  CHECK(max_abs_diff(load("weights"), softmax_reference(S)) < 1e-6);
  CHECK(max_abs_diff(load("output"), attention_reference(Q, K, V)) < 1e-5);

  // The image example: 64 queries from the latent, 5 keys and values from the text.
  const Mat L = load("image_latent"), E = load("image_text"), IW = load("image_weights");
  REQUIRE(shape_of(IW) == Shape{64, 5});
  const Mat iq = xt::cast<float>(gemm_reference(L, load("image_W_Q"))), ik = xt::cast<float>(gemm_reference(E, load("image_W_K")));
  const Mat iv = xt::cast<float>(gemm_reference(E, load("image_W_V")));
  CHECK(max_abs_diff(IW, softmax_reference(xt::cast<float>(gemm_reference(iq, ik, Op::N, Op::T)) / std::sqrt(float(iq.shape(1))))) < 1e-4);
  CHECK(max_abs_diff(load("image_output"), attention_reference(iq, ik, iv)) < 1e-4);
  // The printed count is the number of positions whose argmax is the painted word.
  const ImageConditioning im = image_conditioning_example(11);
  const std::size_t hits = alignment_hits(argmax_alignment(IW), im.layout).hits;
  CHECK(capture(r.out, "(\\d+) of 64 positions read most from the word painted there") == std::to_string(hits));

  // Bahdanau's alignment of the chosen test sentence: rows sum to 1; the agreement printed is recounted.
  const Mat B = load("bahdanau_weights");
  for (std::size_t i = 0; i < B.shape(0); ++i) {
    double row = 0.0;
    for (std::size_t k = 0; k < B.shape(1); ++k) row += B(i, k);
    CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
  }
  fs::remove_all(dir);
}

TEST_CASE("chapter 07: the trained models' agreement is recounted from the export and the corpus") {
  const fs::path dir = scratch_dir("ch07-trained");
  const RunResult r = run_program(kProgram07, {"--no-color", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
  const SentencePair& pair = printed_pair(r.out, corpus);
  CHECK(pair.src.size() >= 8);
  CHECK(pair.src.size() <= 12);
  const Mat B = npy_to_mat(read_npy((dir / "bahdanau_weights.npy").string()), "bahdanau_weights");
  REQUIRE(shape_of(B) == Shape{pair.tgt.size(), pair.src.size()});
  const AlignmentScore a = alignment_hits(argmax_alignment(B), pair.alignment);
  CHECK(r.has(fmt::format("agrees with the true alignment at {}/{} (", a.hits, a.total)));
  if (fs::exists(dir / "cross_weights.npy")) {  // the shipped Transformer (step 9)
    check_agreement_table(r.out, read_npy((dir / "cross_weights.npy").string()), B, pair);
    // which model and how it was trained: what the shipped file's metadata says
    const auto path = find_data_file("ch08/transformer_post.safetensors");
    REQUIRE(path.has_value());
    Metadata md;
    load_transformer(*path, nullptr, &md);
    CHECK(r.has(fmt::format("(d_model {}, {} encoder and {} decoder layers)", md.at("d_model"), md.at("enc_layers"),
                            md.at("dec_layers"))));
    CHECK(r.has(fmt::format("seed {}, {} steps of batch {} in {} s on the machine that trained it, kept at step {} "
                            "(validation BLEU {})", md.at("seed"), md.at("steps"), md.at("batch"),
                            md.at("train_seconds"), md.at("best_step"), md.at("valid_bleu"))));
    CHECK(r.has(md.at("norm") == "post" ? "chapter 08's Post-Norm Transformer" : "chapter 08's Pre-Norm Transformer"));
    // both models' sizes and recorded BLEU beside the alignment verdict, the two set against each other
    Metadata bmd;
    read_safetensors(*find_data_file("ch01/bahdanau.safetensors"), &bmd);
    CHECK(r.has(fmt::format("parameters: the Transformer {}, Bahdanau ", format_count(parameter_count(
                                load_transformer(*path, nullptr, nullptr))))));
    // like with like: each file's kept (best-on-validation) step printed beside its BLEU
    CHECK(r.has(fmt::format("as their files record it: {:.2f} (step {} of {}) and {:.2f} (step {} of {})",
                            std::stod(md.at("valid_bleu")), md.at("best_step"), md.at("steps"),
                            std::stod(bmd.at("valid_bleu")), bmd.at("best_step"), bmd.at("steps"))));
    const bool t_more = r.has("the Transformer aligns more words"), b_more = r.has("Bahdanau aligns more words");
    if ((t_more && std::stod(md.at("valid_bleu")) < std::stod(bmd.at("valid_bleu"))) ||
        (b_more && std::stod(bmd.at("valid_bleu")) < std::stod(md.at("valid_bleu")))) {
      const Metadata& better = t_more ? md : bmd;  // the better aligner's file: did it keep its last step?
      CHECK(r.has(better.at("best_step") == better.at("steps")
                      ? "so it may still have been improving: this one pair cannot tell alignment from training budget"
                      : "in this one pair, aligning more did not mean translating better"));
    }
    CHECK_FALSE(r.has("aligning more is not translating better"));  // no general rule from one pair
    CHECK(r.has("both BLEUs: greedy translations of the toy corpus's validation split"));
    // the recorded training time beside the same training retrained alone (README.md)
    const double alone = retrained_alone_seconds(md.at("norm"));
    if (alone > 0.0 && std::stod(md.at("train_seconds")) / alone >= kRecordedWaited)
      CHECK(r.has(fmt::format("retrained alone on the idle machine took {:.1f} s, recorded / alone = {:.1f}×", alone,
                              std::stod(md.at("train_seconds")) / alone)));
  } else {
    CHECK(r.has("not shipped yet"));
  }
  fs::remove_all(dir);
}

TEST_CASE("chapter 07 step 9 on a Transformer given by --transformer: cross_weights and the agreement table") {
  // An untrained model (the plumbing does not depend on training): the exported weights have the
  // shape (layers, heads, T, S), their rows sum to 1, and every row of the table recounts.
  const fs::path dir = scratch_dir("ch07-transformer");
  fs::create_directories(dir);
  const ToyCorpus corpus = make_toy_corpus(chapter_corpus_config());
  TransformerModelConfig cfg;
  cfg.src_vocab = corpus.source_vocab.size(), cfg.tgt_vocab = corpus.target_vocab.size();
  cfg.d_model = 16, cfg.n_heads = 2, cfg.d_ff = 32, cfg.enc_layers = 1, cfg.dec_layers = 3;
  Rng rng(5);
  const std::string model = (dir / "untrained.safetensors").string();
  save_transformer(model, transformer_init(cfg, rng));
  const fs::path out = dir / "export";
  const RunResult r = run_program(kProgram07, {"--no-color", "--transformer", model, "--export", out.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.has("3 decoder layers × 2 heads;"));
  CHECK(r.has("(d_model 16, 1 encoder and 3 decoder layers)"));  // from the file's config
  CHECK(r.has("its file records no training run"));              // saved untrained: no steps, no seed
  CHECK_FALSE(r.has("how it was trained"));
  CHECK(r.has("L2H1"));  // layers and heads numbered from 0, as in chapter 04
  CHECK_FALSE(r.has("not shipped yet"));
  const SentencePair& pair = printed_pair(r.out, corpus);
  const NpyArray cw = read_npy((out / "cross_weights.npy").string());
  CHECK(cw.shape == Shape{3, 2, pair.tgt.size(), pair.src.size()});
  check_agreement_table(r.out, cw, npy_to_mat(read_npy((out / "bahdanau_weights.npy").string()), "bahdanau_weights"), pair);
  fs::remove_all(dir);
}

TEST_CASE("chapter 07 bad flags exit 2 and name the flag; a missing model exits 2 naming the file, printing nothing") {
  struct Case { std::vector<std::string> args; const char* mentions; };
  const std::vector<Case> cases = {
      {{"--seed", "abc"}, "--seed"},
      {{"--source", "lonely"}, "--source"},
      {{"--target", ""}, "--target"},
      {{"--d-k", "0"}, "--d-k"},
      {{"--d-model", "65"}, "--d-model"},
      {{"--no-such-flag"}, "--no-such-flag"},
  };
  for (const auto& c : cases) {
    const RunResult r = run_program(kProgram07, c.args);
    CAPTURE(c.args[0]);
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.err_has(c.mentions), "stderr was: " << r.err);
    CHECK(r.out.empty());
  }
  // Checked while the command line is parsed: no step (and no header) is printed before the error.
  for (const char* flag : {"--bahdanau", "--transformer"}) {
    CAPTURE(flag);
    const RunResult m = run_program(kProgram07, {"--no-color", flag, "/nonexistent/m.safetensors"});
    CHECK(m.status == 2);
    CHECK_MESSAGE(m.err_has(std::string(flag) + ": no such file: /nonexistent/m.safetensors"), "stderr was: " << m.err);
    CHECK(m.out.empty());
  }
  // A file that is there but is no model: refused before step 1, not after eight steps.
  const fs::path dir = scratch_dir("ch07-not-a-model");
  fs::create_directories(dir);
  const std::string bogus = (dir / "t.safetensors").string();
  std::ofstream(bogus) << "not a model";
  const RunResult t = run_program(kProgram07, {"--no-color", "--transformer", bogus});
  CHECK(t.status == 1);
  CHECK_MESSAGE(t.err_has(bogus), "stderr was: " << t.err);
  CHECK_FALSE(t.has("Step 1/"));
  fs::remove_all(dir);
}

TEST_CASE("chapter 07 --quiet keeps the results; the run is deterministic for a seed") {
  const RunResult q = run_program(kProgram07, {"--quiet"});
  REQUIRE(q.status == 0);
  CHECK_FALSE(q.has("Step 1/"));
  CHECK(q.has("row sums"));
  CHECK(q.has("of 64 positions read most"));
  CHECK(q.has("Takeaway"));
  const RunResult a = run_program(kProgram07, {"--no-color", "--seed", "5"});
  const RunResult b = run_program(kProgram07, {"--no-color", "--seed", "5"});
  CHECK(a.out == b.out);
}

TEST_CASE("chapter 07's printed figures agree with its export (steps 6, 7, 8, 9 and 10)") {
  // Each figure recomputed here from the exported tensors and the manifest alone.
  const fs::path dir = scratch_dir("ch07-figures");
  const RunResult r = run_program(kProgram07, {"--no-color", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string joined = std::regex_replace(r.out, std::regex("\n +"), " ");  // narration may wrap
  auto has = [&](const std::string& s) {
    CHECK_MESSAGE(joined.find(s) != std::string::npos, "not printed: " << s);
  };
  auto load = [&](const std::string& n) { return npy_to_mat(read_npy((dir / (n + ".npy")).string()), n); };
  std::ifstream mf(dir / "manifest.json");
  const auto j = nlohmann::json::parse(mf);

  // Step 6: every row of length_table from length_weights (zero beyond each S); sources named.
  const Mat table = load("length_table");
  const NpyArray lw = read_npy((dir / "length_weights.npy").string());
  REQUIRE(lw.shape.size() == 3);
  REQUIRE(j["length_sources"].size() == table.shape(0));
  for (std::size_t i = 0; i < table.shape(0); ++i) {
    const auto s = std::size_t(table(i, 0));
    CHECK(j["length_sources"][i].size() == s);
    double lo = 1e9, hi = -1e9, largest = 0.0;
    for (std::size_t t = 0; t < lw.shape[1]; ++t) {
      double row = 0.0;
      for (std::size_t k = 0; k < lw.shape[2]; ++k) {
        const double w = lw.data[(i * lw.shape[1] + t) * lw.shape[2] + k];
        if (k >= s) CHECK(w == 0.0);
        row += w, largest = std::max(largest, w);
      }
      lo = std::min(lo, row), hi = std::max(hi, row);
    }
    CHECK(std::abs(lo - table(i, 1)) < 1e-6);
    CHECK(std::abs(hi - table(i, 2)) < 1e-6);
    const std::string a = fmt::format("{:.4f}", lo), b = fmt::format("{:.4f}", hi);
    CHECK(r.has(a == b ? "all " + a : a + " to " + b));
    CHECK(r.has(fmt::format("{:.3f}", largest)));
  }

  // Step 7: the masked weights are 0 on '<pad>'; the masked output is attention over the real words.
  const Mat Y = load("Y"), Xp = load("padding_X"), M = load("padding_mask"), PW = load("padding_weights");
  const Mat Wq = load("W_Q"), Wk = load("W_K"), Wv = load("W_V");
  std::size_t valid = 0;
  while (valid < M.shape(1) && M(0, valid) == 0.0f) ++valid;
  REQUIRE(valid == 4);
  for (std::size_t t = 0; t < PW.shape(0); ++t)
    for (std::size_t k = valid; k < PW.shape(1); ++k) CHECK(PW(t, k) == 0.0f);
  const Mat q = xt::cast<float>(gemm_reference(Y, Wq));
  const Mat k_all = xt::cast<float>(gemm_reference(Xp, Wk)), v_all = xt::cast<float>(gemm_reference(Xp, Wv));
  const Mat k_real = xt::view(k_all, xt::range(0, valid), xt::all()), v_real = xt::view(v_all, xt::range(0, valid), xt::all());
  const Mat unpadded = xt::cast<float>(attention_reference(q, k_real, v_real));
  CHECK(max_abs_diff(load("unpadded_output"), unpadded) < 1e-5);
  CHECK(max_abs_diff(load("padding_output"), unpadded) < 1e-5);
  const Mat UW = load("unmasked_weights"), UO = load("unmasked_output");
  CHECK(max_abs_diff(UO, attention_reference(q, k_all, v_all)) < 1e-5);
  double share = 0.0;
  for (std::size_t t = 0; t < UW.shape(0); ++t) {
    double s = 0.0;
    for (std::size_t k = valid; k < UW.shape(1); ++k) s += UW(t, k);
    share = std::max(share, s);
  }
  has(fmt::format("without it: up to {:.1f}% of a row's weight lands on '<pad>', and max |Δoutput| against the "
                  "unpadded source = {:.2f}",
                  100.0 * share, max_abs_diff(UO, unpadded)));

  // Step 8: the count and the mean weight on the painted word, from image_weights and image_layout.
  const Mat IW = load("image_weights");
  const Vec layout = npy_to_vec(read_npy((dir / "image_layout.npy").string()), "image_layout");
  std::size_t hits = 0;
  double own = 0.0;
  const std::vector<int> argmax = argmax_alignment(IW);
  for (std::size_t p = 0; p < IW.shape(0); ++p) {
    hits += argmax[p] == int(layout(p));
    own += IW(p, std::size_t(layout(p)));
  }
  has(fmt::format("{} of {} positions read most from the word painted there", hits, IW.shape(0)));
  has(fmt::format("mean weight on that word {:.3f}", own / double(IW.shape(0))));
  const double gain = j["image_config"]["gain"].get<double>();
  const double others = double(j["image_config"]["words"].size()) - 1.0;
  has(fmt::format("= {:.3f})", std::exp(gain) / (std::exp(gain) + others)));
  // What a region gets back: the first position painted with the first word, its weight on that word
  // and its image_output row as printed.
  const Mat IO = load("image_output");
  const std::size_t side = j["image_config"]["side"].get<std::size_t>();
  const std::string first_word = j["image_config"]["words"][0].get<std::string>();
  for (std::size_t p = 0; p < IW.shape(0); ++p)
    if (int(layout(p)) == 0) {
      has(fmt::format("image_output ({},{}), {:.3f} on '{}'", p / side, p % side, IW(p, 0), first_word));
      has(fmt::format("{:.3f}", IO(p, 0)));
      break;
    }

  // Step 9: the share and each miss, from bahdanau_weights and the manifest's alignment_pair.
  const Mat B = load("bahdanau_weights");
  const auto& pair = j["alignment_pair"];
  const std::vector<int> truth = pair["alignment"].get<std::vector<int>>();
  const auto src = pair["source"].get<std::vector<std::string>>(), tgt = pair["target"].get<std::vector<std::string>>();
  const std::vector<int> b_arg = argmax_alignment(B);
  const AlignmentScore score = alignment_hits(b_arg, truth);
  has(fmt::format("agrees with the true alignment at {}/{} ({:.1f}%)", score.hits, score.total, 100.0 * score.share()));
  CHECK_FALSE(r.has("§3.1"));  // Bahdanau et al.'s bidirectional encoder is §3.2
  // The rows off the diagonal, recomputed from the alignment: each is named with its row and column.
  std::size_t off_rows = 0;
  for (std::size_t t = 0; t < truth.size(); ++t)
    if (truth[t] != int(t))
      ++off_rows, has(fmt::format("'{}' (", tgt[t])), has(fmt::format("row {} translates column {})", t + 1, truth[t] + 1));
  if (off_rows > 0) has("off the diagonal (row i translates a word that is not column i): ");
  CHECK_FALSE(r.has("adjectives move behind their nouns and verbs to the end"));
  for (std::size_t t = 0; t < truth.size(); ++t)
    if (b_arg[t] != truth[t])
      has(fmt::format("missed: '{}' reads '{}' ({:.2f}), not '{}' ({:.2f})", tgt[t], src[std::size_t(b_arg[t])],
                      B(t, std::size_t(b_arg[t])), src[std::size_t(truth[t])], B(t, std::size_t(truth[t]))));

  // Step 10: each layer's head similarity from cross_weights.
  if (fs::exists(dir / "cross_weights.npy")) {
    const NpyArray cw = read_npy((dir / "cross_weights.npy").string());
    const std::size_t L = cw.shape[0], H = cw.shape[1], T = cw.shape[2], S = cw.shape[3];
    auto at = [&](std::size_t l, std::size_t h, std::size_t t, std::size_t s) {
      return cw.data[((l * H + h) * T + t) * S + s];
    };
    for (std::size_t l = 0; l < L; ++l) {
      double sum = 0.0, most = 0.0;
      std::size_t pairs = 0;
      for (std::size_t a = 0; a < H; ++a)
        for (std::size_t b = a + 1; b < H; ++b) {
          double tvd = 0.0;
          for (std::size_t t = 0; t < T; ++t)
            for (std::size_t s = 0; s < S; ++s) tvd += 0.5 * std::abs(at(l, a, t, s) - at(l, b, t, s)) / double(T);
          sum += tvd, most = std::max(most, tvd), ++pairs;
        }
      const double mean = sum / double(pairs);
      has(fmt::format("layer {}: mean {:.3f}, largest pair {:.3f} — {}", l, mean, most,
                      mean <= 0.1 ? "redundant" : "distinct"));
    }
    // The best head against the true alignment: a tie is called one, with every tied head named.
    std::vector<std::string> best;
    std::size_t most_hits = 0;
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h) {
        std::size_t hits = 0;
        for (std::size_t t = 0; t < T; ++t) {
          std::size_t arg = 0;
          for (std::size_t s = 1; s < S; ++s) arg = at(l, h, t, s) > at(l, h, t, arg) ? s : arg;
          hits += int(arg) == truth[t];
        }
        if (hits > most_hits) best.clear(), most_hits = hits;
        if (hits == most_hits) best.push_back(fmt::format("L{}H{}", l, h));
      }
    if (best.size() > 1)
      has(fmt::format("is a tie: {} heads align {}/{}", best.size(), most_hits, T)), has(fmt::format("{}", fmt::join(best, ", ")));
    else
      CHECK_FALSE(r.has("is a tie"));
  }
  fs::remove_all(dir);
}

TEST_CASE("chapter 07 --html: every heatmap, cross_weights with its layers and heads, image_weights, each with its words") {
  const fs::path dir = scratch_dir("ch07-html");
  fs::create_directories(dir);
  const fs::path page = dir / "ch07.html";
  const RunResult r = run_program(kProgram07, {"--quiet", "--html", page.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream f(page);
  REQUIRE(f.good());
  const std::string html((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* name : {"\"name\":\"weights\"", "\"name\":\"length_weights\"", "\"name\":\"padding_weights",
                           "\"name\":\"unmasked_weights", "\"name\":\"image_weights", "\"name\":\"bahdanau_weights"})
    CHECK_MESSAGE(html.find(name) != std::string::npos, "no view " << name);
  // Step 6's sweep is labelled with the target words, not row numbers; step 7's with the source words.
  CHECK(html.find("\"name\":\"length_weights\",\"query_tokens\":[\"le\",\"chat\",\"dort\"]") != std::string::npos);
  CHECK(html.find("\"key_tokens\":[\"the\",\"cat\",\"is\",\"sleeping\"") != std::string::npos);
  if (fs::exists(fs::path(ATTN_DATA_DIR) / "ch08" / "transformer_post.safetensors")) {
    const std::size_t at = html.find("\"name\":\"cross_weights");
    REQUIRE(at != std::string::npos);
    // two decoder layers, each a (heads, T, S) block: "weights":[[[[…  — layer 0 then layer 1
    const std::size_t end = html.find("\"name\":", at + 10);
    const std::string set = html.substr(at, end == std::string::npos ? std::string::npos : end - at);
    CHECK(set.find("\"query_tokens\":[\"esti\"") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("chapter 07: a typed '<pad>' in --source is refused (step 7's mask covers only the appended ones); 1 word is singular") {
  const RunResult r = run_program(kProgram07, {"--source", "le <pad> chat"});
  CHECK(r.status == 2);
  CHECK(r.err_has("'<pad>' is the padding token"));
  const RunResult one = run_program(kProgram07, {"--no-color", "--target", "x"});
  REQUIRE_MESSAGE(one.status == 0, one.err);
  CHECK(one.has("T = 1 target word: the decoder's states"));
  CHECK(one.has("rows: 1 target word, columns: 4 source words"));
}
