// Chapter 06 end to end on a small sweep: every step and variant; the printed slopes and their
// verdicts recomputed from the exported sweep; the masks as exported; the KV-cache verdict from the
// manifest; a bad flag exits 2. (Timings are printed, never asserted.)
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"
#include "check_chapter.hpp"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("chapter 06 runs a small sweep; its printed slopes are the export's") {
  const fs::path dir = scratch_dir("ch06-export");
  const RunResult r = check_chapter_runs("06_efficient_attention", {"--no-color", "--sizes", "256,1024,1536,2048",
                                                                    "--repeats", "2", "--decode-steps", "32",
                                                                    "--export", dir.string()});
  CHECK(r.has("Chapter 06 · Efficient attention"));
  CHECK(r.has("LLaMA 3 uses full causal attention"));
  std::ifstream mf(dir / "manifest.json");
  const auto j = nlohmann::json::parse(mf);
  const auto names = j["sweep_variants"].get<std::vector<std::string>>();
  REQUIRE(names.size() == 7);
  const Mat sw = npy_to_mat(read_npy((dir / "sweep.npy").string()), "sweep");
  REQUIRE(sw.shape(1) == 8);
  for (std::size_t v = 0; v < names.size(); ++v) {
    // slope of log(best seconds) on log(n) over n >= 1024, recomputed from the exported rows
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (std::size_t i = 0; i < sw.shape(0); ++i)
      if (std::size_t(sw(i, 0)) == v && sw(i, 1) >= 1024 && sw(i, 2) > 0) {
        const double lx = std::log(double(sw(i, 1))), ly = std::log(double(sw(i, 2)));
        sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, m += 1;
      }
    REQUIRE(m == 3);
    const double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    CAPTURE(names[v]);
    CHECK(r.has(fmt::format("{:.2f} ± ", slope)));
  }
  // The masks: 0 where visible, −∞ where masked; the causal window w = 4 sees itself and 3 before.
  const Mat win = npy_to_mat(read_npy((dir / "window_mask.npy").string()), "window_mask");
  for (std::size_t i = 0; i < win.shape(0); ++i)
    for (std::size_t k = 0; k < win.shape(1); ++k) CHECK((win(i, k) == 0.0f) == (k <= i && i < k + 4));
  const double kv_diff = j["kv_cache"]["max_diff"].get<double>();
  CHECK(r.has(kv_diff <= 1e-5 ? "same outputs" : "the outputs differ"));
  CHECK(r.has("Takeaway"));
  // Step 4: the trace's last ℓ beside the same row's softmax denominator summed directly, recomputed
  // from the exported online_trace (column 5: ℓ after); the first tile's m before is −∞.
  const Mat ot = npy_to_mat(read_npy((dir / "online_trace.npy").string()), "online_trace");
  CHECK(r.has(fmt::format("against ℓ after the last tile {:.4f}: the same", ot(ot.shape(0) - 1, 5))));
  CHECK(r.has("−∞"));
  CHECK_FALSE(r.has("-inf"));
  // Step 3: linear attention's error read against answering 0
  CHECK(r.has("(ratio "));
  CHECK(r.has("answering 0 everywhere, which is off by"));
  fs::remove_all(dir);
}

TEST_CASE("chapter 06 skips full attention beyond its memory limit, saying so") {
  const RunResult r = run_program("06_efficient_attention", {"--quiet", "--sizes", "256,2048", "--max-full-mib", "8", "--decode-steps", "16"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.has("skipped full at n = 2048"));  // its cell in the time table reads "—"
  CHECK(!r.has("skipped full at n = 256"));
}

TEST_CASE("chapter 06 rejects a bad --sizes or an even --window with status 2") {
  const RunResult r = run_program("06_efficient_attention", {"--sizes", "3"});
  CHECK(r.status == 2);
  CHECK(r.err_has("--sizes"));
  const RunResult w = run_program("06_efficient_attention", {"--window", "128"});
  CHECK(w.status == 2);
  CHECK(w.err_has("--window"));
  CHECK(w.err_has("must be odd"));
  const RunResult inf = run_program("06_efficient_attention", {"--max-full-mib", "inf"});
  CHECK(inf.status == 2);
  CHECK(inf.err_has("not a finite number"));
  const RunResult h = run_program("06_efficient_attention", {"--help"});
  CHECK(h.status == 0);
  CHECK(h.has("--window UINT:ODD in [1 - 8191]=255"));
  CHECK(h.has("--max-full-mib FLOAT:MiB in [1 - 1e6]=2048"));
  CHECK_FALSE(h.has(") AND ("));
}
