// Chapter 01 end to end, from the shipped checkpoints data/ch01/bahdanau.safetensors and
// data/ch00/no_attention.safetensors: every step runs; the exported step recomputes
// (energies = v_aᵀ tanh(s_prev·W_a + H·U_a), alpha = softmax(energies), context = alphaᵀH); the
// printed alignment counts and misses follow the exported map and reference; the by-length
// figures recompute from translations.json, the printed verdicts follow them, and they are pinned
// and meet the issue's "done when"; bad files and flags fail cleanly.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <regex>
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
const char* kProgram01 = "01_bahdanau";
}  // namespace

TEST_CASE("chapter 01 runs every step; energies, alpha and context recompute; what it prints agrees with its export") {
  const fs::path dir = scratch_dir("ch01-export");
  const RunResult r = check_chapter_runs(kProgram01, {"--no-color", "--export", dir.string()});
  seq2seq_pins::check_widths(r.out);
  CHECK(r.has("Chapter 01 · Bahdanau attention"));
  CHECK(r.has("Bahdanau (additive): loaded"));
  CHECK(r.has("heatmap  rows: output words, columns: source words"));
  CHECK(r.has("Takeaway"));
  CHECK_FALSE(r.has("articles:"));
  CHECK_FALSE(r.has("RNNenc-"));
  CHECK(r.has("RNNsearch-50 26.75 vs RNNencdec-50 17.82"));
  std::set<std::string> names;
  const auto manifest = read_json(dir / "manifest.json");
  for (const auto& t : manifest["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"s_prev", "H", "W_a", "U_a", "v_a", "energies", "alpha", "context", "alignment"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << std::string(n));
  auto vec = [&](const char* n) { return npy_to_vec(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  auto mat = [&](const char* n) { return npy_to_mat(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  const Vec s = vec("s_prev"), va = vec("v_a"), e = vec("energies"), alpha = vec("alpha"), c = vec("context");
  const Mat H = mat("H"), Wa = mat("W_a"), Ua = mat("U_a");
  const std::size_t S = H.shape(0), He = H.shape(1), A = va.size();
  REQUIRE(e.size() == S);
  // Recompute in double.
  std::vector<double> q(A, 0.0);
  for (std::size_t k = 0; k < A; ++k)
    for (std::size_t i = 0; i < s.size(); ++i) q[k] += double(s(i)) * Wa(i, k);
  double emax = -1e300;
  std::vector<double> e_ref(S, 0.0);
  for (std::size_t j = 0; j < S; ++j) {
    for (std::size_t k = 0; k < A; ++k) {
      double key = 0;
      for (std::size_t i = 0; i < He; ++i) key += double(H(j, i)) * Ua(i, k);
      e_ref[j] += double(va(k)) * std::tanh(q[k] + key);
    }
    CHECK(std::abs(e_ref[j] - e(j)) < 1e-4);
    emax = std::max(emax, double(e(j)));
  }
  double z = 0;
  for (std::size_t j = 0; j < S; ++j) z += std::exp(double(e(j)) - emax);
  for (std::size_t j = 0; j < S; ++j) CHECK(std::abs(std::exp(double(e(j)) - emax) / z - alpha(j)) < 1e-6);
  for (std::size_t k = 0; k < He; ++k) {
    double ck = 0;
    for (std::size_t j = 0; j < S; ++j) ck += double(alpha(j)) * H(j, k);
    CHECK(std::abs(ck - c(k)) < 1e-5);
  }
  const Mat align = mat("alignment");
  CHECK(align.shape(1) == S);
  // Step 3: the printed largest α.
  double amax = 0.0;
  for (float x : alpha) amax = std::max(amax, double(x));
  CHECK(r.has(fmt::format("with α = {:.3f} —", amax)));
  // Step 5: hits and misses read off the exported map against the exported reference (the last
  // row is <eos>, not scored).
  const Vec ref = vec("reference_alignment");
  std::size_t hits = 0, total = 0, moved = 0, moved_hits = 0, misses = 0;
  for (std::size_t t = 0; t + 1 < align.shape(0) && t < ref.size(); ++t) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < S; ++j) if (align(t, j) > align(t, best)) best = j;
    ++total;
    hits += best == std::size_t(ref(t));
    misses += best != std::size_t(ref(t));
    if (std::size_t(ref(t)) != t) ++moved, moved_hits += best == std::size_t(ref(t));
  }
  const std::string flat = squeeze_spaces(r.out);
  CHECK(flat.find(fmt::format("{} of {} output words look hardest at the source word they translate (criterion: at least "
                              "80%: {})", hits, total,
                              double(hits) >= 0.8 * double(total) ? "holds" : double(hits) >= 0.5 * double(total) ? "partly" : "does not hold")) != std::string::npos);
  // Step 4: c_i beside the row of H that α weights most, their largest difference recomputed.
  {
    std::size_t top = 0;
    for (std::size_t j = 1; j < alpha.size(); ++j) if (alpha(j) > alpha(top)) top = j;
    double diff = 0.0;
    for (std::size_t k = 0; k < c.size(); ++k) diff = std::max(diff, std::abs(double(c(k)) - H(top, k)));
    CHECK(flat.find(fmt::format("look: α puts {:.3f} on", double(alpha(top)))) != std::string::npos);
    CHECK(flat.find(fmt::format("they differ by at most {:.3f} in any entry", diff)) != std::string::npos);
  }
  // Step 7: the parameter parts add up to the printed total (nothing else differs between the two models).
  CHECK(flat.find("everything else +0:") != std::string::npos);
  CHECK(r.has(fmt::format("of the {} words the toy language moves, {} look at the word they translate", moved, moved_hits)));
  // Step 5 over the test set: the diagonal baseline and the unmoved / moved split follow the printed counts.
  {
    std::smatch all, mv;
    REQUIRE(std::regex_search(flat, all, std::regex(R"((\d+) of (\d+) target words \()")));
    REQUIRE(std::regex_search(flat, mv, std::regex(R"(of the (\d+) words the toy language moves, (\d+) \()")));
    const double hits = std::stod(all[1]), total = std::stod(all[2]), moved_total = std::stod(mv[1]),
                 moved_hits = std::stod(mv[2]);
    CHECK(flat.find(fmt::format("a map that always looks straight down the diagonal would score {:.1f}% (the {:.0f} of "
                                "{:.0f} words that do not move); the model scores {:.1f}% on those and {:.1f}% on the "
                                "moved ones, so {:.0f} of its {:.0f} misses are moved words",
                                100.0 * (total - moved_total) / total, total - moved_total, total,
                                100.0 * (hits - moved_hits) / (total - moved_total), 100.0 * moved_hits / moved_total,
                                moved_total - moved_hits, total - hits)) != std::string::npos);
  }
  // Step 5 over the test set: the takeaway repeats the printed shares and follows the verdict.
  {
    const double share = number_after(flat, "target words (");
    REQUIRE(std::isfinite(share));
    CHECK(flat.find(fmt::format("over the 1200 test pairs, {:.1f}% of", share)) != std::string::npos);
    CHECK(flat.find(share >= 80.0 ? "The weights α are an alignment" : "only partly an alignment") != std::string::npos);
  }
  std::size_t printed_misses = 0;
  for (std::size_t at = r.out.find(") looks hardest at \""); at != std::string::npos; at = r.out.find(") looks hardest at \"", at + 1))
    ++printed_misses;
  CHECK(printed_misses == misses);

  // Step 6: the figures recompute from translations.json, and the printed verdicts follow them.
  const auto j = read_json(dir / "results.json"), t = read_json(dir / "translations.json");
  seq2seq_pins::check_recomputed(j, t, "bahdanau");
  seq2seq_pins::check_recomputed(j, t, "no_attention");
  {  // the wrong outputs, counted from translations.json alone
    const auto pairs = seq2seq_pins::pairs_of(t);
    const auto hyps = seq2seq_pins::hyps_of(t, "bahdanau");
    std::size_t wrong = 0, longer = 0;
    for (std::size_t k = 0; k < pairs.size(); ++k)
      if (hyps[k] != pairs[k].tgt) ++wrong, longer += hyps[k].size() > pairs[k].tgt.size();
    CHECK(r.has(wrong == 0 ? fmt::format("every one of the {} test outputs equals its reference", pairs.size())
                           : fmt::format("{} of the {} test outputs differ from their reference; {} of them run past "
                                         "the reference's end", wrong, pairs.size(), longer)));
  }
  check_pinned(j, "bahdanau",
               std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.7, 99.1, 100.0}, {100.0, 99.5, 100.0}, {99.8, 97.7, 99.6}, {99.5, 96.9, 99.5}});
  check_pinned(j, "no_attention",
               std::vector<std::array<double, 3>>{{68.4, 50.5, 82.0}, {24.7, 0.0, 33.4}, {13.6, 0.0, 18.6}, {11.9, 0.0, 12.3}, {10.2, 0.0, 9.7}, {9.9, 0.0, 8.2}});
  const auto& bb = j["bleu_by_length"]["bahdanau"];
  const auto& bn = j["bleu_by_length"]["no_attention"];
  // Done when: Bahdanau falls by at most 15% from 5-10 to 51-60 and beats no attention by ≥ 20 BLEU at 51-60.
  CHECK(bb["51-60"].get<double>() >= 0.85 * bb["5-10"].get<double>());
  CHECK(bb["51-60"].get<double>() >= bn["51-60"].get<double>() + 20.0);
  const double b0 = seq2seq_pins::figure(j, "bleu_by_length", "bahdanau", "5-10"),
               b5 = seq2seq_pins::figure(j, "bleu_by_length", "bahdanau", "51-60"),
               n5 = seq2seq_pins::figure(j, "bleu_by_length", "no_attention", "51-60");
  CHECK(r.has(fmt::format("Bahdanau: BLEU {:.1f} (5-10) -> {:.1f} (51-60), {:.1f}% lower (the course's criterion, at most 5%: {})", b0, b5,
                          100.0 * (1.0 - b5 / b0), 1.0 - b5 / b0 <= 0.05 ? "holds" : "partly")));
  CHECK(r.has(fmt::format("attention at 51-60: {:.1f} ({:+.1f} BLEU for attention, the two-direction encoder and the learned s_0 together; criterion, above 5 points: {})", n5, b5 - n5,
                          b5 - n5 > 5.0 ? "holds" : "within noise")));
}

TEST_CASE("chapter 01: a missing or corrupt checkpoint is a clear error; bad flags exit 2") {
  const fs::path dir = scratch_dir("ch01-bad");
  fs::create_directories(dir);
  RunResult r = run_program(kProgram01, {"--quiet", "--checkpoint", (dir / "nope.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("nope.safetensors"));
  { std::ofstream(dir / "short.safetensors") << "abc"; }
  r = run_program(kProgram01, {"--quiet", "--baseline", (dir / "short.safetensors").string()});
  CHECK(r.status == 1);
  CHECK(r.err_has("short.safetensors"));
  fs::remove_all(dir);
  CHECK(run_program(kProgram01, {"--steps", "-3"}).status == 2);
  CHECK(run_program(kProgram01, {"--seed", "x"}).status == 2);
}
