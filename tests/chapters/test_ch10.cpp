// Chapter 10 end to end: every step and each claim's verdict print; the export has the issue's
// names with tokens in the manifest, and the prefix-matching score recomputed here from the
// exported weights and tokens matches both prefix_matching.npy and the printed line; --html writes
// a page with every view; bad flags exit 2 naming the flag.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/attention/attention_stats.hpp"
#include "attn/tensor/tensor.hpp"
#include "attn/data/npy.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {
// No printed line wider than 100 columns (UTF-8 code points; the chapter prints no wide characters).
bool display_width_ok(const std::string& line) {
  std::size_t cols = 0;
  for (unsigned char c : line) cols += (c & 0xC0) != 0x80;
  return cols <= 100;
}
}  // namespace

TEST_CASE("chapter 10 runs from the shipped models and prints every claim with a verdict") {
  const RunResult r = run_program("10_interpretability", {"--no-color"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  for (int s = 1; s <= 8; ++s) CHECK(r.has("Step " + std::to_string(s) + "/8"));
  CHECK(r.has("Chapter 10 · Interpretability"));
  CHECK(r.has("L1H"));
  CHECK(r.has("previous-token head L0H"));
  CHECK(r.has("loss on the first repeat"));
  for (const char* v : {"verdict: distance", "verdict: ", "of 24 single-head edits", "Bahdanau (chapter 01):",
                        "gradient × input", "uniform attention", "Takeaway"})
    CHECK_MESSAGE(r.has(v), "missing: " << v);
  CHECK(r.out.find('\x1b') == std::string::npos);
  for (std::size_t a = 0, b; (b = r.out.find('\n', a)) != std::string::npos; a = b + 1)
    CHECK_MESSAGE(display_width_ok(r.out.substr(a, b - a)), r.out.substr(a, b - a));
}

TEST_CASE("chapter 10 --export: names, tokens in the manifest, prefix matching recomputed") {
  const fs::path dir = scratch_dir("ch10-export");
  const RunResult r = run_program("10_interpretability", {"--quiet", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream mf(dir / "manifest.json");
  REQUIRE(mf.good());
  const auto j = nlohmann::json::parse(mf);
  std::set<std::string> names;
  nlohmann::json weights_entry;
  for (const auto& t : j["tensors"]) {
    names.insert(t["name"].get<std::string>());
    if (t["name"] == "attn_weights_induction") weights_entry = t;
  }
  for (const char* n : {"attn_weights_induction", "head_entropy", "head_distance", "alignment_accuracy_bahdanau",
                        "prefix_matching", "copying", "kendall_tau"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << n);
  REQUIRE(weights_entry.contains("query_tokens"));
  std::vector<int> tokens;
  for (const auto& t : weights_entry["key_tokens"]) tokens.push_back(std::stoi(t.get<std::string>()));
  const NpyArray w = read_npy((dir / "attn_weights_induction.npy").string());
  REQUIRE(w.shape.size() == 4);
  const std::size_t L = w.shape[0], H = w.shape[1], T = w.shape[2];
  REQUIRE(T == tokens.size());
  const NpyArray pm = read_npy((dir / "prefix_matching.npy").string());
  REQUIRE(pm.shape == Shape({L, H}));
  std::size_t best = 0;
  double best_score = -1.0;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      Mat p = xt::zeros<float>({T, T});
      for (std::size_t a = 0; a < T; ++a)
        for (std::size_t b = 0; b < T; ++b) p(a, b) = w.data[((l * H + h) * T + a) * T + b];
      // by hand: for each query with an earlier copy, the weight on that copy's successor
      double total = 0.0;
      std::size_t rows = 0;
      for (std::size_t a = 0; a < T; ++a) {
        double s = 0.0;
        bool seen = false;
        for (std::size_t b = 0; b < a; ++b)
          if (tokens[b] == tokens[a]) {
            s += p(a, b + 1);
            seen = true;
          }
        if (seen) {
          total += s;
          ++rows;
        }
      }
      const double mine = rows ? total / double(rows) : 0.0;
      CHECK(mine == doctest::Approx(pm.data[l * H + h]).epsilon(1e-5));
      if (l == 1 && mine > best_score) {
        best_score = mine;
        best = h;
      }
    }
  // Chapter 08's cross-attention accuracies, when its checkpoint is shipped: (decoder layers, heads) in [0, 1].
  if (r.has("chapter 08 Transformer: best head")) {
    REQUIRE(names.count("alignment_accuracy") == 1);
    const NpyArray acc = read_npy((dir / "alignment_accuracy.npy").string());
    CHECK(acc.shape.size() == 2);
    for (double a : acc.data) CHECK((a >= 0.0 && a <= 1.0));
  }
  // The printed line names the induction head of the evaluation set; recompute its score too.
  const std::regex line(R"(prefix matching of L1H(\d) = ([0-9.]+))");
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, line));
  const std::size_t h = std::stoul(m[1].str());
  CHECK(std::stod(m[2].str()) == doctest::Approx(pm.data[H + h]).epsilon(1e-4));
  (void)best;
  fs::remove_all(dir);
}

TEST_CASE("chapter 10 --html writes one offline page with every model's views") {
  const fs::path dir = scratch_dir("ch10-html");
  fs::create_directories(dir);
  const fs::path page = dir / "heads.html";
  const RunResult r = run_program("10_interpretability", {"--quiet", "--html", page.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream f(page);
  REQUIRE(f.good());
  const std::string html((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(html.find("induction model") != std::string::npos);
  CHECK(html.find("Bahdanau") != std::string::npos);
  if (r.has("chapter 08 Transformer")) CHECK(html.find("Transformer cross-attention") != std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("chapter 10 bad flags exit 2 naming the flag; --help lists the options") {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--eval", "1"}, {"--train-steps", "0"},
                                               {"--html", "/nonexistent-folder/x.html"}}) {
    const RunResult r = run_program("10_interpretability", args);
    CHECK_MESSAGE(r.status == 2, args[0] << " gave " << r.status);
    CHECK_MESSAGE(r.err.find(args[0]) != std::string::npos, r.err);
  }
  const RunResult h = run_program("10_interpretability", {"--help"});
  CHECK(h.status == 0);
  for (const char* f : {"--train", "--html", "--export", "--eval"}) CHECK(h.has(f));
}

TEST_CASE("--html through the shared narrator: chapters 03 and 04 write their heatmaps and per-head weights") {
  const fs::path dir = scratch_dir("ch10-html-others");
  fs::create_directories(dir);
  for (const char* program : {"03_self_attention", "04_multi_head"}) {
    const fs::path page = dir / (std::string(program) + ".html");
    const RunResult r = run_program(program, {"--quiet", "--html", page.string()});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(r.has("attention view"));
    std::ifstream f(page);
    const std::string html((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    CHECK_MESSAGE(html.find("\"weights") != std::string::npos, program << " drew no weights");
  }
  const RunResult bad = run_program("03_self_attention", {"--html", dir.string()});
  CHECK(bad.status == 2);
  CHECK(bad.err_has("--html"));
  fs::remove_all(dir);
}
