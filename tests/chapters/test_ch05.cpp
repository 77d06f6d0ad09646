// Chapter 05 end to end: every step prints; the reversal table shows none/ALiBi symmetric and the
// others not; the export has the exact names of the issue and the .npy files recompute
// (sinusoidal formula, q_rot from q and the cos/sin tables, ALiBi bias from the slopes); bad flags exit 2.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

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
  CHECK(r.has("the same set of rows, only reordered"));
  CHECK(r.has("M_k does not depend on pos"));
  CHECK(r.has("position 16 has no learned row"));
  CHECK(r.has("only m − n matters"));
  CHECK(r.has("slope 0: max |ALiBi − no positions| = 0.0e+00"));
  CHECK(r.has("Length extrapolation, measured"));
  CHECK(r.has("RoPE: 99.5% at L → 71.9% at 4L; ALiBi: 98.4% → 96.6%"));  // from the shipped checkpoints
  CHECK(r.has("did NOT hold"));
  CHECK(r.has("Takeaway"));
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

TEST_CASE("chapter 05 bad flags exit 2 naming the flag") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--d-model", "7"}, {"--d-model", "2"}, {"--positions", "4"}, {"--heads", "0"}, {"--sentence", "猫"}}) {
    const RunResult r = run_program("05_positional_encoding", args);
    CHECK_MESSAGE(r.status == 2, args[0] << " " << args[1] << " gave " << r.status);
    CHECK_MESSAGE(r.err.find(args[0]) != std::string::npos, r.err);
  }
}
