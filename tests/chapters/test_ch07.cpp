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

#include <nlohmann/json.hpp>

#include "attn/attention/alignment.hpp"
#include "attn/data/corpus.hpp"
#include "attn/data/npy.hpp"
#include "attn/models/seq2seq_train.hpp"
#include "attn/models/transformer_train.hpp"
#include "attn/present/terminal.hpp"
#include "attn/studies/image_conditioning.hpp"
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
      const std::string row = fmt::format("\\n *{} +{} +{}/{} \\(\\d+%\\) +{}/{} \\(", l, h, vb.hits, vb.total,
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
  for (int s = 1; s <= 9; ++s) CHECK(r.has("Step " + std::to_string(s) + "/9"));
  CHECK(r.has("Chapter 07 · Cross-attention"));
  CHECK(r.has("X (4×8)"));
  CHECK(r.has("Y (3×8)"));
  CHECK(r.has("Q (3×4)"));
  CHECK(r.has("K (4×4)"));
  CHECK(r.has("scores (3×4)"));
  CHECK(r.has("weights (3×4) heatmap"));
  CHECK(r.has("          the      cat       is sleeping"));  // source words over the columns
  CHECK(r.has("weights are 3×4 (target × source); row sums: min 1.000000, max 1.000000"));
  CHECK(r.has("max |Δweights| = 0.0e+00, max |Δoutput| = 0.0e+00; both 3×3"));
  CHECK(r.has("image_weights (64×5)"));
  CHECK(r.has("Takeaway"));
  // Step 9 shows the shipped Transformer when there is one, and says plainly when there is none.
  if (fs::exists(fs::path(ATTN_DATA_DIR) / "ch08" / "transformer_post.safetensors")) {
    CHECK(r.has("Best Transformer head (layer "));
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
  CHECK(r.has("L2H1"));  // layers and heads numbered from 0, as in chapter 04
  CHECK_FALSE(r.has("not shipped yet"));
  const SentencePair& pair = printed_pair(r.out, corpus);
  const NpyArray cw = read_npy((out / "cross_weights.npy").string());
  CHECK(cw.shape == Shape{3, 2, pair.tgt.size(), pair.src.size()});
  check_agreement_table(r.out, cw, npy_to_mat(read_npy((out / "bahdanau_weights.npy").string()), "bahdanau_weights"), pair);
  fs::remove_all(dir);
}

TEST_CASE("chapter 07 bad flags exit 2 and name the flag; a missing model exits 1 naming the file") {
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
  const RunResult m = run_program(kProgram07, {"--quiet", "--bahdanau", "/nonexistent/b.safetensors"});
  CHECK(m.status == 1);
  CHECK_MESSAGE(m.err_has("/nonexistent/b.safetensors"), "stderr was: " << m.err);
  const RunResult t = run_program(kProgram07, {"--quiet", "--transformer", "/nonexistent/t.safetensors"});
  CHECK(t.status == 1);
  CHECK_MESSAGE(t.err_has("/nonexistent/t.safetensors"), "stderr was: " << t.err);
}

TEST_CASE("chapter 07 --quiet keeps the results; the run is deterministic for a seed") {
  const RunResult q = run_program(kProgram07, {"--quiet"});
  REQUIRE(q.status == 0);
  CHECK_FALSE(q.has("Step 1/9"));
  CHECK(q.has("row sums"));
  CHECK(q.has("of 64 positions read most"));
  CHECK(q.has("Takeaway"));
  const RunResult a = run_program(kProgram07, {"--no-color", "--seed", "5"});
  const RunResult b = run_program(kProgram07, {"--no-color", "--seed", "5"});
  CHECK(a.out == b.out);
}
