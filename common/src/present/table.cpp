// Aligned result tables (see attn/present/table.hpp).
#include "attn/present/table.hpp"

#include <algorithm>
#include <stdexcept>

#include "attn/present/terminal.hpp"

namespace attn {

namespace {
bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' || c == '%' ||
           c == 'x' || c == ' ';
  });
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

std::string Table::render(const std::string& indent) const {
  std::vector<std::size_t> w(header_.size());
  for (std::size_t j = 0; j < header_.size(); ++j) {
    w[j] = display_width(header_[j]);
    for (const auto& r : rows_) w[j] = std::max(w[j], display_width(r[j]));
  }
  std::string out;
  if (!title_.empty()) out += indent + title_ + "\n";
  std::string rule = indent;
  out += indent;
  for (std::size_t j = 0; j < header_.size(); ++j) {
    out += (j ? "  " : "") + fit(header_[j], w[j], j > 0);
    rule += (j ? "  " : "");
    for (std::size_t k = 0; k < w[j]; ++k) rule += "─";
  }
  out += "\n" + rule + "\n";
  for (const auto& r : rows_) {
    out += indent;
    for (std::size_t j = 0; j < r.size(); ++j) out += (j ? "  " : "") + fit(r[j], w[j], j > 0 && looks_numeric(r[j]));
    out += "\n";
  }
  return out;
}

}  // namespace attn
