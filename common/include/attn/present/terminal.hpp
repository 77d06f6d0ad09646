// Terminal presentation helpers: text width of UTF-8 strings (CJK counts double), padding,
// number formatting, matrices with token labels and heatmaps in Unicode shading (with colour
// when enabled). Everything returns strings, so tests can check what a learner would see.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "attn/tensor/tensor.hpp"

namespace attn {

// Untrusted text (file names, checkpoint metadata, --sentence) made safe to print: control
// characters become visible escapes — C0 bytes as \x1b, DEL as \x7f, C1 code points as \u009b,
// bytes that are not valid UTF-8 as \xff — so an ESC sequence cannot clear the screen or move
// the cursor; characters that reorder or hide text (U+202E and the other bidirectional controls,
// zero-width spaces and joiners, U+FEFF, tag characters) as \u202e or \U000e0041, so no row is
// shown reversed and no label hides a character. '\n' and '\t' are kept when keep_newlines (running text), escaped otherwise (labels).
std::string escape_control(const std::string& s, bool keep_newlines = true);

// Columns a UTF-8 string occupies in a terminal (East Asian wide characters count 2).
std::size_t display_width(const std::string& s);
// Pad (or cut, ending with '…') to exactly `width` columns; right-aligned when right = true.
std::string fit(const std::string& s, std::size_t width, bool right = false);

// Breaks text into lines of at most `width` columns (the first line shorter by first_indent, the
// others by next_indent): between words, or between two wide (CJK) characters; '\n' breaks too.
// A word longer than a line (a long path) is broken after a '/' in the line's second half, else at
// the line's end. The lines come without the indents.
std::vector<std::string> wrap_text(const std::string& text, std::size_t width, std::size_t first_indent = 0,
                                   std::size_t next_indent = 0);

// A number in 8 columns: fixed with 3 decimals, or exponent form when very large or very small;
// −∞ prints as "-inf" (a masked score), −0 as 0.
std::string format_number(double x, int width = 8, int precision = 3);

// The terminal's width for tables: $COLUMNS when it is a number from 40 to 1000, else 100.
std::size_t terminal_columns();

// Should output be coloured? No when NO_COLOR is set (https://no-color.org), TERM is "dumb",
// stdout is not a terminal, or the user passed --no-color.
bool color_wanted(bool no_color_flag);

struct MatrixStyle {
  bool full = false;           // print every row and column (--full), columns in blocks that fit
  std::size_t width = 0;       // the columns a block may use (0: terminal_columns(), which reads COLUMNS)
  std::size_t max_rows = 10;   // otherwise show the first and last few ('⋮' hides 2 rows or more)
  std::size_t max_cols = 8;
  int precision = 3;
  // Columns shown even when the others are elided (those a narration cites), in place of some of
  // the first ones; at most max_cols columns are shown in all.
  std::vector<std::size_t> keep_cols{};
};

// "name (R×C)" header line is written by the caller; this renders the grid with labels.
std::string format_matrix(const Mat& m, const Labels& row_labels, const Labels& col_labels,
                          const MatrixStyle& style = {});

struct HeatmapStyle {
  double vmin = NAN, vmax = NAN;  // NAN: the finite min / max of the data
  bool color = false;
  std::size_t max_side = 64;      // larger maps are block-averaged down to this many cells
  std::size_t cell_width = 0;     // columns per cell; 0: wide enough for the labels when ≤ 16 columns, else 1
  std::string masked_legend{};    // what '·' stands for in the legend; empty: "masked (−∞)"
  bool legend = true;             // false: the grid alone (heatmap_legend gives the legend)
};

// Heatmap: five shades ' ░▒▓█' from vmin to vmax (plus a colour ramp when style.color), '·' for
// −∞ (masked) cells, row labels on the left, column labels on top when they fit, and a legend
// wrapped to terminal_columns() (its later lines indented two more columns).
std::string format_heatmap(const Mat& m, const Labels& row_labels, const Labels& col_labels,
                           const HeatmapStyle& style = {});
// The legend format_heatmap draws under m, on one line without its indent: the shades' bounds;
// what '·' stands for, only when the map draws a masked cell; the block size of a map averaged down.
std::string heatmap_legend(const Mat& m, const HeatmapStyle& style = {});

}  // namespace attn
