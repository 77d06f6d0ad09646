// Blocks of text side by side (see attn/present/side_by_side.hpp).
#include "attn/present/side_by_side.hpp"

#include <algorithm>
#include <sstream>

#include "attn/present/terminal.hpp"

namespace attn {

std::string side_by_side(const std::vector<std::string>& blocks, const std::vector<std::string>& titles, std::size_t gap,
                         const std::string& indent) {
  std::vector<std::vector<std::string>> lines(blocks.size());
  std::vector<std::size_t> width(blocks.size(), 0);
  std::size_t height = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (b < titles.size()) lines[b].push_back(titles[b]);
    std::istringstream in(blocks[b]);
    for (std::string l; std::getline(in, l);) lines[b].push_back(l);
    for (const auto& l : lines[b]) width[b] = std::max(width[b], display_width(l));
    height = std::max(height, lines[b].size());
  }
  std::string out;
  for (std::size_t r = 0; r < height; ++r) {
    std::string row = indent;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const std::string cell = r < lines[b].size() ? lines[b][r] : "";
      row += b + 1 < blocks.size() ? fit(cell, width[b]) + std::string(gap, ' ') : cell;
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  }
  return out;
}

}  // namespace attn
