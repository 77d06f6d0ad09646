// Presentation: several multi-line blocks (heatmaps, small tables) printed next to each other, each
// under its title, padded by display width (so CJK labels and shading characters line up):
//   std::cout << side_by_side({format_heatmap(a, …), format_heatmap(b, …)}, {"head 1", "head 2"});
// Blocks must be plain text (no colour escapes): widths are measured on the visible characters.
#pragma once

#include <string>
#include <vector>

namespace attn {

// max_width > 0: blocks that would pass that many columns go on to a new row of blocks.
std::string side_by_side(const std::vector<std::string>& blocks, const std::vector<std::string>& titles = {},
                         std::size_t gap = 3, const std::string& indent = "  ", std::size_t max_width = 0);

}  // namespace attn
