// Training utilities: the progress bar's text (pinned), its silence when disabled, best-checkpoint
// keeping on validation loss, the validation schedule, and the allocator guard training loops hold.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "attn/nn/best_checkpoint.hpp"
#include "attn/nn/linear.hpp"
#include "attn/present/progress.hpp"
#include "attn/tensor/memory.hpp"

using namespace attn;

TEST_CASE("progress: the bar's line, durations, silence when disabled") {
  CHECK(format_progress(120, 700, 1.2345, 3210.0, 42.0, 10) == "step 120/700 [#·········]  loss 1.234  3.2k tok/s  ETA 0:42");
  CHECK(format_progress(700, 700, 0.5, 900.0, 0.0, 4) == "step 700/700 [####]  loss 0.500  900 tok/s  ETA 0:00");
  CHECK(format_duration(725) == "12:05");
  CHECK(format_duration(3723) == "1:02:03");
  std::ostringstream quiet, loud;
  {
    ProgressBar bar(10, false, quiet);
    bar.update(1, 2.0, 100);
  }
  CHECK(quiet.str().empty());
  {
    ProgressBar bar(10, true, loud);
    bar.update(5, 2.0, 100);
  }
  CHECK(loud.str().find("\rstep  5/10 [##########··········]  loss 2.000") == 0);
  CHECK(loud.str().back() == '\n');
}

TEST_CASE("best checkpoint: saves only on improvement, records step and loss") {
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("attn_best_" + std::to_string(::getpid()) + ".safetensors");
  Rng rng(1);
  Linear p = linear_init(2, 3, rng), g = zeros_like(p);
  ParamRegistry reg;
  register_params(reg, "p", p, g);
  BestCheckpoint best(path.string());
  CHECK(best.offer(reg, 2.0, 100));
  const Mat saved = p.w;
  p.w(0, 0) += 1.0f;
  CHECK_FALSE(best.offer(reg, 2.5, 200));  // worse: the file keeps step 100's weights
  CHECK_FALSE(best.offer(reg, std::nan(""), 250));
  CHECK(best.best_step() == 100);
  Metadata meta;
  TensorMap t = read_safetensors(path.string(), &meta);
  CHECK(meta.at("step") == "100");
  CHECK(meta.at("valid_loss") == "2");
  CHECK(t.at("p.w").data[0] == saved(0, 0));
  CHECK(best.offer(reg, 1.5, 300));
  CHECK(best.best_loss() == 1.5);
  fs::remove(path);
  CHECK(is_validation_step(200, 100, 700));
  CHECK_FALSE(is_validation_step(250, 100, 700));
  CHECK(is_validation_step(700, 300, 700));
}

#if defined(__SANITIZE_ADDRESS__)
TEST_CASE("RetainFreedMemory: inactive under a sanitizer's allocator") {
  const RetainFreedMemory keep;
  CHECK_FALSE(keep.active());
}
#else
namespace {

// Allocates `bytes`, writes every page, returns the resident-set growth that caused; then frees.
long long touch_block_growth(std::size_t bytes) {
  char* p = static_cast<char*>(std::malloc(bytes));
  REQUIRE(p != nullptr);
  const long long before = current_rss_bytes();
  std::memset(p, 1, bytes);
  asm volatile("" : : "r"(p) : "memory");  // the writes must happen
  const long long after = current_rss_bytes();
  std::free(p);
  return after - before;
}

}  // namespace

TEST_CASE("RetainFreedMemory: a freed 64 MiB block is reused without new pages; outside, fresh pages again") {
  constexpr std::size_t kBlock = 64u << 20;
  REQUIRE(current_rss_bytes() > 0);
  {
    const RetainFreedMemory keep;
    REQUIRE(keep.active());
    {
      const RetainFreedMemory nested;  // only the outermost guard changes the allocator
      CHECK(nested.active());
    }
    touch_block_growth(kBlock);                      // first time: the heap grows
    CHECK(touch_block_growth(kBlock) < (16 << 20));  // second time: the same pages, already resident
  }
  // The guard is gone: glibc's defaults again, so a big block is a fresh mapping.
  CHECK(touch_block_growth(kBlock) > (48 << 20));
}
#endif
