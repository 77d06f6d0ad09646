// Chapter 12's verdicts (attn/studies/recall.hpp, attn/studies/state_space.hpp), each driven both
// ways from made-up measurements: the MQAR table's claims, the forms' agreement, the timing's
// crossover and speed-up, the decode cost's slopes; and the family demo's computed reads.
#include <doctest/doctest.h>

#include "attn/studies/recall.hpp"
#include "attn/studies/state_space.hpp"

using namespace attn;

namespace {
// A table where every model has the same accuracy except those given.
RecallTable table_with(double ssm_wide, double ssm_narrow, double hybrid, double window, double attention,
                       double linear_wide = 0.9, double linear_narrow = 0.3, double ssm_fewest = 0.95) {
  RecallTable t;
  t.widths = {16, 64};
  t.pairs = {4, 32};
  for (RecallArch a : recall_archs())
    for (std::size_t d : t.widths)
      for (std::size_t n : t.pairs) {
        double acc = attention;
        if (n == 32 && a == RecallArch::ssm) acc = d == 64 ? ssm_wide : ssm_narrow;
        if (n == 4 && a == RecallArch::ssm) acc = ssm_fewest;
        if (n == 32 && a == RecallArch::hybrid) acc = hybrid;
        if (n == 32 && a == RecallArch::sliding_window) acc = window;
        if (n == 32 && a == RecallArch::linear_attention) acc = d == 64 ? linear_wide : linear_narrow;
        t.cells.push_back({a, d, n, acc, 0});
      }
  return t;
}
}  // namespace

TEST_CASE("recall verdicts: the wall, the rise with state, the hybrid's share, the window") {
  const RecallVerdicts yes = judge_recall(table_with(0.3, 0.1, 0.95, 0.1, 1.0));
  CHECK(yes.attention_high.outcome == Outcome::holds);
  CHECK(yes.ssm_wall.outcome == Outcome::holds);
  CHECK(yes.ssm_rises_with_state.outcome == Outcome::holds);
  CHECK(yes.linear_rises_with_state.outcome == Outcome::holds);
  CHECK(yes.hybrid_closes_gap.outcome == Outcome::holds);
  CHECK(yes.hybrid_closes_gap.measured == doctest::Approx((0.95 - 0.3) / (1.0 - 0.3)));
  CHECK(yes.window_falls.outcome == Outcome::holds);
  CHECK(yes.ssm_fewest.outcome == Outcome::holds);
  const RecallVerdicts no = judge_recall(table_with(0.97, 0.99, 0.97, 0.98, 0.5, 0.3, 0.3, 0.2));
  CHECK(no.attention_high.outcome == Outcome::fails);
  CHECK(no.ssm_wall.outcome == Outcome::fails);  // the SSM beats the (low) attention: no wall
  CHECK(no.ssm_rises_with_state.outcome == Outcome::inconclusive);  // −0.02: within 0.05
  CHECK(no.linear_rises_with_state.outcome == Outcome::inconclusive);
  CHECK(no.hybrid_closes_gap.outcome == Outcome::inconclusive);  // no gap to close
  CHECK(no.window_falls.outcome == Outcome::fails);
  CHECK(no.ssm_fewest.outcome == Outcome::fails);
  CHECK(judge_recall(table_with(0.3, 0.6, 0.4, 0.1, 1.0)).ssm_rises_with_state.outcome == Outcome::fails);
  CHECK(judge_recall(table_with(0.3, 0.1, 0.4, 0.1, 1.0)).hybrid_closes_gap.outcome == Outcome::fails);
  CHECK(judge_recall(table_with(0.3, 0.1, 0.7, 0.1, 1.0)).hybrid_closes_gap.outcome == Outcome::partly);
  CHECK_THROWS_AS(judge_recall(RecallTable{}), std::invalid_argument);
}

TEST_CASE("ssd verdicts: agreement, crossover, chunked speed-up") {
  CHECK(judge_ssd_agreement(1e-7, 2e-7, 3e-7).agree.outcome == Outcome::holds);
  CHECK(judge_ssd_agreement(1e-7, 2e-3, 3e-7).agree.outcome == Outcome::fails);
  const SsdTiming fast = judge_ssd_timing({{64, 10e-6, 5e-6, 6e-6}, {256, 40e-6, 60e-6, 20e-6}, {1024, 160e-6, 900e-6, 80e-6}}, 4, 4, 64);
  CHECK(fast.crossover_t == 256);
  CHECK(fast.chunked_vs_scan == doctest::Approx(2.0));
  CHECK(fast.chunked_faster.outcome == Outcome::holds);
  CHECK(fast.scan_slope == doctest::Approx(1.0));
  const SsdTiming slow = judge_ssd_timing({{64, 10e-6, 5e-6, 20e-6}, {1024, 100e-6, 50e-6, 300e-6}}, 4, 4, 64);
  CHECK(slow.crossover_t == 0);
  CHECK(slow.chunked_faster.outcome == Outcome::fails);
  CHECK(judge_ssd_timing({{64, 10e-6, 5e-6, 10e-6}}, 4, 4, 64).chunked_faster.outcome == Outcome::partly);
}

TEST_CASE("decode cost verdicts: attention grows with the context, the SSM stays flat") {
  const DecodeCost c = judge_decode_cost({{256, 1e-4, 2e-5, 0, 0}, {4096, 16e-4, 2e-5, 0, 0}}, 8, 2, 4);
  CHECK(c.attention_slope == doctest::Approx(1.0));
  CHECK(c.attention_grows.outcome == Outcome::holds);
  CHECK(c.ssm_flat.outcome == Outcome::holds);
  CHECK(c.ratio_at_longest == doctest::Approx(80.0));
  const DecodeCost d = judge_decode_cost({{256, 1e-4, 1e-5, 0, 0}, {4096, 1e-4, 16e-5, 0, 0}}, 8, 2, 4);
  CHECK(d.attention_grows.outcome == Outcome::fails);
  CHECK(d.ssm_flat.outcome == Outcome::fails);
}

TEST_CASE("family demo: the delta rule reads the latest value, linear attention a blend") {
  const FamilyDemo f = family_demo();
  REQUIRE(f.members.size() == 4);
  CHECK(f.delta_overwrites.outcome == Outcome::holds);
  CHECK(f.linear_mixes.outcome == Outcome::holds);
  CHECK(f.members[2].outputs(4, 0) == doctest::Approx(0.25 * 2 + 0.0625 * 1));  // decay: a²·v3 + a⁴·v1
  CHECK(f.members[0].state_floats == 20);  // softmax keeps 5 keys and 5 values of 2
}

TEST_CASE("ssd tiny example: the three forms print the same numbers as the hand computation") {
  const SsdExample e = ssd_tiny_example();
  CHECK(e.y_scan(1, 0) == doctest::Approx(0.5));
  CHECK(e.y_scan(2, 0) == doctest::Approx(2.125));
  for (std::size_t i = 0; i < e.y_scan.size(); ++i) {
    CHECK(e.y_quadratic.data()[i] == doctest::Approx(e.y_reference.data()[i]).epsilon(1e-6));
    CHECK(e.y_chunked.data()[i] == doctest::Approx(e.y_reference.data()[i]).epsilon(1e-6));
  }
}
