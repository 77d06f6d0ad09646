// Every chapter's --help fits the course's width: run each chapter program (00–12) with
// --help in English (LANG=C.UTF-8) and in Chinese (--lang zh), with COLUMNS unset, 40 and 200, and
// check that no line is wider than 100 display columns (CJK counts 2), nor, in English, wider
// than a 40-column terminal. The wrapping itself is attn::HelpFormatter (present/cli.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attn/present/chapters.hpp"
#include "attn/present/terminal.hpp"
#include "run_program.hpp"

using namespace attn;

namespace {
// The widest line of text and the line itself.
std::pair<std::size_t, std::string> widest_line(const std::string& text) {
  std::pair<std::size_t, std::string> widest{0, ""};
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (display_width(line) > widest.first) widest = {display_width(line), line};
    start = end + 1;
  }
  return widest;
}
}  // namespace

TEST_CASE("every chapter's --help fits 100 columns, in English and Chinese, whatever COLUMNS is") {
  for (const ChapterInfo& c : chapter_list()) {
    for (const std::string lang : {"en", "zh"}) {
      for (const std::string columns : {"", "40", "200"}) {
        std::vector<std::string> env;
        if (columns.empty()) env.push_back("-u"), env.push_back("COLUMNS");
        else env.push_back("COLUMNS=" + columns);
        const RunResult r = run_program(c.folder, {"--help", "--lang", lang}, env);
        CAPTURE(c.folder);
        CAPTURE(lang);
        CAPTURE(columns);
        REQUIRE(r.status == 0);
        CHECK(r.has("--seed"));
        const auto [width, line] = widest_line(r.out);
        CHECK_MESSAGE(width <= 100, width << " columns: " << line);
        if (lang == "en" && columns == "40") CHECK_MESSAGE(width <= 40, width << " columns: " << line);
      }
    }
  }
}
