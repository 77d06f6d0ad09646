// Chapter 06 end to end on a small sweep: every step, every variant with a slope, exit status,
// a bad flag exits 2. (Timings are printed, never asserted.)
#include <doctest/doctest.h>

#include "check_chapter.hpp"

TEST_CASE("chapter 06 runs a small sweep and prints every variant with slope and error") {
  const RunResult r = check_chapter_runs("06_efficient_attention", {"--no-color", "--sizes", "256,1024,2048", "--decode-steps", "32"});
  CHECK(r.has("Chapter 06 · Efficient attention"));
  CHECK(r.has("LLaMA 3 uses full causal attention"));
  for (const char* v : {"full ", "tiled (exact)", "window ", "dilated ", "longformer ", "bigbird ", "linear "}) CHECK(r.has(v));
  CHECK(r.has("slope"));
  CHECK(r.has("same tokens"));
  CHECK(r.has("Takeaway"));
}

TEST_CASE("chapter 06 skips full attention beyond its memory limit, saying so") {
  const RunResult r = run_program("06_efficient_attention", {"--quiet", "--sizes", "256,2048", "--max-full-mib", "8", "--decode-steps", "16"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.has("skip"));
}

TEST_CASE("chapter 06 rejects a bad --sizes value with status 2") {
  const RunResult r = run_program("06_efficient_attention", {"--sizes", "3"});
  CHECK(r.status == 2);
  CHECK(r.err_has("--sizes"));
}
