// Chapter 11 end to end on small sizes: the table and the --json document (exact schema), the
// naive path skipped past its memory limit with a line saying so, and the GPU step's one honest
// outcome (built without CUDA / no device / a table). Timings are never asserted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "check_chapter.hpp"

TEST_CASE("chapter 11 prints the roof, the check against the reference and the sweep") {
  const RunResult r = check_chapter_runs("11_fast_attention",
                                         {"--no-color", "--sizes", "256,512", "--dims", "64", "--heads", "2", "--gpu-sizes", "256"});
  CHECK(r.has("sgemm"));
  CHECK(r.has("max |tiled − reference (double)|"));
  CHECK(r.has("naive"));
  CHECK(r.has("tiled/"));
  CHECK(r.has("% sgemm"));
  CHECK(r.has("% peak"));
  CHECK(r.has("FMA peak: "));
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
    CHECK(row.size() == 9);
    for (const char* key : {"impl", "n", "d", "heads", "causal", "gflops", "pct_of_sgemm", "peak_mib", "pct_of_peak"})
      CHECK(row.contains(key));
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
