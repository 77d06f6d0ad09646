// Small aligned tables for measured results: a header row, data rows; a column whose every value
// is a number ("1,554", "-1.6e-08", "62%"; "—" holds none) is right-aligned, header too.
//   Table t({"d_k", "var(q·k)", "var(q·k/√d_k)"});
//   t.add({"64", fmt::format("{:.1f}", v), …});
//   std::cout << t.render();
#pragma once

#include <string>
#include <vector>

namespace attn {

class Table {
 public:
  explicit Table(std::vector<std::string> header, std::string title = "");
  Table& add(std::vector<std::string> row);  // must have as many cells as the header
  // max_width > 0: a table wider than that many columns is cut into blocks of columns, one under
  // the other, each starting with the first column (the row's name).
  std::string render(const std::string& indent = "  ", std::size_t max_width = 0) const;
  std::size_t rows() const { return rows_.size(); }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::vector<std::string>>& data() const { return rows_; }

 private:
  std::string title_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace attn
