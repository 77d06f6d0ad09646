// A series of numbers (a loss curve) as one line of block characters ▁▂▃▄▅▆▇█, lowest value ▁,
// highest █, averaged down to at most `width` characters:
//   sparkline({4.1, 4.0, 2.2, 0.3}) == "██▅▁"
#pragma once

#include <string>
#include <vector>

namespace attn {

std::string sparkline(const std::vector<float>& values, std::size_t width = 60);

}  // namespace attn
