// The FMA-peak study (attn/studies/peak_flops.hpp): the timed loop must really compute what it
// counts — its checksum is recomputed in plain scalar code for every unit this CPU has — and
// bad arguments are refused. No speed is asserted (chapter 11 prints the figures).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "attn/studies/peak_flops.hpp"

using namespace attn;

TEST_CASE("peak_fma_gflops: every available unit computes the loop it times") {
  const CpuVectorUnits u = cpu_vector_units();
  std::vector<std::string> units = {"scalar"};
  if (u.sse) units.push_back("sse");
  if (u.avx2) units.push_back("avx2");
  if (u.avx512) units.push_back("avx512");
  CHECK(widest_vector_unit() == units.back());
  for (const auto& unit : units) {
    CAPTURE(unit);
    const PeakFma p = peak_fma_gflops(unit, 2, 1000, 1);
    CHECK(p.unit == unit);
    CHECK(p.threads == 2);
    CHECK(std::isfinite(p.gflops));
    CHECK(p.gflops > 0.0);
    // The rate is the counted work over the best round's time.
    CHECK(p.flops() == doctest::Approx(2.0 * p.accumulators * vector_lanes(unit) * 1000 * 2));
    CHECK(p.gflops == doctest::Approx(p.flops() / p.seconds / 1e9));
    // Bit-for-bit the scalar recomputation: the loop ran every step on every lane.
    CHECK(p.checksum == peak_fma_reference_checksum(unit, 1000));
    CHECK(p.checksum != peak_fma_reference_checksum(unit, 999));
  }
}

TEST_CASE("peak_fma_gflops refuses a unit the CPU lacks, an unknown unit and bad counts") {
  CHECK_THROWS_AS(peak_fma_gflops("avx1024", 1, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(peak_fma_gflops("scalar", 0, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(peak_fma_gflops("scalar", 1, 0, 1), std::invalid_argument);
  if (!cpu_vector_units().avx512) CHECK_THROWS_AS(peak_fma_gflops("avx512", 1, 10, 1), std::invalid_argument);
  CHECK(vector_lanes("avx512") == 16);
  CHECK(vector_lanes("avx2") == 8);
  CHECK(vector_lanes("sse") == 4);
  CHECK(vector_lanes("scalar") == 1);
}

TEST_CASE("cpu_model_name_from_cpuinfo: the first 'model name' line, trimmed; none gives an empty name") {
  CHECK(cpu_model_name_from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor  \n"
                                    "model name\t: other\n") == "AMD EPYC 9654 96-Core Processor");
  CHECK(cpu_model_name_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n").empty());  // e.g. arm64
  CHECK(cpu_model_name_from_cpuinfo("model name\t:\n").empty());
  CHECK(cpu_model_name().size() < 256);
}

TEST_CASE("cpu_clock_ghz_from_cpuinfo: the first 'cpu MHz' line in GHz; none, or a bad figure, gives 0") {
  CHECK(cpu_clock_ghz_from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.134\n"
                                   "cpu MHz\t\t: 3000.0\n") == doctest::Approx(2.596134));
  CHECK(cpu_clock_ghz_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n") == 0.0);  // e.g. arm64
  CHECK(cpu_clock_ghz_from_cpuinfo("cpu MHz\t\t: nan\n") == 0.0);
  CHECK(cpu_clock_ghz() >= 0.0);
  const double load = load_average();
  CHECK((std::isnan(load) || load >= 0.0));
}
