// Presentation pieces render what a learner reads: display widths (CJK counts double), number
// formats (−∞ as -inf), matrix elision and labels, heatmap shades and legend, colour rules,
// tables, and the narrator's steps, --quiet and export recording.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "attn/tensor/mask.hpp"
#include "attn/present/cli.hpp"
#include "attn/present/narrate.hpp"
#include "attn/present/table.hpp"
#include "attn/present/terminal.hpp"

using namespace attn;

TEST_CASE("display_width counts columns, not bytes") {
  CHECK(display_width("cat") == 3);
  CHECK(display_width("猫 吃 鱼") == 8);
  CHECK(display_width("√d_k") == 4);
  CHECK(display_width("\x1b[1mbold\x1b[0m") == 4);
  CHECK(fit("cat", 5) == "cat  ");
  CHECK(fit("cat", 5, true) == "  cat");
  CHECK(display_width(fit("elephantine", 5)) == 5);
  CHECK(fit("elephantine", 5) == "elep…");
  CHECK(display_width(fit("猫猫猫猫", 5)) == 5);
}

TEST_CASE("format_number: fixed, exponent and infinities") {
  CHECK(format_number(0.4123) == "   0.412");
  CHECK(format_number(-1.5) == "  -1.500");
  CHECK(format_number(-std::numeric_limits<double>::infinity()) == "    -inf");
  CHECK(format_number(123456.0).find('e') != std::string::npos);
  CHECK(format_number(0.00001).find('e') != std::string::npos);
  CHECK(format_number(0.0) == "   0.000");
  CHECK(format_number(-0.0, 0, 2) == "0.00");  // negative zero prints without its sign
}

TEST_CASE("format_matrix shows labels and elides big matrices unless full") {
  Mat m = xt::zeros<float>({20, 20});
  m(19, 19) = 7.0f;
  const std::string s = format_matrix(m, {}, {});
  CHECK(s.find("⋮") != std::string::npos);
  CHECK(s.find("…") != std::string::npos);
  CHECK(s.find("7.000") != std::string::npos);  // the last row and column stay visible
  MatrixStyle full;
  full.full = true;
  const std::string f = format_matrix(m, {}, {}, full);
  CHECK(f.find("⋮") == std::string::npos);
  const Mat small = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  const std::string l = format_matrix(small, {"cat", "fish"}, {"a", "b"});
  CHECK(l.find("cat") != std::string::npos);
  CHECK(l.find("fish") != std::string::npos);
}

TEST_CASE("format_matrix: '⋮' hides two rows or more, never one") {
  Mat eleven = xt::zeros<float>({11, 3});  // max_rows 10: hiding one row would cost a line anyway
  eleven(8, 0) = 5.0f;                     // the row a gap of one would have hidden
  const std::string all = format_matrix(eleven, {}, {});
  CHECK(all.find("⋮") == std::string::npos);
  CHECK(all.find("5.000") != std::string::npos);
  const std::string twelve = format_matrix(Mat(xt::zeros<float>({12, 3})), {}, {});
  CHECK(twelve.find("⋮") != std::string::npos);  // two rows hidden behind one line
  CHECK(std::count(twelve.begin(), twelve.end(), '\n') == 1 + 8 + 1 + 2);  // header, head, gap, tail
}

TEST_CASE("format_matrix: keep_cols keeps the cited columns in view, within max_cols") {
  Mat m = xt::zeros<float>({2, 16});
  m(0, 6) = 3.784f;  // a column the default elision hides (it shows 0-5, 14, 15)
  CHECK(format_matrix(m, {}, {}).find("3.784") == std::string::npos);
  MatrixStyle st;
  st.keep_cols = {3, 6};
  const std::string s = format_matrix(m, {}, {}, st);
  CHECK(s.find("3.784") != std::string::npos);
  const std::string header = s.substr(0, s.find('\n'));
  std::istringstream words(header);
  std::vector<std::string> shown;
  for (std::string w; words >> w;) shown.push_back(w);
  CHECK(shown == std::vector<std::string>{"0", "1", "2", "3", "…", "6", "…", "14", "15"});  // 7 of 8 columns:
  // a gap never hides a lone column (4 would have left only 5 hidden)
}

TEST_CASE("heatmap legend: '·' explained only when a shown cell is masked") {
  const Mat open = {{0.2f, 0.8f}, {0.5f, 0.5f}};
  const Mat masked = {{1.0f, -std::numeric_limits<float>::infinity()}, {0.5f, 0.5f}};
  CHECK(format_heatmap(open, {}, {}, {}).find("'·'") == std::string::npos);
  CHECK(heatmap_legend(open).find("'·'") == std::string::npos);
  CHECK(format_heatmap(masked, {}, {}, {}).find("'·' masked (−∞)") != std::string::npos);
  CHECK(heatmap_legend(masked).find("'·' masked (−∞)") != std::string::npos);
  HeatmapStyle no_legend;
  no_legend.legend = false;
  CHECK(format_heatmap(masked, {}, {}, no_legend).find("legend") == std::string::npos);
}

TEST_CASE("heatmap legend: cuts printed to 3 decimals, cells shaded on the printed numbers") {
  // Chapter 03's fish→eats: 0.289 beside a cut of 0.4 × 0.715 = 0.286, once printed "0.29".
  const HeatmapStyle st{0.0, 0.715};
  const std::string h = format_heatmap(Mat{{0.289f, 0.0f}}, {"a"}, {"x", "y"}, st);
  CHECK(h.find("< 0.286 ≤ '▒'") != std::string::npos);
  CHECK(h.find("▒▒▒") != std::string::npos);  // 0.289 ≥ 0.286: the shade the legend names
  // A value that prints as the cut itself is shaded as the legend's "≤" says, either way of
  // rounding: 0.2858 prints 0.286 ≥ the cut 0.286 ('▒'); 0.2854 prints 0.285 < 0.286 ('░').
  CHECK(format_heatmap(Mat{{0.2858f}}, {"a"}, {"x"}, st).find("▒▒▒") != std::string::npos);
  const std::string below = format_heatmap(Mat{{0.2854f}}, {"a"}, {"x"}, st);
  CHECK(below.find("░░░") != std::string::npos);
  CHECK(below.find("▒▒▒") == std::string::npos);
}

TEST_CASE("heatmap legend: wrapped within the terminal's 100 columns") {
  unsetenv("COLUMNS");
  const Mat big = causal_mask(200);  // masked cells and 4×4 averaging: the longest legend
  const std::string one_line = heatmap_legend(big);
  CHECK(display_width(one_line) > 96);  // too long for one indented line
  const std::string h = format_heatmap(big, {}, {}, {});
  std::istringstream in(h);
  std::size_t widest = 0, legend_lines = 0;
  bool in_legend = false;
  for (std::string line; std::getline(in, line);) {
    widest = std::max(widest, display_width(line));
    in_legend = in_legend || line.find("legend:") != std::string::npos;
    legend_lines += in_legend;
  }
  CHECK(widest <= 100);
  CHECK(legend_lines == 2);
  CHECK(h.find("each cell averages 4×4") != std::string::npos);
  // A short legend stays on one line.
  const std::string small = format_heatmap(Mat{{0.0f, 1.0f}}, {}, {}, {});
  CHECK(small.substr(small.find("legend:")).find('\n') == small.size() - small.find("legend:") - 1);
}

TEST_CASE("heatmap: shades from min to max, masked cells, legend, colour only when asked") {
  const Mat w = {{0.0f, 1.0f}, {0.5f, -std::numeric_limits<float>::infinity()}};
  HeatmapStyle st;
  st.vmin = 0.0;
  st.vmax = 1.0;
  const std::string h = format_heatmap(w, {"a", "b"}, {"x", "y"}, st);
  CHECK(h.find("███") != std::string::npos);
  CHECK(h.find("▒▒▒") != std::string::npos);
  CHECK(h.find("·") != std::string::npos);
  CHECK(h.find("legend") != std::string::npos);
  CHECK(h.find('\x1b') == std::string::npos);
  st.color = true;
  CHECK(format_heatmap(w, {}, {}, st).find('\x1b') != std::string::npos);
  // A large map is averaged down and says so.
  const Mat big = causal_mask(200);
  const std::string b = format_heatmap(big, {}, {}, {});
  CHECK(b.find("each cell averages 4×4") != std::string::npos);
}

TEST_CASE("color_wanted honours --no-color and NO_COLOR") {
  CHECK_FALSE(color_wanted(true));
  setenv("NO_COLOR", "1", 1);
  CHECK_FALSE(color_wanted(false));
  unsetenv("NO_COLOR");
}

TEST_CASE("Table aligns columns and rejects ragged rows") {
  Table t({"d_k", "variance"});
  t.add({"1", "1.0"}).add({"1024", "1020.4"});
  const std::string s = t.render();
  CHECK(s.find("d_k   variance") != std::string::npos);
  CHECK(s.find("1024    1020.4") != std::string::npos);
  CHECK_THROWS_AS(t.add({"only one"}), std::invalid_argument);
}

TEST_CASE("Table aligns a column as a whole: numbers (commas, placeholders) right, any text left") {
  Table t({"merge", "right", "count", "tau"});
  t.add({"1", "h", "146,016", "+0.048"}).add({"2", "e", "256", "—"}).add({"3", ".", "1,554", "-0.1"});
  const std::string s = t.render("");
  CHECK(s.find("merge  right    count     tau\n") != std::string::npos);
  CHECK(s.find("1      h      146,016  +0.048\n") != std::string::npos);
  CHECK(s.find("2      e          256       —\n") != std::string::npos);  // a lone "e" is a token, not a number
  CHECK(s.find("3      .        1,554    -0.1\n") != std::string::npos);
  // −∞ (a running max before any score) is a number: its column stays right-aligned
  Table m({"keys", "m before"});
  m.add({"0–7", "−∞"}).add({"8–15", "3.865"});
  const std::string ms = m.render("");
  CHECK(ms.find("0–7         −∞\n") != std::string::npos);
  CHECK(ms.find("8–15     3.865\n") != std::string::npos);
}

// Every line of `text` ends at its last visible character.
bool no_line_ends_in_a_space(const std::string& text) { return text.find(" \n") == std::string::npos; }

TEST_CASE("Table and heatmap lines end at their last character: a left-aligned last column is not padded") {
  Table t({"form", "cost"});
  t.add({"recurrent scan", "O(T·N·P)"}).add({"chunked", "O(T·T_c·(N + P) + T·N·P)"});
  const std::string s = t.render();
  CHECK(no_line_ends_in_a_space(s));
  CHECK(s.find("  recurrent scan  O(T·N·P)\n") != std::string::npos);
  CHECK(s.find("  form            cost\n") != std::string::npos);
  // The padding is still there between columns: the first one is left-aligned and padded.
  CHECK(s.find("  chunked         O(") != std::string::npos);
  const Mat lower = {{1.0f, -std::numeric_limits<float>::infinity()}, {0.1f, 1.0f}};
  HeatmapStyle st;
  st.vmin = 0.0, st.vmax = 1.0;
  const std::string h = format_heatmap(lower, {"t0", "t1"}, {"s0", "s1"}, st);
  CHECK(no_line_ends_in_a_space(h));
  CHECK(h.find("    t0 ███ ·\n") != std::string::npos);  // the masked cell, unpadded at the end
  CHECK(h.find("    t1     ███\n") != std::string::npos);  // no separator after the last cell
  CHECK(h.find("       s0  s1\n") != std::string::npos);
}

TEST_CASE("Narrator numbers steps, records shown tensors, and keeps only results when quiet") {
  std::ostringstream out;
  NarratorOptions opts;
  opts.seed = 3;
  Narrator nar(chapter_info("03"), opts, 2, out);
  nar.header("Question?");
  nar.step("First", "x = y", "Someone 2017");
  nar.show("A", Mat{{1.0f, 2.0f}}, {"r"}, {"c1", "c2"});
  nar.why("because");
  nar.step("Second");
  nar.result("measured 42");
  nar.finish();
  const std::string s = out.str();
  CHECK(s.find("Chapter 03 · Self-attention") != std::string::npos);
  CHECK(s.find("OpenBLAS") != std::string::npos);
  CHECK(s.find("Step 1/2  First  x = y") != std::string::npos);
  CHECK(s.find("Step 2/2  Second") != std::string::npos);
  CHECK(s.find("A (1×2)") != std::string::npos);
  CHECK(s.find("why: because") != std::string::npos);
  REQUIRE(nar.recorder().tensors().size() == 1);
  CHECK(nar.recorder().tensors()[0].step == 1);
  CHECK_THROWS_AS(nar.record("A", Mat{{0.0f}}), ExportError);  // names are identifiers: once each

  std::ostringstream q;
  opts.quiet = true;
  Narrator quiet(chapter_info("03"), opts, 1, q);
  quiet.header("Question?");
  quiet.step("Hidden");
  quiet.show("B", Mat{{1.0f}});
  quiet.result("kept");
  Table t({"a"});
  t.add({"1"});
  quiet.table(t, false);
  quiet.finish();
  CHECK(q.str().find("Step") == std::string::npos);
  CHECK(q.str().find("kept") != std::string::npos);
  CHECK(q.str().find("Question?") == std::string::npos);
  CHECK(quiet.recorder().has("B"));  // quiet runs still export
}

TEST_CASE("Narrator::finish catches a chapter that ran fewer steps than announced") {
  std::ostringstream out;
  Narrator nar(chapter_info("03"), {}, 3, out);
  nar.step("only one");
  CHECK_THROWS_AS(nar.finish(), std::logic_error);
}

TEST_CASE("Narrator records a 4-D tensor (layers × heads × T × S) with its shape") {
  std::ostringstream out;
  NarratorOptions opts;
  Narrator nar(chapter_info("07"), opts, 1, out);
  nar.step("One");
  Tensor4 t = xt::zeros<float>({std::size_t(2), std::size_t(3), std::size_t(4), std::size_t(5)});
  t(1, 2, 3, 4) = 7.0f;
  nar.record("cross_weights", t);
  REQUIRE(nar.recorder().tensors().size() == 1);
  CHECK(nar.recorder().tensors()[0].shape == Shape{2, 3, 4, 5});
  CHECK(nar.recorder().tensors()[0].data.back() == 7.0f);
}

TEST_CASE("format_heatmap: an explicit cell width of 1 draws one character per cell") {
  const Mat w = {{0.0f, 1.0f, 0.5f}, {1.0f, 0.0f, 0.0f}};
  HeatmapStyle st;
  st.vmin = 0.0, st.vmax = 1.0, st.cell_width = 1;
  const std::string h = format_heatmap(w, {"a", "b"}, {"x", "y", "z"}, st);
  CHECK(h.find("    a  █▒\n") != std::string::npos);
  CHECK(h.find("    b █  \n") != std::string::npos);  // the lowest shade, a space, is the cells' content
  CHECK(h.find(" x ") == std::string::npos);  // no room for column labels in one-column cells
  st.cell_width = 0;
  CHECK(format_heatmap(w, {"a", "b"}, {"x", "y", "z"}, st).find("  x   y   z") != std::string::npos);
}

TEST_CASE("Table::render cuts a table wider than max_width into blocks that repeat the first column") {
  Table t({"name", "aaaaaaaa", "bbbbbbbb", "cccccccc"});
  t.add({"x", "1", "2", "3"});
  const std::string wide = t.render("", 0);
  CHECK(wide.find('\n') == wide.find("cccccccc") + 8);  // one block: the header is one line
  const std::string cut = t.render("", 24);
  CHECK(cut == "name  aaaaaaaa  bbbbbbbb\n────  ────────  ────────\nx            1         2\n\n"
               "name  cccccccc\n────  ────────\nx            3\n");
  std::istringstream in(cut);
  for (std::string line; std::getline(in, line);) CHECK(display_width(line) <= 24);
}

TEST_CASE("wrap_text breaks between words or CJK characters and keeps CJK punctuation attached") {
  CHECK(wrap_text("one two three", 9) == std::vector<std::string>{"one two", "three"});
  CHECK(wrap_text("one two three", 100) == std::vector<std::string>{"one two three"});
  CHECK(wrap_text("a\nb", 100) == std::vector<std::string>{"a", "b"});
  // A path longer than a line breaks after a '/' in the line's second half; no line is too wide.
  CHECK(wrap_text("model: /tmp/abc/defgh/ijk/model.safetensors", 20) ==
        std::vector<std::string>{"model:", "/tmp/abc/defgh/ijk/", "model.safetensors"});
  CHECK(wrap_text("abcdefghijklmnopqrstuvwxyz", 12) == std::vector<std::string>{"abcdefghijkl", "mnopqrstuvwx", "yz"});
  // A word that fits the first line's width but not a continuation line's (narrower by its indent)
  // is still broken once it moves down.
  for (std::size_t n = 90; n <= 100; ++n) {
    const std::string path = "/" + std::string(n - 1, 'p');
    const std::vector<std::string> lines = wrap_text("model: " + path, 100, 2, 4);
    for (std::size_t k = 0; k < lines.size(); ++k) CHECK(display_width(lines[k]) + (k == 0 ? 2 : 4) <= 100);
  }
  // 10 columns: five CJK characters fill a line; the comma may not start the next one, so the
  // character before it moves down with it.
  const auto zh = wrap_text("注意力权重，就是对齐", 10);
  CHECK(zh == std::vector<std::string>{"注意力权", "重，就是对", "齐"});
  for (const auto& l : wrap_text("the weights α are an alignment, learned without labels", 20, 6, 4))
    CHECK(display_width(l) <= 20);
  // Lines are never narrower than 10 columns; a longer word is cut there.
  CHECK(wrap_text("unbreakable_long_word", 5) == std::vector<std::string>{"unbreakabl", "e_long_wor", "d"});
  // An opening bracket stays with what it opens.
  CHECK(wrap_text("下降最多（70.3%", 10) == std::vector<std::string>{"下降最多", "（70.3%"});
  // Two closing marks in a row: when the second does not fit, the character before both moves down
  // with them, so that neither starts a line.
  CHECK(wrap_text("存放在检查点中）。", 16) == std::vector<std::string>{"存放在检查点", "中）。"});
  CHECK(wrap_text("存放在检查点中）。", 18) == std::vector<std::string>{"存放在检查点中）。"});
}

TEST_CASE("format_matrix: a value too small for its decimals is a rounding zero beside large ones") {
  Mat m = xt::zeros<float>({std::size_t(1), std::size_t(2)});
  m(0, 0) = 0.5f;
  m(0, 1) = -1.5e-4f;
  const std::string mixed = format_matrix(m, {"r"}, {});
  CHECK(mixed.find("-0.000") != std::string::npos);
  CHECK(mixed.find("e-04") == std::string::npos);
  m(0, 0) = 2e-5f;  // every value tiny: e-notation keeps them readable
  const std::string tiny = format_matrix(m, {"r"}, {});
  CHECK(tiny.find("e-04") != std::string::npos);
  CHECK(tiny.find("e-05") != std::string::npos);
}

TEST_CASE("terminal_columns: COLUMNS when it is a sensible number, else 100") {
  const char* old = std::getenv("COLUMNS");
  const std::string saved = old ? old : "";
  setenv("COLUMNS", "120", 1);
  CHECK(terminal_columns() == 120);
  setenv("COLUMNS", "abc", 1);
  CHECK(terminal_columns() == 100);
  setenv("COLUMNS", "5", 1);
  CHECK(terminal_columns() == 100);
  unsetenv("COLUMNS");
  CHECK(terminal_columns() == 100);
  if (old) setenv("COLUMNS", saved.c_str(), 1);
}

TEST_CASE("Narrator::block prints preformatted lines unless --quiet") {
  std::ostringstream a, b;
  Narrator loud(chapter_info("03"), {}, 1, a);
  NarratorOptions qo;
  qo.quiet = true;
  Narrator quiet(chapter_info("03"), qo, 1, b);
  loud.block("a ██ 1\nb █ 2\n");
  quiet.block("a ██ 1\n");
  CHECK(a.str() == "a ██ 1\nb █ 2\n");
  CHECK(b.str().empty());
}

namespace {
// Runs a one-step ChapterApp with args; returns (status, stdout, stderr).
struct AppRun {
  int status;
  std::string out, err;
};
AppRun run_app(std::vector<std::string> args, bool hand_json) {
  ChapterApp ch("03", 7, 1);
  ch.add_json_flag("machine-readable output");
  std::ostringstream out, err;
  std::streambuf* o = std::cout.rdbuf(out.rdbuf());
  std::streambuf* e = std::cerr.rdbuf(err.rdbuf());
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int status = ch.run(int(argv.size()), argv.data(), [&](Narrator& nar) {
    nar.step("One");
    nar.result("the narration");
    if (hand_json) nar.json("{\"a\": 1}");
  });
  std::cout.rdbuf(o);
  std::cerr.rdbuf(e);
  return {status, out.str(), err.str()};
}
}  // namespace

TEST_CASE("ChapterApp --json: the document alone on stdout, the narration on stderr") {
  const AppRun j = run_app({"--json", "--no-color"}, true);
  CHECK(j.status == kExitOk);
  CHECK(j.out == "{\"a\": 1}\n");
  CHECK(j.err.find("the narration") != std::string::npos);
  // Without --json the document is not printed and the narration is on stdout.
  const AppRun plain = run_app({"--no-color"}, true);
  CHECK(plain.status == kExitOk);
  CHECK(plain.out.find("the narration") != std::string::npos);
  CHECK(plain.out.find("{\"a\": 1}") == std::string::npos);
  // A chapter that hands no document under --json fails, saying why.
  const AppRun none = run_app({"--json"}, false);
  CHECK(none.status == kExitError);
  CHECK(none.err.find("no JSON document") != std::string::npos);
}

TEST_CASE("blas_kernel_note: credits OPENBLAS_CORETYPE only when OpenBLAS reports that kernel") {
  CHECK(blas_kernel_note("Cooperlake", nullptr, false) == "Cooperlake");
  CHECK(blas_kernel_note("Cooperlake", "", false) == "Cooperlake");
  CHECK(blas_kernel_note("SkylakeX", "SkylakeX", true) == "SkylakeX");  // our own restart chose it
  CHECK(blas_kernel_note("Haswell", "haswell", false) == "Haswell (OPENBLAS_CORETYPE)");
  CHECK(blas_kernel_note("Cooperlake", "Nonsense", false) == "Cooperlake (OPENBLAS_CORETYPE=Nonsense not recognised)");
  // A kernel this CPU cannot run: OpenBLAS falls back without a word; the header says so.
  CHECK(blas_kernel_note("Cooperlake", "SapphireRapids", false) ==
        "Cooperlake (OPENBLAS_CORETYPE=SapphireRapids not recognised)");
  const std::string hostile = blas_kernel_note("Haswell", ("\x1b]0;x\a" + std::string(200, 'y')).c_str(), false);
  CHECK(hostile.find('\x1b') == std::string::npos);
  CHECK(display_width(hostile) < 70);
}

TEST_CASE("header_lines: one line ending at column 92 when it fits, else two, never over 100 columns") {
  const std::vector<std::string> one = header_lines("Chapter 03 · Self-attention", "seed 7 · OpenBLAS Haswell · 4 threads");
  REQUIRE(one.size() == 1);
  CHECK(display_width(one[0]) == 92);
  // Chapter 04's Chinese header with the kernel note: 101 columns on one line before.
  const std::string left = "第 04 章 · 多头注意力 (multi-head attention)：分头看，再拼起来";
  const std::string right = "种子 4 · OpenBLAS Cooperlake (OPENBLAS_CORETYPE=Nonsense not recognised) · 16 个线程";
  REQUIRE(display_width(left) + 1 + display_width(right) > 100);
  const std::vector<std::string> two = header_lines(left, right);
  REQUIRE(two.size() >= 2);
  CHECK(two[0] == left);
  CHECK(display_width(two.back()) == 92);  // right-aligned at the rule's end
  for (const std::string& line : two) CHECK(display_width(line) <= 100);
  for (const std::string& line : header_lines(std::string(150, 'L'), std::string(150, 'R'))) CHECK(display_width(line) <= 100);
  // 99 columns of title and right part: one space between them would read as one phrase; two lines.
  const std::vector<std::string> tight = header_lines(std::string(60, 'L'), std::string(39, 'R'));
  REQUIRE(tight.size() == 2);
  CHECK(tight[0] == std::string(60, 'L'));
  const std::vector<std::string> gap = header_lines(std::string(60, 'L'), std::string(38, 'R'));
  REQUIRE(gap.size() == 1);
  CHECK(gap[0] == std::string(60, 'L') + "  " + std::string(38, 'R'));
}

TEST_CASE("escape_control: bidirectional controls and invisible characters are shown escaped; other text stays") {
  CHECK(escape_control("a \u202e b") == "a \\u202e b");
  CHECK(escape_control("\u2066x\u2069") == "\\u2066x\\u2069");
  CHECK(escape_control("\u200fy\u200b") == "\\u200fy\\u200b");
  CHECK(escape_control("\ufeffbom") == "\\ufeffbom");
  CHECK(escape_control("tag\U000E0041") == "tag\\U000e0041");
  CHECK(escape_control("注意力 é ✓ →") == "注意力 é ✓ →");  // printable text untouched
}

TEST_CASE("format_matrix --full: columns in blocks that fit the given width, every value shown once") {
  Mat m = xt::zeros<float>({3, 30});
  for (std::size_t j = 0; j < 30; ++j) m(1, j) = float(j) + 0.5f;
  MatrixStyle s;
  s.full = true;
  s.width = 80;
  const std::string out = format_matrix(m, {"a", "b", "c"}, {}, s);
  std::istringstream lines(out);
  std::string line;
  std::size_t widest = 0;
  while (std::getline(lines, line)) widest = std::max(widest, display_width(line));
  CHECK(widest <= 80);
  CHECK(out.find("columns 0–") != std::string::npos);
  CHECK(out.find("of 30") != std::string::npos);
  for (std::size_t j = 0; j < 30; ++j) CHECK(out.find(fmt::format("{:.3f}", double(j) + 0.5)) != std::string::npos);
  s.width = 400;  // wide enough: one block, no "columns" line
  CHECK(format_matrix(m, {"a", "b", "c"}, {}, s).find("columns") == std::string::npos);
}

namespace {
// The widest line of text, in display columns.
std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    widest = std::max(widest, display_width(text.substr(start, end - start)));
    start = end + 1;
  }
  return widest;
}
std::string help_of(const std::string& columns) {
  const char* old = std::getenv("COLUMNS");
  const std::string saved = old ? old : "";
  if (columns.empty()) unsetenv("COLUMNS"); else setenv("COLUMNS", columns.c_str(), 1);
  CLI::App app(std::string(60, 't') + " " + std::string(60, 'u'), "prog");
  app.formatter(std::make_shared<HelpFormatter>());
  std::string s;
  app.add_option("--long", s, "word " + std::string("0123456789 ") + std::string(150, 'w') + " 注意力机制让模型在每一步"
                 "都能回看整个输入序列，并按相关程度分配权重。" + " tail");
  app.add_option("--a-very-long-option-name-that-fills-the-column", s, "short");
  app.add_flag("--x", "a short one");
  const std::string help = app.help();
  if (old) setenv("COLUMNS", saved.c_str(), 1); else unsetenv("COLUMNS");
  return help;
}
}  // namespace

TEST_CASE("HelpFormatter wraps every --help line to 100 columns (or a narrower COLUMNS), losing no word") {
  const std::string wide = help_of("");
  CHECK(widest_line(wide) <= 100);
  CHECK(widest_line(help_of("200")) <= 100);
  CHECK(widest_line(help_of("40")) <= 40);
  // CLI11's own formatter leaves these lines long: the check above can fail.
  CLI::App plain("d", "prog");
  std::string s;
  plain.add_option("--long", s, std::string(150, 'w'));
  CHECK(widest_line(plain.help()) > 100);
  // Descriptions continue under their column (30) and keep every word, in order.
  CHECK(wide.find("\n" + std::string(30, ' ') + "w") != std::string::npos);
  CHECK(wide.find("word 0123456789\n") != std::string::npos);
  CHECK(wide.find("tail") != std::string::npos);
  CHECK(wide.find("--x                         a short one\n") != std::string::npos);
  // A name too long for the column puts its description on the next line.
  CHECK(wide.find("--a-very-long-option-name-that-fills-the-column TEXT\n" + std::string(30, ' ') + "short") !=
        std::string::npos);
  // The title wraps too.
  CHECK(wide.find(std::string(60, 't') + "\n  " + std::string(60, 'u')) != std::string::npos);
  // A narrow terminal: descriptions start under the option, 6 columns in.
  CHECK(help_of("40").find("--x\n      a short one\n") != std::string::npos);
}
