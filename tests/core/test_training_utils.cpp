// Training utilities: the progress bar's text (pinned), its silence when disabled, the training-loop
// kit (attn/nn/train_loop.hpp: cadence, epochs, the best model, the step itself), and the allocator
// guard training loops hold.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "attn/nn/train_loop.hpp"
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
  // Plain-line mode (stderr not a terminal): whole lines, no control characters; none before the
  // first interval, one per update once the interval is 0.
  std::ostringstream lines, none_yet;
  {
    ProgressBar bar(10, true, lines, /*lines=*/true);
    bar.set_line_interval(0.0, 0.0);
    bar.update(1, 2.0, 100);
    bar.update(2, 1.5, 100);
  }
  CHECK(lines.str().find("step  1/10 [##") == 0);
  CHECK(lines.str().find("step  2/10") != std::string::npos);
  CHECK(lines.str().find('\r') == std::string::npos);
  CHECK(lines.str().find('\x1b') == std::string::npos);
  {
    ProgressBar bar(10, true, none_yet, /*lines=*/true);  // default: the first line after 10 s
    bar.update(1, 2.0, 100);
  }
  CHECK(none_yet.str().empty());
}

TEST_CASE("training-loop kit: the validation cadence, epochs of batches, the best model kept") {
  CHECK(is_validation_step(200, 100, 700));
  CHECK_FALSE(is_validation_step(250, 100, 700));
  CHECK(is_validation_step(700, 300, 700));
  CHECK(is_validation_step(7, 0, 7));
  CHECK_FALSE(is_validation_step(6, 0, 7));

  int epochs = 0;
  EpochBatches<int> batches([&] { ++epochs; return std::vector<int>{10 * epochs + 1, 10 * epochs + 2}; });
  CHECK(batches.next() == 11);
  CHECK(batches.next() == 12);
  CHECK(batches.next() == 21);  // the first epoch ran out: a fresh one
  CHECK(epochs == 2);
  EpochBatches<int> none([] { return std::vector<int>{}; });
  CHECK_THROWS_AS(none.next(), std::runtime_error);

  KeepBest<std::string> higher("initial", Better::higher, -1.0);
  CHECK(higher.offer(5.0, 100, "a"));
  CHECK_FALSE(higher.offer(5.0, 200, "b"));  // a tie keeps the earlier model
  CHECK_FALSE(higher.offer(std::nan(""), 250, "c"));
  CHECK_FALSE(higher.offer(4.0, 300, "d"));
  CHECK(higher.step() == 100);
  CHECK(higher.model() == "a");
  CHECK(higher.offer(6.0, 400, "e"));
  CHECK(higher.score() == 6.0);
  CHECK(higher.take() == "e");
  KeepBest<std::string> lower("initial", Better::lower, std::numeric_limits<double>::infinity());
  CHECK(lower.model() == "initial");
  CHECK(lower.step() == 0);
  CHECK(lower.offer(2.0, 1, "x"));
  CHECK_FALSE(lower.offer(2.5, 2, "y"));
  CHECK(lower.offer(1.5, 3, "z"));
  CHECK(lower.model() == "z");
}

TEST_CASE("training-loop kit: a step zeroes, runs forward and backward, clips, steps at the schedule's rate") {
  // One parameter w, loss (w − 3)² / 2 with gradient w − 3; Adam's first step moves w by lr
  // (m̂/√v̂ = ±1), so each step's move shows the rate used.
  Mat w = xt::zeros<float>({1, 1}), g = xt::zeros<float>({1, 1});
  ParamRegistry reg;
  reg.add("w", w, g);
  AdamConfig ac;
  ac.lr = 0.25f;
  Adam adam(reg, ac);
  std::vector<TrainStep> seen;
  std::vector<std::size_t> validated;
  TrainLoop loop;
  loop.steps = 5;
  loop.clip = 0.5;
  loop.valid_every = 2;
  loop.lr = [](std::size_t step) { return 0.125 * double(step); };
  loop.forward_backward = [&](std::size_t) {
    CHECK(g(0, 0) == 0.0f);  // the loop zeroed the gradient
    g(0, 0) += w(0, 0) - 3.0f;
    return 0.5 * double(w(0, 0) - 3.0f) * double(w(0, 0) - 3.0f);
  };
  loop.after_step = [&](const TrainStep& s) { seen.push_back(s); };
  loop.validate = [&](std::size_t step) { validated.push_back(step); };
  run_train_loop(loop, reg, {&adam});
  REQUIRE(seen.size() == 5);
  CHECK(seen[0].step == 1);
  CHECK(seen[0].loss == doctest::Approx(4.5));
  CHECK(seen[0].grad_norm == doctest::Approx(3.0));  // measured before the clip
  CHECK(seen[0].lr == doctest::Approx(0.125));
  CHECK(seen[4].lr == doctest::Approx(0.625));
  CHECK(g(0, 0) == doctest::Approx(-0.5f).epsilon(1e-5));  // clipped to the norm 0.5 at the last step
  CHECK(validated == std::vector<std::size_t>{2, 4, 5});
  CHECK(adam.steps_taken() == 5);
  CHECK(w(0, 0) > 0.0f);

  // Without a schedule the optimiser's own rate is used (and reported); clip ≤ 0 never clips.
  Mat w2 = xt::zeros<float>({1, 1}), g2 = xt::zeros<float>({1, 1});
  ParamRegistry reg2;
  reg2.add("w", w2, g2);
  Adam adam2(reg2, ac);
  TrainLoop plain;
  plain.steps = 1;
  plain.clip = 0.0;
  plain.forward_backward = [&](std::size_t) { g2(0, 0) = -10.0f; return 1.0; };
  plain.after_step = [&](const TrainStep& s) { CHECK(s.lr == doctest::Approx(0.25)); CHECK(s.grad_norm == doctest::Approx(10.0)); };
  run_train_loop(plain, reg2, {&adam2});
  CHECK(g2(0, 0) == -10.0f);
  CHECK(w2(0, 0) == doctest::Approx(0.25f).epsilon(1e-4));

  TrainLoop broken;
  broken.steps = 1;
  CHECK_THROWS_AS(run_train_loop(broken, reg2, {&adam2}), std::invalid_argument);
  broken.forward_backward = [](std::size_t) { return 0.0; };
  CHECK_THROWS_AS(run_train_loop(broken, reg2, {}), std::invalid_argument);
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
