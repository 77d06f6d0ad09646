// Aligned result tables (see attn/present/table.hpp).
#include "attn/present/table.hpp"

#include <algorithm>
#include <stdexcept>

#include "attn/present/terminal.hpp"

namespace attn {

namespace {
// A number as the chapters print one: digits with '.', ',', '-', '+', 'e', '%', 'x' or spaces
// ("1,554", "-1.6e-08", "62%"), or ±∞. A lone "e" or "." is text: a number holds a digit.
bool looks_numeric(const std::string& s) {
  if (s == "−∞" || s == "∞" || s == "+∞") return true;  // an infinite value (a running max before any score)
  if (std::none_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ',' || c == '-' || c == '+' ||
           c == 'e' || c == '%' || c == 'x' || c == ' ';
  });
}
// A cell that stands for "no value" and takes its column's alignment.
bool is_placeholder(const std::string& s) { return s.empty() || s == "—" || s == "-" || s == "?"; }
// A line ends at its last character: a left-aligned last column is not padded.
std::string without_trailing_spaces(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}
}  // namespace

Table::Table(std::vector<std::string> header, std::string title) : title_(std::move(title)), header_(std::move(header)) {}

Table& Table::add(std::vector<std::string> row) {
  if (row.size() != header_.size())
    throw std::invalid_argument("Table::add: row has " + std::to_string(row.size()) + " cells, header has " +
                                std::to_string(header_.size()));
  for (auto& cell : row) cell = escape_control(cell, /*keep_newlines=*/false);  // cells may quote input
  rows_.push_back(std::move(row));
  return *this;
}

std::string Table::render(const std::string& indent, std::size_t max_width) const {
  // A column after the first is right-aligned, header too, when every cell that holds a value is a
  // number: one column lines up as a whole (a token "e" among "h" and "th" stays left).
  std::vector<std::size_t> w(header_.size());
  std::vector<bool> right(header_.size(), false);
  for (std::size_t j = 0; j < header_.size(); ++j) {
    w[j] = display_width(header_[j]);
    bool any = false, all = true;
    for (const auto& r : rows_) {
      w[j] = std::max(w[j], display_width(r[j]));
      if (is_placeholder(r[j])) continue;
      any = true;
      all = all && looks_numeric(r[j]);
    }
    right[j] = j > 0 && any && all;
  }
  // Blocks of columns that fit in max_width; the first column (the row's name) starts every block.
  std::vector<std::vector<std::size_t>> blocks(1, std::vector<std::size_t>{0});
  std::size_t used = display_width(indent) + (w.empty() ? 0 : w[0]);
  for (std::size_t j = 1; j < header_.size(); ++j) {
    if (max_width > 0 && blocks.back().size() > 1 && used + 2 + w[j] > max_width) {
      blocks.push_back({0});
      used = display_width(indent) + w[0];
    }
    blocks.back().push_back(j);
    used += 2 + w[j];
  }
  std::string out;
  if (!title_.empty()) out += indent + title_ + "\n";
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& cols = blocks[b];
    if (b > 0) out += "\n";
    std::string rule = indent, head = indent;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const std::size_t j = cols[k];
      head += (k ? "  " : "") + fit(header_[j], w[j], right[j]);
      rule += (k ? "  " : "");
      for (std::size_t c = 0; c < w[j]; ++c) rule += "─";
    }
    out += without_trailing_spaces(head) + "\n" + rule + "\n";
    for (const auto& r : rows_) {
      std::string line = indent;
      for (std::size_t k = 0; k < cols.size(); ++k) {
        const std::size_t j = cols[k];
        line += (k ? "  " : "") + fit(r[j], w[j], right[j]);
      }
      out += without_trailing_spaces(line) + "\n";
    }
  }
  return out;
}

}  // namespace attn
