// The one sparkline: eight equal bands (⌊8·f⌋), lowest ▁ and highest █, averaging down to the
// width, a flat series at mid height, and the log scale only when every value is positive.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/present/sparkline.hpp"
#include "attn/present/terminal.hpp"

using namespace attn;

TEST_CASE("sparkline: eight equal bands from the lowest value (▁) to the highest (█)") {
  CHECK(sparkline({4.1f, 4.0f, 2.2f, 0.3f}) == "██▅▁");
  // f = 0, 1/8, …, 7/8, 1: each band once, the top band holding f = 7/8 and f = 1.
  std::vector<float> ramp;
  for (int i = 0; i <= 8; ++i) ramp.push_back(float(i));
  CHECK(sparkline(ramp) == "▁▂▃▄▅▆▇██");
  // Just below a band's edge stays in the band below (floor, not rounding).
  CHECK(sparkline({0.0f, 0.124f, 1.0f}) == "▁▁█");
  CHECK(sparkline({0.0f, 0.126f, 1.0f}) == "▁▂█");
}

TEST_CASE("sparkline: averaged down to the width, one cell per value when it fits") {
  std::vector<float> v(100);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i < 50 ? 10 : 0);
  const std::string s = sparkline(v, 10);
  CHECK(display_width(s) == 10);
  CHECK(s == "█████▁▁▁▁▁");
  CHECK(display_width(sparkline({1.0f, 2.0f, 3.0f}, 60)) == 3);
  // 3 values into 2 cells: [0, 1) and [1, 3), so the cells are 0 and (6 + 6) / 2.
  CHECK(sparkline({0.0f, 6.0f, 6.0f}, 2) == "▁█");
}

TEST_CASE("sparkline: empty, zero width, flat series") {
  CHECK(sparkline({}) == "");
  CHECK(sparkline({1.0f, 2.0f}, 0) == "");
  CHECK(sparkline({3.0f, 3.0f, 3.0f}) == "▅▅▅");
}

TEST_CASE("sparkline: log scale spreads a curve that falls by decades, only for positive values") {
  const std::vector<float> decades = {1000.0f, 100.0f, 10.0f, 1.0f};
  CHECK(sparkline(decades) == "█▁▁▁");            // linear: the last three are all near the bottom
  CHECK(sparkline(decades, 60, true) == "█▆▃▁");  // log10: 3, 2, 1, 0 -> f = 1, 2/3, 1/3, 0
  const std::vector<float> with_zero = {1000.0f, 100.0f, 0.0f};
  CHECK(sparkline(with_zero, 60, true) == sparkline(with_zero));  // log of 0: drawn linear
}
