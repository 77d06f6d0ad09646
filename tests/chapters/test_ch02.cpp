// Chapter 02 end to end, from the shipped checkpoints data/ch02/luong_{dot,general,concat,local_p}
// and data/ch01/bahdanau: every step runs; each trained model's exported scores recompute from its
// exported states and weights (dot = H·h_t, general = H·(h_t·W_a)ᵀ, concat = v_cᵀtanh([h_t; h̄_s]·W_c));
// the printed largest scores, hit counts, gaps and verdicts, and speed ratios follow the export;
// the by-length figures recompute from translations.json and are pinned; --time-training's verdict
// follows its own figure; bad files and flags fail cleanly.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "attn/data/npy.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "check_chapter.hpp"
#include "seq2seq_pins.hpp"

using namespace attn;
using seq2seq_pins::check_pinned;
using seq2seq_pins::kBuckets;
using seq2seq_pins::read_json;
namespace fs = std::filesystem;

namespace {
const char* kProgram02 = "02_luong";

// Step 5 with --full: the printed gains are the exported times' ratios, and each size's dot
// verdict follows its own ratio spread, printed beside it with general's and concat's.
void check_step5_full(const RunResult& r, const fs::path& dir) {
  auto mat = [&](const char* n) { return npy_to_mat(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  const Mat times = mat("score_times"), spreads = mat("score_ratio_spreads");
  REQUIRE(spreads.shape(0) == times.shape(0));
  const std::string flat = squeeze_spaces(r.out);
  CHECK(number_after(flat, "dot vs Bahdanau: ") == doctest::Approx(double(times(0, 0)) / double(times(0, 1))).epsilon(0.01));
  const std::size_t rows = times.shape(0);
  std::size_t faster = 0, slower = 0;
  for (std::size_t k = 0; k < rows; ++k) {
    CHECK(double(spreads(k, 0)) == doctest::Approx(1.0));
    const double z = std::log(double(times(k, 0)) / double(times(k, 1)));
    const double u = std::log(double(spreads(k, 1)));
    const char* word = z > u ? "faster, beyond it" : z < -u ? "slower, beyond it" : "within it";
    faster += z > u, slower += z < -u;
    CHECK_MESSAGE(flat.find(fmt::format("{:.2f} {:.2f} {:.2f} {}", double(spreads(k, 1)), double(spreads(k, 2)),
                                        double(spreads(k, 3)), word)) != std::string::npos,
                  "row " << k << ": " << word);
  }
  const std::string verdict =
      slower > 0        ? fmt::format("slower than Bahdanau beyond the spread at {} of {} sizes", slower, rows)
      : faster == rows  ? fmt::format("faster than Bahdanau at all {} sizes, each beyond its ratio's spread", rows)
                        : fmt::format("faster beyond the spread at {} of {} sizes, within it at the others", faster, rows);
  CHECK_MESSAGE(flat.find("(S = 60) — " + verdict) != std::string::npos, verdict);
  CHECK(flat.find("the two scores with S·A tanh calls (Bahdanau, concat) against the two without (dot, general), size "
                  "by size: ") != std::string::npos);
  CHECK(flat.find("--full adds each timing's spread") == std::string::npos);
}
}  // namespace

TEST_CASE("chapter 02 runs every step; the scores recompute; what it prints agrees with its export") {
  const fs::path dir = scratch_dir("ch02-export");
  const RunResult r = check_chapter_runs(kProgram02, {"--no-color", "--export", dir.string()});
  seq2seq_pins::check_widths(r.out);
  CHECK(r.has("Chapter 02 · Luong attention"));
  CHECK(r.has("luong_dot_scores (10)"));
  CHECK(r.has("Bahdanau µs"));
  CHECK(r.has("--time-training measures it"));
  CHECK_FALSE(r.has("ms / step"));
  CHECK_FALSE(r.has("articles'"));
  CHECK_FALSE(r.has("freshly initialised"));
  CHECK(r.has("Luong global concat: loaded"));
  std::set<std::string> names;
  const auto manifest = read_json(dir / "manifest.json");
  for (const auto& t : manifest["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"h_t", "H", "W_a", "h_t_dot", "H_dot", "h_t_concat", "H_concat", "W_c", "v_c", "luong_dot_scores",
                        "luong_general_scores", "luong_concat_scores", "alpha_global", "alpha_local_m", "alpha_local_p",
                        "local_p_positions", "local_p_alignment", "general_alignment", "reference_alignment",
                        "score_times", "score_sizes"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << std::string(n));
  auto vec = [&](const char* n) { return npy_to_vec(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  auto mat = [&](const char* n) { return npy_to_mat(read_npy((dir / (std::string(n) + ".npy")).string()), n); };

  // Step 2: each model's scores from its own exported states and weights, in double.
  const Vec h = vec("h_t"), hd = vec("h_t_dot"), hc = vec("h_t_concat"), vc = vec("v_c");
  const Vec dot = vec("luong_dot_scores"), gen = vec("luong_general_scores"), cat = vec("luong_concat_scores");
  const Mat H = mat("H"), Hd = mat("H_dot"), Hc = mat("H_concat"), Wa = mat("W_a"), Wc = mat("W_c");
  const std::size_t S = H.shape(0), He = H.shape(1), A = vc.size();
  for (std::size_t j = 0; j < S; ++j) {
    double d = 0, g = 0, c = 0;
    for (std::size_t k = 0; k < He; ++k) {
      d += double(hd(k)) * Hd(j, k);
      double q = 0;
      for (std::size_t i = 0; i < h.size(); ++i) q += double(h(i)) * Wa(i, k);
      g += q * H(j, k);
    }
    for (std::size_t a = 0; a < A; ++a) {
      double pre = 0;
      for (std::size_t i = 0; i < hc.size(); ++i) pre += double(hc(i)) * Wc(i, a);
      for (std::size_t k = 0; k < He; ++k) pre += double(Hc(j, k)) * Wc(hc.size() + k, a);
      c += double(vc(a)) * std::tanh(pre);
    }
    CHECK(std::abs(d - dot(j)) < 1e-3 * std::max(1.0, std::abs(d)));
    CHECK(std::abs(g - gen(j)) < 1e-3 * std::max(1.0, std::abs(g)));
    CHECK(std::abs(c - cat(j)) < 1e-4 * std::max(1.0, std::abs(c)));
  }
  auto top = [](const Vec& v) {
    std::size_t b = 0;
    for (std::size_t j = 1; j < v.size(); ++j) if (v(j) > v(b)) b = j;
    return b;
  };
  const auto t = read_json(dir / "translations.json");
  // The sentence as printed ("source:    w w …"), and each model's largest score on it.
  const std::size_t at = r.out.find("source:    ");
  REQUIRE(at != std::string::npos);
  const Labels src = seq2seq_pins::words_of(r.out.substr(at + 11, r.out.find('\n', at) - at - 11));
  REQUIRE(src.size() == S);
  CHECK(r.has(fmt::format("largest score: dot \"{}\", general \"{}\", concat \"{}\"", src[top(dot)], src[top(gen)],
                          src[top(cat)])));
  // alpha_global = softmax(general scores)
  double gmax = -1e300;
  for (std::size_t j = 0; j < S; ++j) gmax = std::max(gmax, double(gen(j)));
  double z = 0;
  for (std::size_t j = 0; j < S; ++j) z += std::exp(double(gen(j)) - gmax);
  const Vec ag = vec("alpha_global");
  for (std::size_t j = 0; j < S; ++j) CHECK(std::abs(std::exp(double(gen(j)) - gmax) / z - ag(j)) < 1e-5);
  double sum = 0;
  for (float x : vec("alpha_local_m")) sum += x;
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));

  // Step 3: the hit counts read off the exported maps against the exported reference.
  const Vec ref = vec("reference_alignment");
  auto hits = [&](const Mat& a) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < a.shape(0) && i < ref.size(); ++i) {
      std::size_t b = 0;
      for (std::size_t j = 1; j < a.shape(1); ++j) if (a(i, j) > a(i, b)) b = j;
      n += b == std::size_t(ref(i));
    }
    return n;
  };
  CHECK(r.has(fmt::format("largest α on the word being translated: local-p {} of {}, global general {} of {} output words",
                          hits(mat("local_p_alignment")), ref.size(), hits(mat("general_alignment")), ref.size())));
  // Step 3's largest local-p miss, and whether the windowless global model looks at that word's source
  // (from the exported maps; either sentence can be the one printed, so both outcomes are checked).
  {
    const Mat pos = mat("local_p_positions"), ga = mat("general_alignment");
    std::size_t worst = pos.shape(0);
    double miss = 0.0;
    for (std::size_t k = 0; k < pos.shape(0); ++k)
      if (double(pos(k, 1)) < double(S) && std::abs(double(pos(k, 0) - pos(k, 1))) > miss)
        miss = std::abs(double(pos(k, 0) - pos(k, 1))), worst = k;
    // (printed only where both models write the same word at that row)
    if (worst < pos.shape(0) && worst < ga.shape(0) && r.has("the global-general model, with no window,")) {
      std::size_t b = 0;
      for (std::size_t j = 1; j < ga.shape(1); ++j) if (ga(worst, j) > ga(worst, b)) b = j;
      const bool looks = b == std::size_t(pos(worst, 1));
      CHECK(r.has(looks ? "with no window, looks hardest at \"" + src[b] + "\""
                        : "while looking hardest at \"" + src[b] + "\""));
      CHECK_FALSE(r.has(looks ? "so the window is not the cause" : "this miss is local-p's own"));
    }
  }

  // Step 4: every model's figures recompute from translations.json; each gap and verdict printed
  // follows results.json.
  const auto j = read_json(dir / "results.json");
  for (const char* m : {"luong_dot", "luong_general", "luong_concat", "luong_local_p", "bahdanau"}) seq2seq_pins::check_recomputed(j, t, m);
  // Pinned from the shipped checkpoints (one decimal; evaluation is deterministic).
  check_pinned(j, "luong_dot",
               std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.9, 99.6, 99.8}, {99.8, 98.1, 99.5}, {99.3, 95.9, 98.7}, {98.2, 91.1, 97.0}});
  check_pinned(j, "luong_general",
               std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.8, 99.1, 99.8}, {98.8, 94.7, 99.0}, {98.8, 93.7, 98.1}, {97.3, 87.1, 95.2}});
  check_pinned(j, "luong_concat",
               std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.7, 99.1, 99.6}, {98.8, 95.7, 99.2}, {98.4, 89.1, 98.2}, {97.9, 87.1, 97.2}});
  check_pinned(j, "luong_local_p",
               std::vector<std::array<double, 3>>{{99.7, 98.2, 99.8}, {98.8, 91.6, 99.4}, {99.0, 89.7, 99.0}, {98.4, 81.2, 98.4}, {98.6, 77.8, 98.5}, {97.6, 68.3, 94.7}});
  check_pinned(j, "bahdanau",
               std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.7, 99.1, 100.0}, {100.0, 99.5, 100.0}, {99.8, 97.7, 99.6}, {99.5, 96.9, 99.5}});
  std::string closest;
  double closest_gap = 1e300;
  for (const char* m : {"luong_dot", "luong_general", "luong_concat", "luong_local_p"}) {
    double worst = 0.0;
    std::string row = m;
    for (const char* metric : {"bleu_by_length", "exact_match_by_length", "token_accuracy_by_length"}) {
      double g = 0.0;
      std::string at;
      for (const auto& b : kBuckets) {
        const double d = seq2seq_pins::figure(j, metric, m, b) - seq2seq_pins::figure(j, metric, "bahdanau", b);
        if (at.empty() || std::abs(d) > std::abs(g) + 1e-9) g = d, at = b;
      }
      row += fmt::format("  {:+.1f} ({})", g, at);
      worst = std::max(worst, std::abs(g));
    }
    const char* word = worst <= 3.0 + 1e-9 ? "match" : worst <= 10.0 + 1e-9 ? "close" : "no match";
    CHECK_MESSAGE(r.has(row + "  " + word), row << "  " << word);
    if (worst < closest_gap - 1e-9) closest_gap = worst, closest = m;
  }
  // The closest model, step 4 and the takeaway: whichever the figures make it.
  CHECK(squeeze_spaces(r.out).find("closest to Bahdanau: " + closest + " (largest gap") != std::string::npos);
  CHECK(squeeze_spaces(r.out).find("Closest to Bahdanau of the 4 Luong models: " + closest + ",") != std::string::npos);
  // Step 5 (default lesson): the operation counts, the order over all rounds, and no per-size verdict
  // (those are --full's: under load they change from run to run; checked in the --time-training case).
  const Mat times = mat("score_times"), sizes = mat("score_sizes");
  REQUIRE(times.shape(0) == sizes.shape(0));
  const std::string flat = squeeze_spaces(r.out);
  CHECK(flat.find("dot vs Bahdanau: ") == std::string::npos);
  CHECK(flat.find("--full adds each timing's spread and a verdict at each size") != std::string::npos);
  // the operation counts, from the sizes of the longest-S row at the smallest hidden (S = 60, 128)
  CHECK(flat.find("what one call computes at S = 60, hidden = 128, A = 64") != std::string::npos);
  CHECK(r.has("bahdanau 19712 3840 60"));  // 128·64 + 60·64 + 60·128 multiply-adds; 60·64 tanh; 60 exp
  CHECK(r.has("general 31744 0 60"));      // 128² + 2·60·128
  CHECK(flat.find("by multiply-adds alone, general (31744) would take 1.61× Bahdanau's time (19712)") !=
        std::string::npos);
  // Bahdanau and concat count the same work; the range of their ratio is the exported times'
  double lo = 1e300, hi = 0.0;
  for (std::size_t k = 0; k < times.shape(0); ++k) {
    const double g = double(times(k, 0)) / double(times(k, 3));
    lo = std::min(lo, g), hi = std::max(hi, g);
  }
  CHECK(flat.find(fmt::format("yet Bahdanau ÷ concat ran from {:.2f}× to {:.2f}× over the {} sizes", lo, hi,
                              times.shape(0))) != std::string::npos);
  // the order over all rounds: step 5 and the takeaway give the same count, and the word follows it
  const std::string order = "took longer than both without (dot, general) in ";
  const std::size_t order_at = flat.find(order);
  REQUIRE(order_at != std::string::npos);
  const bool only = flat.compare(order_at + order.size(), 5, "only ") == 0;
  const double held = number_after(flat.substr(order_at), order + (only ? "only " : ""));
  const double total = number_after(flat, "round by round, over all ");
  CHECK(held >= 0.0);
  CHECK(total >= held);
  CHECK(only == !(held > total / 2.0));
  CHECK(flat.find(fmt::format("took longer than the two without (dot, general) in {:.0f} of {:.0f} timing rounds ({}",
                              held, total, held == total ? "all of them" : held > total / 2.0 ? "most of them" : "not most of them")) !=
        std::string::npos);
  CHECK(flat.find("what is stable and what is not: a × is one run's figure") != std::string::npos);
  CHECK(r.has("Takeaway"));
  CHECK(flat.find("are each checkpoint's own training record") != std::string::npos);
  // their range, from the four recorded times printed in step 1
  std::vector<double> recorded;
  for (std::size_t at = flat.find("trained earlier in "); at != std::string::npos;
       at = flat.find("trained earlier in ", at + 1))
    recorded.push_back(number_after(flat.substr(at), "trained earlier in "));
  REQUIRE(recorded.size() == 4);
  const auto [t_lo, t_hi] = std::minmax_element(recorded.begin(), recorded.end());
  CHECK(flat.find(fmt::format("They run from {:.1f} s (", *t_lo)) != std::string::npos);
  CHECK(flat.find(fmt::format("to {:.1f} s (", *t_hi)) != std::string::npos);
  CHECK(flat.find(fmt::format("{:.0f}× apart, and the files do not say why", *t_hi / *t_lo)) != std::string::npos);
}

TEST_CASE("chapter 02 --time-training: step 6 with the speed ratios, their conditions and a verdict that follows them") {
  const fs::path dir = scratch_dir("ch02-steps");
  const RunResult r =
      check_chapter_runs(kProgram02, {"--no-color", "--full", "--time-training", "--export", dir.string()});
  seq2seq_pins::check_widths(r.out);
  check_step5_full(r, dir);
  CHECK(r.has("Step 6/6"));
  CHECK(r.has("ms / step"));
  CHECK(r.has("conditions: this CPU, 1 OpenBLAS thread"));
  const Vec ms = npy_to_vec(read_npy((dir / "step_times.npy").string()), "step_times");
  REQUIRE(ms.size() == 5);  // bahdanau, dot, general, concat, local-p
  const double general = std::round(100.0 * double(ms(0)) / double(ms(2))) / 100.0;
  const std::string flat = squeeze_spaces(r.out);
  CHECK(number_after(flat, "Here: global-general runs ") == doctest::Approx(general).epsilon(0.011));
  const double printed = number_after(flat, "Here: global-general runs ");
  // judged against the ratio's spread, printed beside it
  const double spread = number_after(flat, "per training step (ratio spread ");
  const char* claim = std::log(printed / 2.0) >= std::log(spread)    ? "held (at or beyond its upper end)"
                      : std::log(printed / 1.5) >= std::log(spread)  ? "held"
                      : std::log(printed / 1.5) < -std::log(spread) ? "did not hold (below 1.5× beyond the spread)"
                                                                     : "got no verdict (1.5× lies within the spread)";
  CHECK(flat.find(std::string("in this run the claim ") + claim + ".") != std::string::npos);
  CHECK(flat.find(std::string("the source article's 1.5–2× claim ") + claim + " in this run") != std::string::npos);
  // the fastest model per step, from the exported times
  const char* names[] = {"bahdanau", "luong_dot", "luong_general", "luong_concat", "luong_local_p"};
  std::size_t fastest = 0;
  for (std::size_t k = 1; k < 5; ++k)
    if (ms(k) < ms(fastest)) fastest = k;
  CHECK(r.has(std::string("fastest per training step in this run: ") + names[fastest]));
  CHECK(r.has("Step 6/6"));
}

TEST_CASE("chapter 02: a missing or corrupt checkpoint is a clear error; bad flags exit 2") {
  const fs::path dir = scratch_dir("ch02-bad");
  fs::create_directories(dir);
  RunResult r = run_program(kProgram02, {"--quiet", "--checkpoint", (dir / "nope.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("nope.safetensors"));
  r = run_program(kProgram02, {"--quiet", "--checkpoint-dir", dir.string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("luong_dot.safetensors"));
  fs::remove_all(dir);
  CHECK(run_program(kProgram02, {"--steps", "0"}).status == 2);
  CHECK(run_program(kProgram02, {"--bogus"}).status == 2);
}
