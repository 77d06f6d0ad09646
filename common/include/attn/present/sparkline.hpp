// A series of numbers (a loss curve) as one line of block characters ▁▂▃▄▅▆▇█, the one sparkline
// of every chapter. The series is averaged down to at most `width` cells (cell c averages values
// [c·N/w, (c+1)·N/w)); each cell's height is f = (v − lo) / (hi − lo) between the smallest and the
// largest cell, drawn as block ⌊8·f⌋ (the top one for f = 1): eight equal bands, the lowest value
// ▁, the highest █. A flat series (hi = lo) draws f = ½ everywhere (▅). With log_scale, and only
// when every value is positive, cells average log10 of the values (a loss that falls by decades).
//   sparkline({4.1, 4.0, 2.2, 0.3}) == "██▅▁"
#pragma once

#include <string>
#include <vector>

namespace attn {

std::string sparkline(const std::vector<float>& values, std::size_t width = 60, bool log_scale = false);

}  // namespace attn
