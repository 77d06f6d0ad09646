// Chapter 11 end to end on small sizes: the table and the --json document (exact schema), the
// naive path skipped past its memory limit with a line saying so. Timings are never asserted.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "run_program.hpp"

TEST_CASE("chapter 11 prints the roof, the check against the reference and the sweep") {
  const RunResult r = run_program("11_fast_attention", {"--no-color", "--sizes", "256,512", "--dims", "64", "--heads", "2"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  for (int s = 1; s <= 6; ++s) CHECK(r.has("Step " + std::to_string(s) + "/6"));
  CHECK(r.has("sgemm"));
  CHECK(r.has("max |tiled − reference (double)|"));
  CHECK(r.has("naive"));
  CHECK(r.has("tiled/"));
  CHECK(r.has("% sgemm"));
}

TEST_CASE("chapter 11 --json prints exactly the issue's schema on stdout") {
  const RunResult r = run_program("11_fast_attention",
                                  {"--json", "--sizes", "128,300", "--dims", "64", "--heads", "2", "--causal", "both",
                                   "--max-naive-mib", "0.5"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);  // stdout holds nothing but the document
  CHECK(j.at("blas_kernel").is_string());
  CHECK(j.at("threads").is_number_integer());
  CHECK(j.at("sgemm_gflops").get<double>() > 0);
  REQUIRE(j.at("rows").is_array());
  int tiled = 0, naive = 0;
  for (const auto& row : j["rows"]) {
    CHECK(row.size() == 8);
    for (const char* key : {"impl", "n", "d", "heads", "causal", "gflops", "pct_of_sgemm", "peak_mib"}) CHECK(row.contains(key));
    (row["impl"] == "tiled" ? tiled : naive) += 1;
  }
  CHECK(tiled == 4);   // 2 sizes × causal/non-causal
  CHECK(naive == 2);   // n = 300 needs 0.7 MiB > 0.5: skipped
  CHECK(r.err_has("skipped naive n = 300"));
}
