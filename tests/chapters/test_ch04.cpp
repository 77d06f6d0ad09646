// Chapter 04 end to end: every step prints; the export has the exact names of the issue and its
// .npy files recompute output = Concat(softmax(Q_h·K_hᵀ/√d_head)·V_h)·W_O; bad flags exit 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/attention/attention.hpp"
#include "attn/tensor/blas.hpp"
#include "attn/attention/mha_trace.hpp"
#include "attn/data/npy.hpp"
#include "attn/present/ch04_report.hpp"
#include "attn/studies/multi_head_study.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "check_chapter.hpp"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("chapter 04 runs and prints every step, per-head maps and the cost tables") {
  const RunResult r = check_chapter_runs("04_multi_head", {"--no-color"});
  CHECK(r.has("Chapter 04 · Multi-head attention"));
  CHECK(r.has("Q_heads (4×5×4)"));
  CHECK(r.has("head 0"));  // heads numbered from 0, in heatmaps as in tensors
  CHECK(r.has("head 3"));
  CHECK_FALSE(r.has("head 4"));
  CHECK(r.has("… 3 more heads (--full shows all)"));  // per-head slices elided
  CHECK(r.has("max |output − multi_head_forward (the layer training uses)|"));
  CHECK(r.has("GQA: 4 query heads, 2 K/V heads"));  // the default h = 4 shares K/V heads in pairs
  CHECK(r.has("PyTorch parity"));
  CHECK(r.has("63.08M"));
  CHECK(r.has("2560 KiB"));
  CHECK(r.has("320 KiB"));
  CHECK(r.has("GQA == MHA with each K/V head repeated for its group: max |diff| = 0.0e+00"));
  CHECK(r.has("max |GQA − MHA| = "));  // what pooling the K/V heads changes, measured
  CHECK(r.has("max |MQA − MHA| = "));
  // Ainslie et al. 2023: quality against the uptraining share is their Figure 5 (Table 1 is the
  // uptrained models' inference time and average score)
  CHECK(r.has("(its Figure 5)"));
  CHECK_FALSE(r.has("Table 1"));
  CHECK(r.has("Takeaway"));
}

TEST_CASE("chapter 04 --export: exact names, shapes, and the tensors recompute") {
  const fs::path dir = scratch_dir("ch04-export");
  const RunResult r = run_program("04_multi_head", {"--quiet", "--export", dir.string(), "--seed", "9"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream mf(dir / "manifest.json");
  REQUIRE(mf.good());
  const auto j = nlohmann::json::parse(mf);
  CHECK(j["chapter"] == "04");
  std::set<std::string> names;
  for (const auto& t : j["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"X", "W_Q", "W_K", "W_V", "W_O", "Q_heads", "K_heads", "V_heads", "weights", "heads_out", "concat", "output"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << n);
  auto path = [&](const char* n) { return (dir / (std::string(n) + ".npy")).string(); };
  auto mat = [&](const char* n) { return npy_to_mat(read_npy(path(n)), n); };
  auto t3 = [&](const char* n) { return npy_to_tensor3(read_npy(path(n)), n); };
  const Mat X = mat("X"), Wq = mat("W_Q"), Wk = mat("W_K"), Wv = mat("W_V"), Wo = mat("W_O");
  const Tensor3 Qh = t3("Q_heads"), Kh = t3("K_heads"), Vh = t3("V_heads"), A = t3("weights"), Oh = t3("heads_out");
  CHECK(shape_of(Qh) == Shape{4, 5, 4});
  CHECK(shape_of(A) == Shape{4, 5, 5});
  CHECK(max_abs_diff(merge_heads(Qh), gemm_reference(X, Wq)) < 1e-5);  // Q = X·W_Q, right-multiplied
  CHECK(max_abs_diff(merge_heads(Kh), gemm_reference(X, Wk)) < 1e-5);
  CHECK(max_abs_diff(merge_heads(Vh), gemm_reference(X, Wv)) < 1e-5);
  for (std::size_t h = 0; h < 4; ++h) {
    const MatD ref = attention_reference(slice_of(Qh, h), slice_of(Kh, h), slice_of(Vh, h));
    CHECK(max_abs_diff(slice_of(Oh, h), ref) < 1e-5);
  }
  CHECK(max_abs_diff(mat("concat"), merge_heads(Oh)) == 0.0);
  CHECK(max_abs_diff(mat("output"), gemm_reference(mat("concat"), Wo)) < 1e-5);
  // GQA and MQA are the same weights with each group's K/V columns averaged.
  MultiHead mha;
  mha.n_heads = mha.n_kv_heads = 4;
  mha.w_q = Wq, mha.w_k = Wk, mha.w_v = Wv, mha.w_o = Wo;
  CHECK(max_abs_diff(mat("gqa_output"), multi_head_trace(X, mean_pool_kv(mha, 2)).output) < 1e-6);
  CHECK(max_abs_diff(mat("mqa_output"), multi_head_trace(X, mean_pool_kv(mha, 1)).output) < 1e-6);
  fs::remove_all(dir);
}

TEST_CASE("chapter 04 bad flags exit 2 naming the flag; --help lists the options") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--heads", "0"}, {"--heads", "9"}, {"--d-model", "1"}, {"--heads", "3"}, {"--sentence", "one"}}) {
    const RunResult r = run_program("04_multi_head", args);
    CHECK_MESSAGE(r.status == 2, args[0] << " " << args[1] << " gave " << r.status);
    CHECK_MESSAGE(r.err.find(args[0]) != std::string::npos, r.err);
  }
  const RunResult h = run_program("04_multi_head", {"--help"});
  CHECK(h.status == 0);
  for (const char* f : {"--sentence", "--d-model", "--heads", "--export"}) CHECK(h.has(f));
}

TEST_CASE("chapter 04's printed head difference and its verdict come from the exported weights") {
  const fs::path dir = scratch_dir("ch04-figures");
  const RunResult r = run_program("04_multi_head", {"--no-color", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const Tensor3 a = npy_to_tensor3(read_npy((dir / "weights.npy").string()), "weights");
  double most = 0.0;  // the largest max |A_h − A_g| over pairs of heads, recomputed
  for (std::size_t h = 0; h < a.shape(0); ++h)
    for (std::size_t g = h + 1; g < a.shape(0); ++g)
      for (std::size_t i = 0; i < a.shape(1); ++i)
        for (std::size_t j = 0; j < a.shape(2); ++j) most = std::max(most, double(std::abs(a(h, i, j) - a(g, i, j))));
  std::ifstream mf(dir / "manifest.json");
  const auto j = nlohmann::json::parse(mf);
  CHECK(j["figures"]["most_different_heads"].get<double>() == doctest::Approx(most).epsilon(1e-6));
  CHECK(r.has(fmt::format("largest difference between two heads' weights: {:.3f} — {}", most,
                          most >= 0.05 ? "the heads' random projections give different maps"
                                       : "the heads attend almost alike")));
  fs::remove_all(dir);
}

TEST_CASE("chapter 04: the heads' maps are shaded to the largest weight, and the --html page names the words") {
  const fs::path dir = scratch_dir("ch04-html"), page_dir = scratch_dir("ch04-page");
  const fs::path page = page_dir / "ch04.html";  // beside the export folder, which the export replaces
  fs::create_directories(page_dir);
  const RunResult r = run_program("04_multi_head", {"--no-color", "--export", dir.string(), "--html", page.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const Tensor3 a = npy_to_tensor3(read_npy((dir / "weights.npy").string()), "weights");
  CHECK(r.has(fmt::format("shades from 0 to the largest weight, {:.2f}", double(xt::amax(a)()))));
  std::ifstream f(page);
  REQUIRE(f.good());
  const std::string html((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(html.find("\"name\":\"weights\",\"query_tokens\":[\"the\",\"cat\",\"eats\",\"the\",\"fish\"]") !=
        std::string::npos);
  // "scattered marks" are explained only when 1/n sits on an edge of this run's shading
  for (const char* sentence : {"the cat eats the fish", "x y", "a b c d e f g h i j k l"}) {
    const RunResult s = run_program("04_multi_head", {"--no-color", "--sentence", sentence, "--export", dir.string()});
    REQUIRE_MESSAGE(s.status == 0, s.err);
    const NearUniformRows near = near_uniform_rows(npy_to_tensor3(read_npy((dir / "weights.npy").string()), "w"));
    const bool on_edge = near.near > 0 && near_shade_edge(near.uniform, near.largest, near.tol) > 0;
    CHECK_MESSAGE(s.has("of a shade's edge") == on_edge, sentence);
  }
  fs::remove_all(dir);
  fs::remove_all(page_dir);
}
