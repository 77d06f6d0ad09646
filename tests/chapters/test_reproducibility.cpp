// What "same seed, same numbers" promises (README, --seed help): bit-identical exports for one
// OpenBLAS kernel and thread count; within 1e-6 of each other across kernels. Chapter 03's export
// is run with OPENBLAS_CORETYPE=Prescott (SSE3, every x86-64) and each wider kernel this CPU can
// run (Haswell: AVX2 + FMA; SkylakeX: AVX-512), single-threaded, and compared file by file.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/npy.hpp"
#include "run_program.hpp"

using namespace attn;
namespace fs = std::filesystem;

namespace {

std::map<std::string, NpyArray> export_with(const std::string& coretype, const fs::path& dir, std::string& header) {
  fs::create_directories(dir.parent_path());  // --export makes DIR itself, not the folders above it
  const RunResult r = run_program("03_self_attention", {"--export", dir.string(), "--seed", "11", "--no-color"},
                                  {"OPENBLAS_CORETYPE=" + coretype, "OPENBLAS_NUM_THREADS=1"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  header = r.out.substr(0, r.out.find('\n'));
  std::map<std::string, NpyArray> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".npy") files[e.path().filename().string()] = read_npy(e.path().string());
  return files;
}

}  // namespace

TEST_CASE("same seed: bit-identical for one kernel; within 1e-6 across OpenBLAS kernels") {
#if defined(__x86_64__)
  __builtin_cpu_init();
  std::vector<std::string> kernels = {"Prescott"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kernels.push_back("Haswell");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    kernels.push_back("SkylakeX");
  const fs::path root = scratch_dir("kernels");
  std::string header;
  const auto base = export_with("Prescott", root / "Prescott", header);
  REQUIRE(base.size() == 22);  // chapter 03's tensors
  CHECK(header.find("OpenBLAS Prescott") != std::string::npos);
  if (kernels.size() == 1) {
    MESSAGE("this CPU has neither AVX2 nor AVX-512: only Prescott's run-to-run identity is checked");
  }
  // The same kernel twice: every byte equal.
  std::string again_header;
  const auto again = export_with("Prescott", root / "again", again_header);
  for (const auto& [name, a] : base) {
    CAPTURE(name);
    CHECK(again.at(name).data == a.data);
  }
  for (std::size_t k = 1; k < kernels.size(); ++k) {
    CAPTURE(kernels[k]);
    const auto other = export_with(kernels[k], root / kernels[k], header);
    // The header names the kernel that ran, so two runs of one kernel cannot pass for two kernels.
    CHECK(header.find("OpenBLAS " + kernels[k]) != std::string::npos);
    double worst = 0.0;
    std::size_t differing = 0;
    for (const auto& [name, a] : base) {
      const NpyArray& b = other.at(name);
      REQUIRE(a.shape == b.shape);
      double d = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a.data[i] - b.data[i]));
      differing += d > 0.0;
      worst = std::max(worst, d);
    }
    MESSAGE(kernels[k] << " vs Prescott: " << differing << " of " << base.size() << " files differ, max |diff| = "
                       << worst);
    CHECK(worst <= 1e-6);
  }
  fs::remove_all(root);
#else
  MESSAGE("not x86-64: OpenBLAS kernel names differ; nothing compared");
#endif
}
