// Chapter 12 end to end from the shipped checkpoints: every step, the MQAR table and its verdict
// lines, and an export whose tensors recompute independently (the scan in double from X, B, C and the decays a;
// L from a; the family's delta-rule read; the accuracy tensor's shape and range; again with numpy in
// tests/check_ch12_export.py). Timings are never asserted.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"
#include "check_chapter.hpp"

namespace fs = std::filesystem;
using namespace attn;

TEST_CASE("chapter 12 prints the three forms, the family, the MQAR table and the decode cost") {
  const RunResult r = check_chapter_runs("12_beyond_attention");
  CHECK(r.has("agreement within 1e-5 of the float64 scan: holds"));
  CHECK(r.has("crossover"));
  CHECK(r.has("delta rule reads exactly v3"));
  CHECK(r.has("MQAR accuracy"));
  for (const char* m : {"attention", "window", "linear attn", "SSM", "hybrid"}) CHECK(r.has(m));
  CHECK(r.has("Lieber et al. 2024, Table 1"));
  CHECK(r.has("log-log slopes of step time against context"));
}

TEST_CASE("chapter 12 --export: the tensors recompute") {
  // With ATTN_CH12_EXPORT set (ctest does), the export is kept there for tests/check_ch12_export.py,
  // which recomputes it again with numpy.
  const char* keep = std::getenv("ATTN_CH12_EXPORT");
  const fs::path dir = keep && *keep ? fs::path(keep) : scratch_dir("ch12-export");
  if (keep && *keep) fs::remove_all(dir);
  const RunResult r = run_program("12_beyond_attention", {"--quiet", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream mf(dir / "manifest.json");
  REQUIRE(mf.good());
  const auto j = nlohmann::json::parse(mf);
  CHECK(j["chapter"] == "12");
  std::set<std::string> names;
  for (const auto& t : j["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"ssd_x", "ssd_b", "ssd_c", "ssd_a", "ssd_mask", "ssd_y_scan", "ssd_y_quadratic",
                        "ssd_y_chunked", "ssd_y_reference", "family_q", "family_k", "family_v", "family_softmax",
                        "family_linear", "family_decay", "family_delta", "mqar_accuracy", "mqar_state_bytes"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << n);
  auto load = [&](const std::string& n) { return read_npy((dir / (n + ".npy")).string()); };
  const NpyArray x = load("ssd_x"), b = load("ssd_b"), c = load("ssd_c"), a = load("ssd_a");
  const NpyArray y = load("ssd_y_scan"), l = load("ssd_mask"), yq = load("ssd_y_quadratic");
  const std::size_t t_len = x.shape[0], p = x.shape[1], n = b.shape[1];
  std::vector<double> h(n * p, 0.0);
  for (std::size_t t = 0; t < t_len; ++t) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < p; ++k) h[i * p + k] = a.data[t] * h[i * p + k] + b.data[t * n + i] * x.data[t * p + k];
    for (std::size_t k = 0; k < p; ++k) {
      double want = 0;
      for (std::size_t i = 0; i < n; ++i) want += c.data[t * n + i] * h[i * p + k];
      CHECK(std::abs(want - y.data[t * p + k]) < 1e-5);
      CHECK(std::abs(want - yq.data[t * p + k]) < 1e-5);
    }
    for (std::size_t s = 0; s < t_len; ++s) {
      double prod = s <= t ? 1.0 : 0.0;
      for (std::size_t u = s + 1; u <= t; ++u) prod *= a.data[u];
      CHECK(std::abs(prod - l.data[t * t_len + s]) < 1e-6);
    }
  }
  const NpyArray delta = load("family_delta"), v = load("family_v");
  CHECK(std::abs(delta.data[4 * 2 + 0] - v.data[2 * 2 + 0]) < 1e-5);  // the query for A reads v3
  CHECK(std::abs(delta.data[4 * 2 + 1] - v.data[2 * 2 + 1]) < 1e-5);
  const NpyArray acc = load("mqar_accuracy");
  REQUIRE(acc.shape == Shape({5, 3, 4}));
  for (double q : acc.data) CHECK((q >= 0.0f && q <= 1.0f));
  CHECK(j["mqar"]["archs"].size() == 5);
  CHECK(j["mqar"]["pairs"].back() == 32);
  if (!(keep && *keep)) fs::remove_all(dir);
}

TEST_CASE("chapter 12 refuses a bad --train-steps") {
  const RunResult bad = run_program("12_beyond_attention", {"--train-steps", "0"});
  CHECK(bad.status == 2);
  CHECK(bad.err_has("--train-steps"));
  const RunResult only = run_program("12_beyond_attention", {"--train", "--train-only", "mamba"});
  CHECK(only.status == 2);  // refused before any training starts
  CHECK(only.err_has("--train-only"));
}

TEST_CASE("chapter 12 refuses the training-only options without --train") {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--train-only", "ssm"}, {"--train-steps", "5"}, {"--train-ssm-steps", "5"}, {"--train-lr", "0.5"}}) {
    const RunResult r = run_program("12_beyond_attention", args);
    CHECK_MESSAGE(r.status == 2, args[0]);
    CHECK_MESSAGE(r.err_has(args[0] + " requires --train"), r.err);
    CHECK(r.out.empty());  // refused before the lesson starts
  }
}

TEST_CASE("chapter 12 --export --html: each closing message once") {
  const fs::path dir = scratch_dir("ch12-once");
  fs::create_directories(dir);
  const RunResult r = run_program("12_beyond_attention",
                                  {"--quiet", "--export", (dir / "out").string(), "--html", (dir / "v.html").string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t at = r.out.find(s); at != std::string::npos; at = r.out.find(s, at + 1)) ++n;
    return n;
  };
  CHECK(count("Exported ") == 1);
  CHECK(count("Wrote ") == 1);
  fs::remove_all(dir);
}
