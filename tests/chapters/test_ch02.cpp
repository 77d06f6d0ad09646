// Chapter 02 end to end, from the shipped checkpoints data/ch02/luong_{dot,general,local_p} and
// data/ch01/bahdanau: every step runs; the three exported score vectors recompute from the exported
// states and weights (dot = H·h_t, general = H·(h_t·W_a)ᵀ, concat = v_cᵀtanh([h_t; h̄_s]·W_c)); the
// by-length figures are pinned; global-general stays within 3 BLEU of Bahdanau in every bucket; the
// speed ratios are printed with their conditions; bad files and flags fail cleanly.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

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
}  // namespace

TEST_CASE("chapter 02 runs every step; --time-training adds step 6 with the speed ratios and their conditions") {
  const RunResult d = run_program(kProgram02, {"--no-color"});
  REQUIRE_MESSAGE(d.status == 0, d.err);
  for (int s = 1; s <= 5; ++s) CHECK(d.has("Step " + std::to_string(s) + "/5"));
  CHECK_FALSE(d.has("Step 6/"));
  CHECK_FALSE(d.has("ms / step"));
  CHECK(d.has("--time-training measures it"));
  CHECK(d.has("dot vs Bahdanau: "));
  const RunResult r = run_program(kProgram02, {"--no-color", "--time-training"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  for (int s = 1; s <= 6; ++s) CHECK(r.has("Step " + std::to_string(s) + "/6"));
  CHECK(!r.has("Step 7/"));
  CHECK(r.has("Chapter 02 · Luong attention"));
  CHECK(r.has("luong_dot_scores (10)"));
  CHECK(r.has("Bahdanau µs"));
  CHECK(r.has("ms / step"));
  CHECK(r.has("conditions: this CPU, 1 OpenBLAS thread"));
  CHECK((r.has("the claim held") || r.has("the claim did not hold")));
  CHECK(r.has("Takeaway"));
}

TEST_CASE("chapter 02 --export: the three scores recompute from the exported states and weights") {
  const fs::path dir = scratch_dir("ch02-export");
  const RunResult r = run_program(kProgram02, {"--quiet", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::set<std::string> names;
  const auto manifest = read_json(dir / "manifest.json");
  for (const auto& t : manifest["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"h_t", "H", "W_a", "W_c", "v_c", "luong_dot_scores", "luong_general_scores", "luong_concat_scores",
                        "alpha_global", "alpha_local_m", "alpha_local_p", "local_p_positions"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << std::string(n));
  auto vec = [&](const char* n) { return npy_to_vec(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  auto mat = [&](const char* n) { return npy_to_mat(read_npy((dir / (std::string(n) + ".npy")).string()), n); };
  const Vec h = vec("h_t"), vc = vec("v_c"), dot = vec("luong_dot_scores"), gen = vec("luong_general_scores"),
            cat = vec("luong_concat_scores"), ag = vec("alpha_global");
  const Mat H = mat("H"), Wa = mat("W_a"), Wc = mat("W_c");
  const std::size_t S = H.shape(0), He = H.shape(1), Hd = h.size(), A = vc.size();
  double gmax = -1e300;
  for (std::size_t j = 0; j < S; ++j) {
    double d = 0, g = 0, c = 0;
    for (std::size_t k = 0; k < He; ++k) {
      d += double(h(k)) * H(j, k);
      double q = 0;
      for (std::size_t i = 0; i < Hd; ++i) q += double(h(i)) * Wa(i, k);
      g += q * H(j, k);
    }
    for (std::size_t a = 0; a < A; ++a) {
      double pre = 0;
      for (std::size_t i = 0; i < Hd; ++i) pre += double(h(i)) * Wc(i, a);
      for (std::size_t k = 0; k < He; ++k) pre += double(H(j, k)) * Wc(Hd + k, a);
      c += double(vc(a)) * std::tanh(pre);
    }
    CHECK(std::abs(d - dot(j)) < 1e-4);
    CHECK(std::abs(g - gen(j)) < 1e-3 * std::max(1.0, std::abs(g)));
    CHECK(std::abs(c - cat(j)) < 1e-4);
    gmax = std::max(gmax, double(gen(j)));
  }
  // alpha_global = softmax(general scores)
  double z = 0;
  for (std::size_t j = 0; j < S; ++j) z += std::exp(double(gen(j)) - gmax);
  for (std::size_t j = 0; j < S; ++j) CHECK(std::abs(std::exp(double(gen(j)) - gmax) / z - ag(j)) < 1e-5);
  // local-m weights are zero outside their window and sum to 1 inside it.
  const Vec am = vec("alpha_local_m");
  double sum = 0;
  for (float x : am) sum += x;
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("chapter 02 reproduces the pinned BLEU by length; global-general within 3 BLEU of Bahdanau") {
  const fs::path dir = scratch_dir("ch02-results");
  const RunResult r = run_program(kProgram02, {"--quiet", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = read_json(dir / "results.json");
  check_pinned(j, "luong_dot", 
              std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.9, 99.6, 99.8}, {99.8, 98.1, 99.5}, {99.3, 95.9, 98.7}, {98.2, 91.1, 97.0}});
  check_pinned(j, "luong_general", 
              std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.8, 99.1, 99.8}, {98.8, 94.7, 99.0}, {98.8, 93.7, 98.1}, {97.3, 87.1, 95.2}});
  check_pinned(j, "luong_local_p", 
              std::vector<std::array<double, 3>>{{99.7, 98.2, 99.8}, {98.8, 91.6, 99.4}, {99.0, 89.7, 99.0}, {98.4, 81.2, 98.4}, {98.6, 77.8, 98.5}, {97.6, 68.3, 94.7}});
  check_pinned(j, "bahdanau",
              std::vector<std::array<double, 3>>{{100.0, 100.0, 100.0}, {100.0, 100.0, 100.0}, {99.7, 99.1, 100.0}, {100.0, 99.5, 100.0}, {99.8, 97.7, 99.6}, {99.5, 96.9, 99.5}});
  for (const auto& b : kBuckets) {
    INFO("bucket " << b);
    CHECK(std::abs(j["bleu_by_length"]["luong_general"][b].get<double>() - j["bleu_by_length"]["bahdanau"][b].get<double>()) <= 3.0);
  }
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
