// Chapter 03 end to end: the default run prints every step with shapes and labels; the export
// satisfies the contract (exact names) and its .npy files recompute output = softmax(QKᵀ/√d_k)V;
// every bad flag exits 2 with a message naming the flag; --quiet, --no-color, NO_COLOR, --help.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "attn/attention/attention.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/tensor/softmax.hpp"
#include "attn/tensor/mask.hpp"
#include "attn/present/terminal.hpp"
#include "attn/data/npy.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "check_chapter.hpp"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("chapter 03 runs and prints every step with shapes and token labels") {
  const RunResult r = check_chapter_runs("03_self_attention", {"--no-color"});
  CHECK(r.has("Chapter 03 · Self-attention"));
  CHECK(r.has("seed 7 · OpenBLAS "));
  CHECK(r.has("scores (4×4)"));
  CHECK(r.has("weights (4×4) heatmap"));
  CHECK(r.has("          the      cat     eats     fish"));  // column labels over the scores
  CHECK(r.has("row sums: min 1.000000, max 1.000000"));
  CHECK(r.has("Takeaway"));
  // The kernel in the header is never OpenBLAS's generic fallback.
  CHECK_FALSE(r.has("OpenBLAS Prescott"));
}

TEST_CASE("chapter 03 picks a non-generic OpenBLAS kernel without being told") {
  // Without OPENBLAS_CORETYPE the program checks the kernel itself (and may re-exec once).
  const RunResult r = run_program("03_self_attention", {"--quiet"}, {"-u", "OPENBLAS_CORETYPE"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK_FALSE(r.has("OpenBLAS Prescott"));
  CHECK_FALSE(r.has("OpenBLAS Katmai"));
  CHECK_FALSE(r.has("OpenBLAS Core2"));
  CHECK_FALSE(r.has("(OPENBLAS_CORETYPE)"));
}

TEST_CASE("chapter 03 --export writes the contract and the tensors recompute") {
  const fs::path dir = scratch_dir("ch03-export");
  const RunResult r = run_program("03_self_attention", {"--quiet", "--export", dir.string(), "--seed", "11"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream mf(dir / "manifest.json");
  REQUIRE(mf.good());
  const auto j = nlohmann::json::parse(mf);
  CHECK(j["chapter"] == "03");
  CHECK(j["seed"] == 11);
  std::set<std::string> names;
  for (const auto& t : j["tensors"]) {
    names.insert(t["name"].get<std::string>());
    CHECK(fs::exists(dir / t["file"].get<std::string>()));
    const NpyArray a = read_npy((dir / t["file"].get<std::string>()).string());
    CHECK(a.shape == t["shape"].get<Shape>());
    CHECK(t["step"].get<int>() >= 1);
  }
  for (const char* n : {"X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "weights", "output", "causal_weights", "causal_output"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << n);

  auto load = [&](const char* n) { return npy_to_mat(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  const Mat X = load("X"), Wq = load("W_Q"), Wk = load("W_K"), Wv = load("W_V");
  const Mat Q = load("Q"), K = load("K"), V = load("V");
  // Q = X·W_Q (right-multiplied), recomputed in double.
  CHECK(max_abs_diff(Q, gemm_reference(X, Wq)) < 1e-5);
  CHECK(max_abs_diff(K, gemm_reference(X, Wk)) < 1e-5);
  CHECK(max_abs_diff(V, gemm_reference(X, Wv)) < 1e-5);
  const double scale = 1.0 / std::sqrt(double(Q.shape(1)));
  const Mat S = load("scores");
  for (std::size_t i = 0; i < S.shape(0); ++i)
    for (std::size_t k = 0; k < S.shape(1); ++k) {
      double dot = 0.0;
      for (std::size_t c = 0; c < Q.shape(1); ++c) dot += double(Q(i, c)) * K(k, c);
      CHECK(std::abs(dot * scale - S(i, k)) < 1e-5);
    }
  CHECK(max_abs_diff(load("output"), attention_reference(Q, K, V)) < 1e-5);
  CHECK(max_abs_diff(load("causal_output"), attention_reference(Q, K, V, causal_mask(Q.shape(0)))) < 1e-5);
  CHECK(max_abs_diff(load("weights"), softmax_reference(S)) < 1e-5);
  fs::remove_all(dir);
}

TEST_CASE("chapter 03's printed figures and verdicts agree with its export") {
  // Each figure recomputed here from the exported tensors; the verdict words printed beside it
  // must be the ones that figure earns.
  const fs::path dir = scratch_dir("ch03-figures");
  const RunResult r = run_program("03_self_attention", {"--no-color", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  auto load = [&](const char* n) { return npy_to_mat(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  // Step 8: f(P·X) − P·f(X) for the reversed sentence.
  const Mat out = load("output"), out_p = load("output_permuted");
  const std::size_t n = out.shape(0);
  double equi = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < out.shape(1); ++c) equi = std::max(equi, double(std::abs(out_p(i, c) - out(n - 1 - i, c))));
  CHECK(r.has(fmt::format("max |f(P·X) − P·f(X)| = {:.1e}", equi)));
  CHECK(r.has("(equivariant)") == (equi <= 1e-5));
  // Step 6: the first row of the causal weights.
  const Mat cw = load("causal_weights");
  CHECK(r.has(fmt::format("first word's weight on itself: {:.3f} ({})", cw(0, 0),
                          std::abs(cw(0, 0) - 1.0) <= 1e-5 ? "holds" : "does not hold")));
  // Step 7: the worst scaled variance in the exported table, and its verdict (within 15% of 1).
  const Mat sc = load("scaling");
  double worst = 0.0;
  for (std::size_t i = 0; i < sc.shape(0); ++i) worst = std::max(worst, std::abs(double(sc(i, 2)) - 1.0));
  // The sampling noise: three standard errors of the variance from 1200 queries, each against 16
  // keys that share its q, at the smallest d_k: 3·√((2/d + 2(1 + 2/d)/16)/1200).
  double noise = 0.0;
  for (std::size_t i = 0; i < sc.shape(0); ++i) {
    const double d = double(sc(i, 0));
    noise = std::max(noise, 3.0 * std::sqrt((2.0 / d + 2.0 * (1.0 + 2.0 / d) / 16.0) / 1200.0));
  }
  CHECK(noise < 0.15);  // the default --trials judges the claim
  CHECK(squeeze_spaces(r.out).find(fmt::format("worst {:.2f} off, sampling noise (three standard errors) up to {:.2f}: {}",
                                               worst, noise, worst <= 0.15 ? "holds" : "does not hold")) !=
        std::string::npos);
  CHECK((squeeze_spaces(r.out).find("is outside the sampling noise") != std::string::npos) == (worst > noise));
  // With 10 trials the noise alone exceeds the tolerance: no verdict, and the chapter says why.
  const RunResult few = run_program("03_self_attention", {"--no-color", "--trials", "10"});
  REQUIRE(few.status == 0);
  CHECK(squeeze_spaces(few.out).find("too few --trials for that verdict") != std::string::npos);
  // Step 10: attention's fall from the smallest n to the largest, printed beside the token growth.
  {
    const Mat p = load("path_length");
    const double fall = double(p(0, 5)) / double(p(p.shape(0) - 1, 5));
    const double growth = double(p(p.shape(0) - 1, 0)) / double(p(0, 0));
    CHECK(r.has(fmt::format("({:.0f}× more tokens) attention's influence falls {:.0f}×", growth, fall)));
    CHECK(r.has(std::abs(std::log(fall / growth)) <= std::log(2.0) ? "within 2× of the"
                                                                   : "than even weights over that many tokens"));
  }
  // Step 10: every path-length row as printed, and the window rows against ⌈(n − 1)/3⌉.
  const Mat pl = load("path_length");
  REQUIRE(pl.shape(1) == 6);
  for (std::size_t i = 0; i < pl.shape(0); ++i) {
    const auto len = std::size_t(pl(i, 0));
    CHECK(std::size_t(pl(i, 1)) == len - 1);
    CHECK(std::size_t(pl(i, 2)) == 1);
    CHECK(std::size_t(pl(i, 3)) == (len - 1 + 2) / 3);
  }
  CHECK(r.has("full attention: one layer at every n: holds"));
  // Step 10 and the Takeaway: a part beyond dilution is named only where the fall exceeds the token growth.
  {
    const double fall = double(pl(0, 5)) / double(pl(pl.shape(0) - 1, 5));
    const double growth = double(pl(pl.shape(0) - 1, 0)) / double(pl(0, 0));
    const bool beyond = std::abs(std::log(fall / growth)) > std::log(2.0) && fall > growth;
    CHECK(r.has("the cause of the rest is not measured") == beyond);
  }
  fs::remove_all(dir);
}

TEST_CASE("chapter 03 step 9: the lookup says which key won, bird's or the one the noise favoured") {
  // --d-model 2 --d-k 64: a 2-wide key of 'bird' plus N(0, 0.25) noise may match another animal best.
  const fs::path dir = scratch_dir("ch03-lookup");
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, {"--d-model", "2", "--d-k", "64"}}) {
    std::vector<std::string> args = {"--no-color", "--export", dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run_program("03_self_attention", args);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const Mat w = npy_to_mat(read_npy((dir / "lookup_weights.npy").string()), "lookup_weights");
    std::size_t best = 0;  // the largest weight of the smallest τ (the last row) is the best key
    for (std::size_t j = 1; j < w.shape(1); ++j)
      if (w(w.shape(0) - 1, j) > w(w.shape(0) - 1, best)) best = j;
    const char* animals[] = {"cat", "dog", "fish", "bird"};
    CHECK(r.has(best == 3 ? std::string("the best key is bird's, the key the query was made from")
                          : fmt::format("the best key is {}'s, not bird's", animals[best])));
    CHECK(r.has("criterion ≤ 1e-5): holds"));  // step 5's output against the double reference
  }
  fs::remove_all(dir);
}

TEST_CASE("chapter 03 is deterministic for a seed and changes with it") {
  const RunResult a = run_program("03_self_attention", {"--no-color", "--seed", "5"});
  const RunResult b = run_program("03_self_attention", {"--no-color", "--seed", "5"});
  const RunResult c = run_program("03_self_attention", {"--no-color", "--seed", "6"});
  CHECK(a.out == b.out);
  CHECK(a.out != c.out);
}

TEST_CASE("chapter 03 options: --quiet keeps results only, --full, --sentence, colours") {
  const RunResult q = run_program("03_self_attention", {"--quiet"});
  REQUIRE(q.status == 0);
  CHECK_FALSE(q.has("Step 1/"));
  CHECK(q.has("Var(q·k)"));
  CHECK(q.has("Takeaway"));
  const RunResult s = run_program("03_self_attention", {"--no-color", "--sentence", "猫 吃 鱼"});
  REQUIRE(s.status == 0);
  CHECK(s.has("scores (3×3)"));
  CHECK(s.has("猫"));
  const RunResult n = run_program("03_self_attention", {}, {"NO_COLOR=1", "TERM=xterm"});
  CHECK(n.out.find('\x1b') == std::string::npos);
  const RunResult h = run_program("03_self_attention", {"--help"});
  CHECK(h.status == 0);
  for (const char* flag : {"--seed", "--quiet", "--no-color", "--full", "--step", "--export", "--sentence", "--d-k"})
    CHECK_MESSAGE(h.has(flag), "--help does not list " << flag);
  const std::string twelve = "a b c d e f g h i j k l";
  const RunResult elided = run_program("03_self_attention", {"--no-color", "--sentence", twelve});
  const RunResult full = run_program("03_self_attention", {"--no-color", "--full", "--sentence", twelve});
  REQUIRE(elided.status == 0);
  REQUIRE(full.status == 0);
  CHECK(elided.has("⋮"));        // 12 rows: the middle ones are elided …
  CHECK_FALSE(full.has("⋮"));    // … unless --full
  const RunResult st = run_program("03_self_attention", {"--step", "--no-color"});  // stdin is not a terminal: no pause
  CHECK(st.status == 0);
  CHECK_FALSE(st.has("[Enter"));
}

TEST_CASE("chapter 03 bad flags exit 2 and name the flag") {
  struct Case { std::vector<std::string> args; const char* mentions; };
  const std::vector<Case> cases = {
      {{"--seed", "abc"}, "--seed"},
      {{"--seed", "-1"}, "--seed"},
      {{"--d-k", "0"}, "--d-k"},
      {{"--d-k", "65"}, "--d-k"},
      {{"--d-model", "1"}, "--d-model"},
      {{"--sentence", "lonely"}, "--sentence"},
      {{"--trials", "5"}, "--trials"},
      {{"--no-such-flag"}, "--no-such-flag"},
      {{"--export"}, "--export"},
  };
  for (const auto& c : cases) {
    const RunResult r = run_program("03_self_attention", c.args);
    CAPTURE(c.args[0]);
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.err_has(c.mentions), "stderr was: " << r.err);
    CHECK(r.out.empty());  // refused before any work
  }
}

TEST_CASE("chapter 03 refuses an unwritable export folder before any work") {
  const fs::path file = scratch_dir("ch03-notadir");
  std::ofstream(file) << "x";
  const RunResult r = run_program("03_self_attention", {"--export", file.string()});
  CHECK(r.status == 2);
  CHECK(r.err_has("--export"));
  CHECK(r.out.empty());
  const RunResult r2 = run_program("03_self_attention", {"--export", (file / "below").string()});
  CHECK(r2.status == 2);
  fs::remove(file);
}

TEST_CASE("the tour lists every chapter, then runs chapter 03") {
  const RunResult r = run_program("attn-tour", {"--no-color"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.has("▶ 03  Self-attention"));
  CHECK(r.has("00  The Seq2Seq bottleneck"));
  CHECK(r.has("11  Fast attention"));
  const int steps = announced_steps(r);  // chapter 03's own count, as it printed it
  CHECK(steps > 0);
  CHECK(r.has("Step " + std::to_string(steps) + "/" + std::to_string(steps)));
  const RunResult l = run_program("attn-tour", {"--list"});
  CHECK(l.status == 0);
  CHECK_FALSE(l.has("Step 1/"));
  // In Chinese the list is translated too, and no line passes 100 columns.
  const RunResult zh = run_program("attn-tour", {"--list", "--lang", "zh"});
  REQUIRE_MESSAGE(zh.status == 0, zh.err);
  CHECK(zh.has("自注意力 (self-attention)"));
  CHECK(zh.has("一步一步学注意力"));
  CHECK_FALSE(zh.has("Fast attention"));
  std::istringstream lines(zh.out);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(attn::display_width(line) <= 100, line);
}
