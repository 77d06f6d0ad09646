// Blocks of text side by side (see attn/present/side_by_side.hpp).
#include "attn/present/side_by_side.hpp"

#include <algorithm>
#include <sstream>

#include "attn/present/terminal.hpp"

namespace attn {

std::string side_by_side(const std::vector<std::string>& blocks, const std::vector<std::string>& titles, std::size_t gap,
                         const std::string& indent, std::size_t max_width) {
  std::vector<std::vector<std::string>> lines(blocks.size());
  std::vector<std::size_t> width(blocks.size(), 0);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b < titles.size()) lines[b].push_back(titles[b]);
    std::istringstream in(blocks[b]);
    for (std::string l; std::getline(in, l);) lines[b].push_back(l);
    for (const auto& l : lines[b]) width[b] = std::max(width[b], display_width(l));
  }
  std::string out;
  // Rows of blocks: as many side by side as fit in max_width (at least one per row).
  for (std::size_t first = 0; first < blocks.size();) {
    std::size_t last = first + 1, used = display_width(indent) + width[first];
    while (last < blocks.size() && (max_width == 0 || used + gap + width[last] <= max_width)) used += gap + width[last++];
    std::size_t height = 0;
    for (std::size_t b = first; b < last; ++b) height = std::max(height, lines[b].size());
    if (first > 0) out += "\n";
    for (std::size_t r = 0; r < height; ++r) {
      std::string row = indent;
      for (std::size_t b = first; b < last; ++b) {
        const std::string cell = r < lines[b].size() ? lines[b][r] : "";
        row += b + 1 < last ? fit(cell, width[b]) + std::string(gap, ' ') : cell;
      }
      while (!row.empty() && row.back() == ' ') row.pop_back();
      out += row + "\n";
    }
    first = last;
  }
  return out;
}

}  // namespace attn
