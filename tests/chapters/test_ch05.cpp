// Chapter 05 end to end: every step prints; the reversal table shows none/ALiBi symmetric and the
// others not; the export has the exact names of the issue and the .npy files recompute
// (sinusoidal formula, q_rot from q and the cos/sin tables, ALiBi bias from the slopes); bad flags exit 2.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/position/alibi.hpp"
#include "attn/data/npy.hpp"
#include "attn/position/sinusoidal.hpp"
#include "attn/tensor/tensor_ops.hpp"
#include "check_chapter.hpp"

using namespace attn;
namespace fs = std::filesystem;

TEST_CASE("chapter 05 runs: 猫 吃 鱼 vs 鱼 吃 猫, each encoding, every property printed") {
  const RunResult r = check_chapter_runs("05_positional_encoding", {"--no-color"});
  CHECK(r.has("Chapter 05 · Positional encodings"));
  CHECK(r.has("\"猫 吃 鱼\""));
  CHECK(r.has("\"鱼 吃 猫\""));
  CHECK(r.has("position 16 has no learned row"));
  CHECK(r.has("Length extrapolation, measured"));
  CHECK(r.has("RoPE: 99.5% at L → 71.9% at 4L; ALiBi: 98.4% → 96.6%"));  // from the shipped checkpoints
  // the model without positions is set against the best order-blind reader, not credited to its mask
  CHECK(r.has("an order-blind vote (no model"));
  CHECK(r.has("none: "));
  CHECK_FALSE(r.has("the causal mask alone gives order"));
  CHECK(r.has("H = 8: a geometric sequence (ratio 0.5), head 0 the steepest"));
  CHECK(r.has("Takeaway"));
}

TEST_CASE("chapter 05 --heads 3: the slopes are not one geometric sequence, and the formula line says the rule used") {
  const RunResult r = run_program("05_positional_encoding", {"--no-color", "--heads", "3"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.has("H = 3 is not a power of 2"));
  CHECK(r.has("H = 3: not one geometric sequence; head 2 the steepest"));
  CHECK_FALSE(r.has("H = 3: a geometric sequence"));
  CHECK(r.has("m_h = 2^(−8(h+1)/2) for h < 2, 2^(−8(2(h − 2) + 1)/4) for h = 2 … H − 1"));
}

TEST_CASE("chapter 05 --export: exact names; sinusoidal, RoPE and ALiBi recompute from the files") {
  const fs::path dir = scratch_dir("ch05-export");
  const RunResult r = run_program("05_positional_encoding", {"--quiet", "--export", dir.string(), "--heads", "6"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::ifstream mf(dir / "manifest.json");
  REQUIRE(mf.good());
  const auto j = nlohmann::json::parse(mf);
  CHECK(j["chapter"] == "05");
  std::set<std::string> names;
  for (const auto& t : j["tensors"]) names.insert(t["name"].get<std::string>());
  for (const char* n : {"sinusoidal_pe", "rope_cos", "rope_sin", "alibi_slopes", "alibi_bias", "q", "k", "q_rot", "k_rot"})
    CHECK_MESSAGE(names.count(n) == 1, "missing export " << n);
  auto path = [&](const char* n) { return (dir / (std::string(n) + ".npy")).string(); };
  auto mat = [&](const char* n) { return npy_to_mat(read_npy(path(n)), n); };
  const Mat pe = mat("sinusoidal_pe");
  CHECK(shape_of(pe) == Shape{16, 8});
  CHECK(max_abs_diff(pe, sinusoidal_table(16, 8)) == 0.0);
  const Mat c = mat("rope_cos"), s = mat("rope_sin"), q = mat("q"), k = mat("k"), qr = mat("q_rot"), kr = mat("k_rot");
  CHECK(shape_of(c) == Shape{16, 4});
  for (const auto& [x, xr] : {std::pair<const Mat*, const Mat*>{&q, &qr}, {&k, &kr}})
    for (std::size_t t = 0; t < x->shape(0); ++t)
      for (std::size_t i = 0; i < 4; ++i) {
        CHECK(std::abs((*xr)(t, 2 * i) - ((*x)(t, 2 * i) * c(t, i) - (*x)(t, 2 * i + 1) * s(t, i))) < 1e-5);
        CHECK(std::abs((*xr)(t, 2 * i + 1) - ((*x)(t, 2 * i) * s(t, i) + (*x)(t, 2 * i + 1) * c(t, i))) < 1e-5);
      }
  const Vec slopes = npy_to_vec(read_npy(path("alibi_slopes")), "alibi_slopes");
  CHECK(slopes.size() == 6);
  const Tensor3 bias = npy_to_tensor3(read_npy(path("alibi_bias")), "alibi_bias");
  CHECK(shape_of(bias) == Shape{6, 16, 16});
  CHECK(max_abs_diff(bias, alibi_bias(slopes, 16)) == 0.0);
  fs::remove_all(dir);
}

TEST_CASE("chapter 05's printed figures and verdicts agree with its export") {
  const fs::path dir = scratch_dir("ch05-figures");
  const RunResult r = run_program("05_positional_encoding", {"--no-color", "--export", dir.string()});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  auto path = [&](const char* n) { return (dir / (std::string(n) + ".npy")).string(); };
  auto mat = [&](const char* n) { return npy_to_mat(read_npy(path(n)), n); };
  // Step 1: the reversed sentence's rows against the reversed rows.
  const Mat o = mat("output"), os = mat("output_swapped");
  double gap = 0.0;
  for (std::size_t i = 0; i < o.shape(0); ++i)
    for (std::size_t c = 0; c < o.shape(1); ++c) gap = std::max(gap, double(std::abs(os(i, c) - o(o.shape(0) - 1 - i, c))));
  CHECK(r.has(fmt::format("max |output_swapped − reversed(output)| = {:.1e}: {}", gap,
                          gap <= 1e-5 ? "the same set of rows, only reordered" : "the rows themselves changed")));
  // Step 3: the exported M_3 against PE(pos) written out by its formula, pos = 0 … 112.
  const Mat m3 = mat("sinusoidal_shift");
  const std::size_t d = m3.shape(0);
  auto pe = [&](std::size_t pos, std::size_t c) {
    const double w = std::pow(10000.0, -double(c / 2 * 2) / double(d));
    return c % 2 == 0 ? std::sin(double(pos) * w) : std::cos(double(pos) * w);
  };
  double shift_err = 0.0;
  for (std::size_t p = 0; p <= 112; ++p)
    for (std::size_t row = 0; row < d; ++row) {
      double s = 0.0;
      for (std::size_t c = 0; c < d; ++c) s += double(m3(row, c)) * pe(p, c);
      shift_err = std::max(shift_err, std::abs(s - pe(p + 3, row)));
    }
  CHECK(shift_err < 1e-5);
  CHECK(r.has("PE(pos + 3) = M_3·PE(pos) for every pos in 0 … 112"));
  // Step 3: the similarity rows at pos 0 and 7, recomputed from the formula; its dip and rise.
  const Mat sim = mat("pe_similarity");
  REQUIRE(sim.shape(0) == 2u);
  std::vector<double> f(sim.shape(1));
  for (std::size_t k = 0; k < f.size(); ++k) {
    for (std::size_t c = 0; c < d; ++c) f[k] += pe(0, c) * pe(k, c);
    CHECK(sim(0, k) == doctest::Approx(f[k]).epsilon(1e-4));
    double at7 = 0.0;
    for (std::size_t c = 0; c < d; ++c) at7 += pe(7, c) * pe(7 + k, c);
    CHECK(sim(1, k) == doctest::Approx(at7).epsilon(1e-4));
  }
  std::size_t dip = 0, rise = 0;
  for (std::size_t k = 1; k + 1 < f.size() && dip == 0; ++k)
    if (f[k] < f[k - 1] && f[k] <= f[k + 1]) dip = k;
  REQUIRE(dip > 0);
  for (std::size_t k = dip + 1; k < f.size(); ++k)
    if (rise == 0 || f[k] > f[rise]) rise = k;
  CHECK(r.has(fmt::format("it falls to {:.3f} at k = {}, then rises again to {:.3f} at k = {}", f[dip], dip, f[rise],
                          rise)));
  // The cited columns are in the printed matrix, not elided: both values appear in its "pos 0" row.
  const std::size_t at = r.out.find("pe_similarity (");
  REQUIRE(at != std::string::npos);
  const std::size_t row0 = r.out.find("pos 0", r.out.find('\n', r.out.find('\n', at) + 1));
  const std::string printed_row = r.out.substr(row0, r.out.find('\n', row0) - row0);
  CHECK(printed_row.find(fmt::format("{:.3f}", f[dip])) != std::string::npos);
  CHECK(printed_row.find(fmt::format("{:.3f}", f[rise])) != std::string::npos);
  CHECK(r.has("(as its file records)"));  // the loaded models' training, from their files
  CHECK(r.has("this step does not use --seed (5)"));  // step 7 is the same at any --seed, and says so
  CHECK(r.has("chance: a uniform guess over the 8 values has acc 1/8 = 12.5% and CE ln 8 = 2.079"));
  // Step 7: the table as exported (rows named in the manifest) and the claim about RoPE.
  std::ifstream mf(dir / "manifest.json");
  const auto j = nlohmann::json::parse(mf);
  const auto rows = j["extrapolation_rows"].get<std::vector<std::string>>();
  const Mat x = mat("extrapolation");
  REQUIRE(x.shape(0) == rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line = rows[i];
    CAPTURE(line);
    CHECK(r.has(fmt::format("{:.3f}  {:.1f}%", x(i, 0), 100.0 * x(i, 1))));
    if (rows[i] == "rope") {
      const double lost = 100.0 * (x(i, 1) - x(i, 5));
      CHECK(r.has(fmt::format("it lost {:.0f} — {}", lost, lost <= 2.0 ? "held" : "did NOT hold")));
    }
  }
  CHECK(std::isnan(x(2, 2)));  // learned: no row past L
  // Step 6: head 0's heatmap is slice 0 of the bias.
  const Tensor3 bias = npy_to_tensor3(read_npy(path("alibi_bias")), "alibi_bias");
  CHECK(max_abs_diff(mat("alibi_bias_head0"), slice_of(bias, 0)) == 0.0);
  fs::remove_all(dir);
}

TEST_CASE("chapter 05 --help: every option readable, the --d-model check in one name") {
  const RunResult h = run_program("05_positional_encoding", {"--help"});
  REQUIRE(h.status == 0);
  CHECK(h.has("--d-model UINT:EVEN in [4 - 64]=8"));
  CHECK(h.has("(2 to 12 words; default 猫 吃 鱼)"));
  CHECK_FALSE(h.has("AND (EVEN)"));
  const RunResult odd = run_program("05_positional_encoding", {"--d-model", "9"});
  CHECK(odd.status == 2);
  CHECK(odd.err_has("must be even"));
  const RunResult word = run_program("05_positional_encoding", {"--d-model", "eight"});
  CHECK(word.status == 2);
  CHECK(word.err_has("not a whole number"));
}

TEST_CASE("chapter 05 bad flags exit 2 naming the flag") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--d-model", "7"}, {"--d-model", "2"}, {"--positions", "4"}, {"--heads", "0"}, {"--sentence", "猫"},
        {"--train-steps", "50"}}) {  // --train-steps alone would change nothing: it needs --train
    const RunResult r = run_program("05_positional_encoding", args);
    CHECK_MESSAGE(r.status == 2, args[0] << " " << args[1] << " gave " << r.status);
    CHECK_MESSAGE(r.err.find(args[0]) != std::string::npos, r.err);
  }
}
