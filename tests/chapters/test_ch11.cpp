// Chapter 11 end to end on small sizes: the table and the --json document (exact schema), the
// naive path skipped past its memory limit with a line saying so, and the GPU step's one honest
// outcome (built without CUDA / no device / a table); the printed figures recomputed from the
// export, and skipped rows said as skipped. Timings are never asserted, only recomputed.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/attention/fast_attention.hpp"
#include "attn/data/npy.hpp"
#include "check_chapter.hpp"

namespace fs = std::filesystem;

TEST_CASE("chapter 11 prints the roof, the check against the reference and the sweep") {
  const RunResult r = check_chapter_runs("11_fast_attention",
                                         {"--no-color", "--sizes", "256,512", "--dims", "64", "--heads", "2", "--gpu-sizes", "256"});
  CHECK(r.has("sgemm"));
  CHECK(r.has("max |tiled − reference (double)|"));
  CHECK(r.has("naive"));
  // The impl legend and step 3 describe the path that ran, not the other one.
  const bool avx512 = attn::fast_attention_path({}, 64) == "avx512";
  CHECK(r.has(avx512 ? "tiled runs its own AVX-512 code" : "calls single-threaded OpenBLAS per 96×256 tile"));
  CHECK(r.has(avx512 ? "AVX-512 path (the one timed in step 4)" : "portable path (the one timed in step 4)"));
  CHECK(r.has("vectorised") == avx512);
  CHECK(r.has("% sgemm"));
  CHECK(r.has("% peak"));
  CHECK(r.has("FMA peak measured now: "));
  CHECK(r.has("how: "));  // the peak's arithmetic from the loop's counts and time
  CHECK((r.has("the title's formula with the clock the OS reports") || r.has("the OS reports no clock")));
  CHECK(r.has("Step 6/6"));
}

TEST_CASE("chapter 11 --json prints exactly the issue's schema on stdout") {
  const RunResult r = run_program("11_fast_attention",
                                  {"--json", "--sizes", "128,300", "--dims", "64", "--heads", "2", "--causal", "both",
                                   "--max-naive-mib", "0.5", "--gpu-sizes", "256"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);  // stdout holds nothing but the document
  CHECK(j.at("blas_kernel").is_string());
  CHECK(j.at("threads").is_number_integer());
  CHECK(j.at("sgemm_gflops").get<double>() > 0);
  CHECK(j.at("fma_peak_gflops").get<double>() > 0);
  CHECK(j.at("fma_unit").is_string());
  REQUIRE(j.at("rows").is_array());
  int tiled = 0, naive = 0;
  for (const auto& row : j["rows"]) {
    CHECK(row.size() == 11);
    for (const char* key : {"impl", "path", "threads", "n", "d", "heads", "causal", "gflops", "pct_of_sgemm",
                            "peak_mib", "pct_of_peak"})
      CHECK(row.contains(key));
    // Each row says what it ran on: naive OpenBLAS's threads, tiled its own kernel's.
    CHECK(row["threads"].get<int>() >= 1);
    if (row["impl"] == "naive") {
      CHECK(row["path"] == "openblas");
      CHECK(row["threads"] == j["threads"]);
    } else {
      CHECK(row["path"] != "openblas");
    }
    (row["impl"] == "tiled" ? tiled : naive) += 1;
  }
  if (j.contains("gpu_rows")) {  // only with -DATTN_CUDA=ON and a device
    REQUIRE(j["gpu_rows"].is_array());
    CHECK(!j["gpu_rows"].empty());
    for (const auto& row : j["gpu_rows"]) {
      CHECK(row.size() == 8);
      for (const char* key : {"kernel", "n", "d", "bh", "causal", "tflops", "roof", "pct_of_roof"}) CHECK(row.contains(key));
    }
  }
  CHECK(tiled == 4);   // 2 sizes × causal/non-causal
  CHECK(naive == 2);   // n = 300 needs 0.7 MiB > 0.5: skipped
  CHECK(r.err_has("skipped naive n = 300"));
}

TEST_CASE("chapter 11's GPU step says why it was skipped, or shows the GPU table") {
  const RunResult r = run_program("11_fast_attention", {"--no-color", "--quiet", "--sizes", "128", "--dims", "64",
                                                        "--heads", "1", "--causal", "no", "--gpu-sizes", "256"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const bool not_built = r.has("GPU section skipped: this program was built without -DATTN_CUDA=ON");
  const bool no_device = r.has("GPU section skipped: no CUDA device (");
  const bool table = r.has("cuBLAS SGEMM") && r.has("flash_fp32") && r.has("flash_bf16");
  CHECK_MESSAGE(int(not_built) + int(no_device) + int(table) == 1, r.out);
  if (no_device) MESSAGE("chapter 11 built with CUDA; no device here, the GPU step skipped");
}

TEST_CASE("chapter 11's printed figures agree with its export; a skipped naive row says skipped") {
  // n = 2048 with one head needs 16 MiB for the naive matrices: above --max-naive-mib 10, skipped.
  const fs::path dir = scratch_dir("ch11-figures");
  const RunResult r = run_program("11_fast_attention", {"--no-color", "--sizes", "256,2048", "--dims", "64", "--heads",
                                                        "1", "--causal", "both", "--max-naive-mib", "10",
                                                        "--gpu-sizes", "256", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string joined = std::regex_replace(r.out, std::regex("\n +"), " ");
  auto has = [&](const std::string& s) { CHECK_MESSAGE(joined.find(s) != std::string::npos, "not printed: " << s); };
  auto load = [&](const char* n) { return attn::npy_to_mat(attn::read_npy((dir / (std::string(n) + ".npy")).string()), n); };

  // Step 2: each pass's share and rate, and the memory verdict, from naive_phases.
  const attn::Mat ph = load("naive_phases");  // rows: S, P, O; columns: seconds, flops, bytes, at copy speed, cached
  REQUIRE(ph.shape(0) == 3);
  double total = 0.0, memory = 0.0;
  for (std::size_t i = 0; i < 3; ++i) total += ph(i, 0), memory += ph(i, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    has(fmt::format("{:.1f}", ph(i, 0) * 1e3));
    CHECK(r.has(fmt::format("{:.0f}%", 100.0 * ph(i, 0) / total)));
    if (ph(i, 1) > 0) CHECK(r.has(fmt::format("{:.1f}", ph(i, 1) / ph(i, 0) * 1e-9)));
  }
  const attn::Vec roofs = attn::npy_to_vec(attn::read_npy((dir / "roofs.npy").string()), "roofs");
  CHECK(std::abs(ph(0, 3) - ph(0, 2) / (roofs(4) * 1e9)) < 1e-6 * std::max(1.0, double(ph(0, 3))));
  has(fmt::format("would take {:.0f}% of their time (claim 'memory sets its speed': at least 50%): {}",
                  100.0 * memory / total, memory / total >= 0.5 ? "holds" : "does not hold"));
  if (memory / total < 0.5) CHECK(r.has("the limit here is "));
  if (r.has("the limit here is mostly the softmax's arithmetic"))  // the cached row's share of the pass
    has(fmt::format("({:.0f}%) — mostly its exp, max and sum passes; the other {:.0f}%", 100.0 * ph(1, 4) / ph(1, 0),
                    100.0 - 100.0 * ph(1, 4) / ph(1, 0)));

  // Step 4: every measured row recomputes from its seconds; percentages from the better roofs.
  const attn::Mat sw = load("sweep");
  REQUIRE(sw.shape(1) == 13);
  const double sgemm = std::max(roofs(2), roofs(3)), peak = std::max(roofs(0), roofs(1));
  std::size_t skipped = 0, above = 0, above_peak = 0, noisy = 0;
  for (std::size_t i = 0; i < sw.shape(0); ++i) {
    if (sw(i, 10) == 1.0f) {
      ++skipped;
      CHECK(std::isnan(sw(i, 6)));
      CHECK(sw(i, 0) == 0.0f);  // only the naive path is skipped here
      continue;
    }
    const auto n = std::size_t(sw(i, 1)), d = std::size_t(sw(i, 2)), h = std::size_t(sw(i, 3));
    const double gflops = attn::attention_forward_flops(h, n, n, d, sw(i, 4) == 1.0f) / double(sw(i, 5)) * 1e-9;
    CHECK(gflops == doctest::Approx(sw(i, 6)).epsilon(1e-4));
    CHECK(double(sw(i, 7)) == doctest::Approx(100.0 * sw(i, 6) / sgemm).epsilon(1e-4));
    CHECK(double(sw(i, 8)) == doctest::Approx(100.0 * sw(i, 6) / peak).epsilon(1e-4));
    CHECK(r.has(fmt::format("{:.0f}%", sw(i, 7))));
    // The spread cell: the median run over the best; "noisy" exactly when above 1.25× with 2 or more runs.
    const double median = sw(i, 11), runs = sw(i, 12);
    CHECK(median >= double(sw(i, 5)) * (1 - 1e-6));
    if (runs > 1) {
      const std::string cell = fmt::format("{:+.0f}%", 100.0 * (median / double(sw(i, 5)) - 1.0));
      CHECK_MESSAGE(r.has(cell), cell);
      if (median > 1.25 * double(sw(i, 5)) * (1 + 1e-5)) CHECK(r.has(cell + "!"));
      if (median < 1.25 * double(sw(i, 5)) * (1 - 1e-5)) CHECK_FALSE(r.has(cell + "!"));
      noisy += median > 1.25 * double(sw(i, 5));
    } else {
      CHECK((r.has("timed once as --repeats 1 asks") || r.has("timed once, their first run over 5 s")));
    }
    above += sw(i, 7) > 100.0f;
    above_peak += sw(i, 8) > 100.0f;
  }
  CHECK(skipped == 2);  // n = 2048, causal and not
  // Rows above sgemm are marked and the mark explained, unless every measured row is: then none is
  // marked, and the sentence says "every row".
  const std::size_t measured = sw.shape(0) - skipped;
  const bool all_sgemm = above == measured && measured > 1, all_peak = above_peak == measured && measured > 1;
  CHECK(r.has("* above 100% of sgemm") == (above > 0 && !all_sgemm));
  CHECK((r.has("*  ") || r.has("*†  ")) == (above > 0 && !all_sgemm));  // the marked impl cell, padded
  CHECK(r.has("every row above 100% of sgemm (") == all_sgemm);
  // A row above the FMA peak is marked and explained with both peak runs, and only then.
  CHECK(r.has("† above 100% of the FMA peak (rows: ") == (above_peak > 0 && !all_peak));
  CHECK(r.has("†  ") == (above_peak > 0 && !all_peak));
  has(fmt::format("('!' marks the {} noisy rows, their median more than 25% above their best", noisy));
  // The roofs measured twice: the sentence says whether they moved, from the exported figures.
  const bool sgemm_moved = std::max(roofs(2), roofs(3)) > 1.25f * std::min(roofs(2), roofs(3));
  const bool said_moved = joined.find("more than 1.25×: the load moved between the two") != std::string::npos;
  CHECK(said_moved == (sgemm_moved || std::max(roofs(0), roofs(1)) > 1.25f * std::min(roofs(0), roofs(1))));
  // Not judged exactly when sgemm moved or every tiled row at n ≥ 2048 is noisy.
  std::size_t large_tiled = 0, large_tiled_noisy = 0;
  for (std::size_t i = 0; i < sw.shape(0); ++i)
    if (sw(i, 0) == 1.0f && sw(i, 1) >= 2048.0f && sw(i, 10) == 0.0f)
      ++large_tiled, large_tiled_noisy += sw(i, 12) > 1 && sw(i, 11) > 1.25f * sw(i, 5);
  const std::size_t claim = r.out.find("claim 'tiled runs near matrix-product speed'");
  REQUIRE(claim != std::string::npos);
  std::size_t end = claim;  // the sentence: up to the next line that is not a continuation ("\n    ")
  while ((end = r.out.find("\n  ", end + 1)) != std::string::npos && r.out.compare(end, 5, "\n    ") == 0) {}
  const std::string verdict = std::regex_replace(r.out.substr(claim, end - claim), std::regex("\n +"), " ");
  CHECK((verdict.find("not judged (too noisy)") != std::string::npos) ==
        (sgemm_moved || (large_tiled > 0 && large_tiled_noisy == large_tiled)));
  // Step 5: the naive rows at n ≥ 2048 were all skipped: said so, not "0% of sgemm".
  has("at n ≥ 2048: naive: skipped at every such size (rows skipped: 2;");
  CHECK_FALSE(r.has("naive reaches up to 0%"));
  fs::remove_all(dir);
}
