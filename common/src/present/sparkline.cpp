// One-line charts (see attn/present/sparkline.hpp).
#include "attn/present/sparkline.hpp"

#include <algorithm>
#include <cmath>

namespace attn {

std::string sparkline(const std::vector<float>& values, std::size_t width, bool log_scale) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width == 0) return "";
  const bool use_log = log_scale && std::all_of(values.begin(), values.end(), [](float v) { return v > 0; });
  const std::size_t n = std::min(width, values.size());
  std::vector<double> cells(n, 0.0);
  for (std::size_t c = 0; c < n; ++c) {  // cell c averages values [c·N/n, (c+1)·N/n): at least one
    const std::size_t a = c * values.size() / n, b = (c + 1) * values.size() / n;
    for (std::size_t i = a; i < b; ++i) cells[c] += use_log ? std::log10(double(values[i])) : double(values[i]);
    cells[c] /= double(b - a);
  }
  const auto [lo, hi] = std::minmax_element(cells.begin(), cells.end());
  std::string out;
  for (double v : cells) {
    const double f = *hi > *lo ? (v - *lo) / (*hi - *lo) : 0.5;
    out += kBlocks[std::min<std::size_t>(7, std::size_t(std::floor(f * 8.0)))];
  }
  return out;
}

}  // namespace attn
