// Terminal presentation helpers (see attn/present/terminal.hpp).
#include "attn/present/terminal.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

namespace {

// Decode one UTF-8 code point starting at s[i]; advances i. Invalid bytes count as one column.
char32_t next_code_point(const std::string& s, std::size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : 0;
  char32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
  ++i;
  for (int k = 0; k < extra && i < s.size(); ++k, ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  return cp;
}

bool is_wide(char32_t cp) {
  // East Asian Wide / Fullwidth blocks (Unicode TR11), enough for CJK labels such as 猫 吃 鱼.
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

bool is_zero_width(char32_t cp) { return (cp >= 0x300 && cp <= 0x36F) || cp == 0x200B; }

}  // namespace

namespace {
// Characters that reorder or hide text: bidirectional marks, embeddings, overrides and isolates
// (U+202E shows a row reversed), zero-width spaces and joiners, the byte-order mark, invisible
// operators, interlinear annotation and tag characters. Shown escaped like control characters.
bool invisible_or_bidi(char32_t cp) {
  return cp == 0x00AD || cp == 0x061C || cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF ||
         (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F);
}
}  // namespace

std::string escape_control(const std::string& s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_newlines && (c == '\n' || c == '\t'))) || c == 0x7f)
        out += fmt::format("\\x{:02x}", c);
      else
        out += char(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlongs, surrogates or values past U+10FFFF) is kept,
    // except the C1 controls U+0080–U+009F; anything else is shown byte by byte.
    const int extra = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    bool ok = extra > 0;
    char32_t cp = extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; ok && k <= extra; ++k) {
      if (i + std::size_t(k) >= s.size()) {
        ok = false;
        break;
      }
      const auto b = static_cast<unsigned char>(s[i + std::size_t(k)]);
      if ((b & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (ok) {
      const char32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
      ok = cp >= min_cp[extra] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (!ok) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if ((cp >= 0x80 && cp <= 0x9F) || invisible_or_bidi(cp)) {
      out += fmt::format(cp > 0xFFFF ? "\\U{:08x}" : "\\u{:04x}", unsigned(cp));
      i += std::size_t(extra) + 1;
    } else {
      out.append(s, i, std::size_t(extra) + 1);
      i += std::size_t(extra) + 1;
    }
  }
  return out;
}

std::size_t display_width(const std::string& s) {
  std::size_t w = 0, i = 0;
  while (i < s.size()) {
    if (s[i] == '\x1b') {  // skip ANSI colour sequences: ESC [ … m
      while (i < s.size() && s[i] != 'm') ++i;
      ++i;
      continue;
    }
    char32_t cp = next_code_point(s, i);
    w += is_zero_width(cp) ? 0 : is_wide(cp) ? 2 : 1;
  }
  return w;
}

std::string fit(const std::string& s, std::size_t width, bool right) {
  std::size_t w = display_width(s);
  if (w <= width) {
    std::string pad(width - w, ' ');
    return right ? pad + s : s + pad;
  }
  // Cut whole code points until the text plus '…' fits.
  std::string out;
  std::size_t i = 0, used = 0;
  while (i < s.size()) {
    std::size_t start = i;
    char32_t cp = next_code_point(s, i);
    std::size_t cw = is_wide(cp) ? 2 : 1;
    if (used + cw + 1 > width) break;
    out.append(s, start, i - start);
    used += cw;
  }
  out += "…";
  ++used;
  return right ? std::string(width - used, ' ') + out : out + std::string(width - used, ' ');
}

namespace {
// Where the piece of text starting at i ends: after one wide (CJK) character, or after a run of
// narrow characters up to a space, a newline or a wide character. `wide` says which it was.
std::size_t wrap_piece_end(const std::string& text, std::size_t i, bool& wide) {
  std::size_t after_first = i;
  wide = is_wide(next_code_point(text, after_first));
  if (wide) return after_first;
  while (i < text.size() && text[i] != ' ' && text[i] != '\n') {
    std::size_t j = i;
    if (is_wide(next_code_point(text, j))) break;
    i = j;
  }
  return i;
}
}  // namespace

std::vector<std::string> wrap_text(const std::string& text, std::size_t width, std::size_t first_indent,
                                   std::size_t next_indent) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t line_w = 0, limit = width > first_indent + 10 ? width - first_indent : 10;
  // Where each piece added to `line` starts, and whether it is CJK closing punctuation.
  std::vector<std::pair<std::size_t, bool>> starts;
  auto flush = [&] {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
    line.clear();
    starts.clear();
    line_w = 0;
    limit = width > next_indent + 10 ? width - next_indent : 10;
  };
  // Pieces: a word with the spaces after it, or one wide (CJK) character with the spaces after it;
  // a line may break before any piece.
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      flush();
      ++i;
      continue;
    }
    const std::size_t start = i;
    bool wide = false;
    i = wrap_piece_end(text, i, wide);
    // An opening bracket or quote does not end a line: it travels with the piece after it.
    if (wide && i < text.size()) {
      const std::string opened = text.substr(start, i - start);
      bool next_wide = false;
      if (opened == "（" || opened == "“" || opened == "《" || opened == "「") i = wrap_piece_end(text, i, next_wide);
    }
    while (i < text.size() && text[i] == ' ') ++i;
    std::string piece = text.substr(start, i - start);
    std::string bare = piece;
    while (!bare.empty() && bare.back() == ' ') bare.pop_back();
    const bool closing = wide && (bare == "，" || bare == "。" || bare == "；" || bare == "：" || bare == "、" ||
                                  bare == "）" || bare == "！" || bare == "？");
    // The limit of the line this piece would start if it does not fit on the current one.
    const std::size_t fresh_limit = line_w == 0 ? limit : (width > next_indent + 10 ? width - next_indent : 10);
    if (!wide && display_width(bare) > fresh_limit) {
      // A word longer than a whole line (a long path): on lines of its own, broken after a '/'
      // where one falls in the line's second half, else where the line ends.
      if (line_w > 0) flush();
      std::size_t k = 0;
      while (display_width(bare.substr(k)) > limit) {
        std::size_t j = k, w = 0, cut = k, slash = std::string::npos;
        while (j < bare.size()) {
          std::size_t next = j;
          next_code_point(bare, next);
          if (w + 1 > limit) break;
          w += 1;
          if (bare[j] == '/' && w > limit / 2) slash = next;
          j = next;
          cut = j;
        }
        if (slash != std::string::npos) cut = slash;
        line = bare.substr(k, cut - k);
        flush();
        k = cut;
      }
      piece = piece.substr(k);
      bare = bare.substr(k);
    }
    if (line_w > 0 && line_w + display_width(bare) > limit) {
      // CJK punctuation does not start a line: the character before it moves down with it, and so
      // do the punctuation marks before that one ("中）。" moves down whole, not "）。" alone).
      std::size_t k = starts.size();
      if (closing)
        while (k > 0 && starts[k - 1].second) --k;
      if (closing && k > 1) {
        const std::size_t from = starts[k - 1].first;
        std::vector<std::pair<std::size_t, bool>> moved(starts.begin() + std::ptrdiff_t(k - 1), starts.end());
        const std::string prev = line.substr(from);
        line.erase(from);
        flush();
        line = prev;
        line_w = display_width(prev);
        for (auto& m : moved) starts.push_back({m.first - from, m.second});
      } else if (!closing) {
        flush();
      }
    }
    starts.push_back({line.size(), closing});
    line += piece;
    line_w += display_width(piece);
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

std::string format_number(double x, int width, int precision) {
  if (std::isnan(x)) return fmt::format("{:>{}}", "nan", width);
  if (std::isinf(x)) return fmt::format("{:>{}}", x < 0 ? "-inf" : "inf", width);
  if (x == 0.0) x = 0.0;  // −0 (an ALiBi diagonal, −m·0) prints as 0, not "-0.00"
  const double a = std::abs(x);
  if (a != 0.0 && (a >= 1e5 || a < std::pow(10.0, -precision)))
    return fmt::format("{:>{}.{}e}", x, width, std::max(1, precision - 2));
  return fmt::format("{:>{}.{}f}", x, width, precision);
}

std::size_t terminal_columns() {
  const char* c = std::getenv("COLUMNS");
  if (c == nullptr || *c == '\0') return 100;
  char* end = nullptr;
  const long v = std::strtol(c, &end, 10);
  return *end == '\0' && v >= 40 && v <= 1000 ? std::size_t(v) : 100;
}

bool color_wanted(bool no_color_flag) {
  if (no_color_flag) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term == nullptr || std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

namespace {

// Which indices to show along an axis of n entries when at most `max` fit: the first ones, a
// gap (SIZE_MAX), and the last two. With spare_one (rows), a gap hides at least two entries:
// where it would hide one, that entry is shown instead, since the '⋮' takes a line as well.
// (Columns keep their limit: one more column could push the line past the terminal's width.)
std::vector<std::size_t> visible(std::size_t n, std::size_t max, bool full, bool spare_one = false) {
  std::vector<std::size_t> idx;
  if (full || n <= max || (spare_one && n == max + 1)) {
    for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
    return idx;
  }
  const std::size_t tail = 2, head = max - tail;
  for (std::size_t i = 0; i < head; ++i) idx.push_back(i);
  idx.push_back(std::numeric_limits<std::size_t>::max());
  for (std::size_t i = n - tail; i < n; ++i) idx.push_back(i);
  return idx;
}

// As visible(), for columns that must stay (keep): the kept ones and the last two, then the first
// ones up to max in all; a gap between shown columns hides two or more (a gap of one costs a column
// of its own anyway: its neighbour at the front is dropped instead).
std::vector<std::size_t> visible_keeping(std::size_t n, std::size_t max, bool full, const std::vector<std::size_t>& keep) {
  if (full || n <= max || keep.empty()) return visible(n, max, full);
  std::vector<bool> shown(n, false);
  std::size_t count = 0;
  auto show = [&](std::size_t i) {
    if (i < n && !shown[i]) shown[i] = true, ++count;
  };
  for (std::size_t k : keep) show(k);
  show(n - 2), show(n - 1);
  std::size_t filled = 0;  // the first columns added to fill up to max
  for (std::size_t i = 0; i < n && count < max; ++i)
    if (!shown[i]) show(i), filled = i + 1;
  // A lone hidden column right after the filled front: drop the last filled one instead.
  if (filled >= 1 && filled + 1 < n && !shown[filled] && shown[filled + 1]) shown[filled - 1] = false;
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < n; ++i) {
    if (!shown[i]) continue;
    if (!idx.empty() && i > idx.back() + 1) idx.push_back(std::numeric_limits<std::size_t>::max());
    idx.push_back(i);
  }
  if (idx.front() != 0) idx.insert(idx.begin(), std::numeric_limits<std::size_t>::max());
  return idx;
}

std::string label_or_index(const Labels& labels, std::size_t i) {
  return i < labels.size() ? escape_control(labels[i], /*keep_newlines=*/false) : std::to_string(i);
}

}  // namespace

std::string format_matrix(const Mat& m, const Labels& row_labels, const Labels& col_labels, const MatrixStyle& style) {
  const std::size_t rows = m.shape(0), cols = m.shape(1);
  const auto ri = visible(rows, style.max_rows, style.full, /*spare_one=*/true);
  const auto ci = visible_keeping(cols, style.max_cols, style.full, style.keep_cols);
  const std::size_t gap = std::numeric_limits<std::size_t>::max();
  std::size_t label_w = 3;
  for (std::size_t i : ri)
    if (i != gap) label_w = std::max(label_w, std::min<std::size_t>(12, display_width(label_or_index(row_labels, i))));
  const int cell_w = 9;
  // A value too small for `precision` decimals prints in e-notation (1.5e-04), unless the matrix
  // holds values of 0.1 or more: beside those it is a rounding zero, printed as one (-0.000).
  double largest = 0.0;
  for (float v : m)
    if (std::isfinite(v)) largest = std::max(largest, std::abs(double(v)));
  auto cell = [&](double x) {
    return largest >= 0.1 && std::isfinite(x) && x != 0.0 && std::abs(x) < std::pow(10.0, -style.precision)
               ? fmt::format("{:>{}.{}f}", x, cell_w - 1, style.precision)
               : format_number(x, cell_w - 1, style.precision);
  };
  // --full with more columns than the terminal holds: the columns in blocks that fit, one after
  // the other, each under a line saying which columns it holds (as R and numpy print them).
  const std::size_t width = style.width ? style.width : terminal_columns();
  const std::size_t per_block = std::max<std::size_t>(1, (width > 4 + label_w ? width - 4 - label_w : 0) / cell_w);
  std::vector<std::vector<std::size_t>> blocks;
  if (style.full && ci.size() > per_block) {
    for (std::size_t a = 0; a < ci.size(); a += per_block)
      blocks.emplace_back(ci.begin() + long(a), ci.begin() + long(std::min(ci.size(), a + per_block)));
  } else {
    blocks.push_back(ci);
  }
  std::string out;
  for (const auto& block : blocks) {
    if (blocks.size() > 1)
      out += (out.empty() ? "" : "\n") + std::string("    ") +
             _f("columns {}–{} of {}", block.front(), block.back(), cols) + "\n";
    out += "    " + std::string(label_w, ' ');
    for (std::size_t j : block) out += j == gap ? "  …" : " " + fit(label_or_index(col_labels, j), cell_w - 1, true);
    out += "\n";
    for (std::size_t i : ri) {
      if (i == gap) {
        out += "    " + fit("⋮", label_w, true) + "\n";
        continue;
      }
      out += "    " + fit(label_or_index(row_labels, i), label_w, true);
      for (std::size_t j : block) out += j == gap ? "  …" : " " + cell(m(i, j));
      out += "\n";
    }
  }
  return out;
}

namespace {

// Block-average (ignoring −∞) so that neither side exceeds max_side.
Mat downsample(const Mat& m, std::size_t max_side, std::size_t& factor) {
  const std::size_t rows = m.shape(0), cols = m.shape(1);
  factor = std::max<std::size_t>(1, (std::max(rows, cols) + max_side - 1) / max_side);
  if (factor == 1) return m;
  const std::size_t r2 = (rows + factor - 1) / factor, c2 = (cols + factor - 1) / factor;
  Mat out = xt::zeros<float>({r2, c2});
  for (std::size_t i = 0; i < r2; ++i)
    for (std::size_t j = 0; j < c2; ++j) {
      double sum = 0.0;
      std::size_t count = 0;
      for (std::size_t a = i * factor; a < std::min(rows, (i + 1) * factor); ++a)
        for (std::size_t b = j * factor; b < std::min(cols, (j + 1) * factor); ++b)
          if (!std::isinf(m(a, b))) {
            sum += m(a, b);
            ++count;
          }
      out(i, j) = count ? float(sum / count) : -std::numeric_limits<float>::infinity();
    }
  return out;
}

const char* const kShades[] = {" ", "░", "▒", "▓", "█"};
// A dark-blue → teal → yellow ramp from the xterm 256-colour cube (viridis-like).
const int kRamp[] = {17, 24, 30, 36, 71, 107, 143, 179, 220, 226};

}  // namespace

namespace {

// What a heatmap draws: the map after block-averaging, the averaging factor and the shading scale.
struct HeatmapGrid {
  Mat m;
  std::size_t factor = 1;
  double lo = 0.0, hi = 1.0;
};

// x as the legend and the tables print it (3 decimals, or 3 significant digits when tiny), read back.
double as_printed(double x) {
  const std::string s = format_number(x, 0, 3);
  double v = x;
  std::from_chars(s.data(), s.data() + s.size(), v);  // locale-independent, like fmt's output
  return v;
}

// A cell's shade, 0 (' ') to 4 ('█'): how many of the legend's four cuts, as printed, are ≤ the
// cell's value as printed. Binning on the printed numbers keeps the legend true of every cell a
// table beside the map shows to 3 decimals (a cut of 0.2860 must not be printed 0.29 beside a
// 0.289 drawn '▒').
int shade_level(double x, double lo, double span) {
  const double v = as_printed(x);
  int level = 0;
  for (int k = 1; k <= 4; ++k) level += v >= as_printed(lo + k * span / 5.0);
  return level;
}

HeatmapGrid heatmap_grid(const Mat& m_in, const HeatmapStyle& style) {
  HeatmapGrid g;
  g.m = downsample(m_in, style.max_side, g.factor);
  double lo = style.vmin, hi = style.vmax;
  if (std::isnan(lo) || std::isnan(hi)) {
    double flo = std::numeric_limits<double>::infinity(), fhi = -flo;
    for (float x : g.m)
      if (std::isfinite(x)) flo = std::min<double>(flo, x), fhi = std::max<double>(fhi, x);
    if (std::isnan(lo)) lo = std::isfinite(flo) ? flo : 0.0;
    if (std::isnan(hi)) hi = std::isfinite(fhi) ? fhi : 1.0;
  }
  g.lo = lo, g.hi = hi;
  return g;
}

// The legend's clauses, each after the first starting with its separator ("; " or "；"): the
// shades' bounds; what '·' stands for, only where the map draws one; the block size of a map
// averaged down.
std::vector<std::string> legend_parts(const HeatmapGrid& g, const HeatmapStyle& style) {
  const double span = g.hi > g.lo ? g.hi - g.lo : 1.0, step = span / 5.0;
  std::vector<std::string> parts = {
      _f("legend: ' ' < {} ≤ '░' < {} ≤ '▒' < {} ≤ '▓' < {} ≤ '█' (≤ {})", format_number(g.lo + step, 0, 3),
         format_number(g.lo + 2 * step, 0, 3), format_number(g.lo + 3 * step, 0, 3),
         format_number(g.lo + 4 * step, 0, 3), format_number(g.hi, 0, 3))};
  const bool masked = std::any_of(g.m.begin(), g.m.end(), [](float x) { return std::isinf(x) && x < 0; });
  if (masked)
    parts.push_back(_f("; '·' {}", style.masked_legend.empty() ? std::string(_("masked (−∞)")) : style.masked_legend));
  if (g.factor > 1) parts.push_back(_f("; each cell averages {}×{} entries", g.factor, g.factor));
  return parts;
}

std::string legend_of(const HeatmapGrid& g, const HeatmapStyle& style) {
  std::string out;
  for (const std::string& p : legend_parts(g, style)) out += p;
  return out;
}

// The legend in lines of at most `width` columns, broken between its clauses (the separator ends
// the line before); a clause longer than a line is broken between words.
std::vector<std::string> legend_lines(const HeatmapGrid& g, const HeatmapStyle& style, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  for (const std::string& part : legend_parts(g, style)) {
    if (line.empty() || display_width(line) + display_width(part) <= width) {
      line += part;
      continue;
    }
    std::size_t body = 0;  // where the clause starts after its separator
    while (body < part.size() && (part[body] == ';' || part[body] == ' ')) ++body;
    if (body == 0 && part.rfind("；", 0) == 0) body = std::string("；").size();
    std::string sep = part.substr(0, body);
    while (!sep.empty() && sep.back() == ' ') sep.pop_back();
    lines.push_back(line + sep);
    line = part.substr(body);
  }
  if (!line.empty()) lines.push_back(line);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < lines.size(); ++k)
    for (const std::string& l : wrap_text(lines[k], k == 0 ? width : width - 2, 0, k == 0 ? 2 : 0)) out.push_back(l);
  return out;
}

}  // namespace

std::string heatmap_legend(const Mat& m, const HeatmapStyle& style) { return legend_of(heatmap_grid(m, style), style); }

std::string format_heatmap(const Mat& m_in, const Labels& row_labels_in, const Labels& col_labels_in,
                           const HeatmapStyle& style) {
  const HeatmapGrid g = heatmap_grid(m_in, style);
  const Mat& m = g.m;
  const std::size_t factor = g.factor;
  const Labels row_labels = factor == 1 ? row_labels_in : Labels{};
  const Labels col_labels = factor == 1 ? col_labels_in : Labels{};
  const std::size_t rows = m.shape(0), cols = m.shape(1);
  const double lo = g.lo, span = g.hi > g.lo ? g.hi - g.lo : 1.0;
  // Cells are wide enough for short column labels; big maps use one column per cell.
  std::size_t cell_w = style.cell_width > 0 ? style.cell_width : 1;
  if (style.cell_width == 0 && cols <= 16) {
    cell_w = 3;
    for (std::size_t j = 0; j < cols && j < col_labels.size(); ++j)
      cell_w = std::max(cell_w, std::min<std::size_t>(6, display_width(col_labels[j])));
  }
  std::size_t label_w = 1;
  for (std::size_t i = 0; i < rows; ++i)
    label_w = std::max(label_w, std::min<std::size_t>(12, display_width(label_or_index(row_labels, i * factor))));
  // A line ends at its last character: no separator after the last cell, and neither the column
  // labels nor a masked '·' are padded there. The lowest shade is a space, but it is a cell's
  // content: it stays, so every row keeps its width (callers cut grids out by column).
  std::string out;
  if (cell_w > 1) {
    std::string head = "    " + std::string(label_w, ' ') + " ";
    for (std::size_t j = 0; j < cols; ++j) head += fit(label_or_index(col_labels, j), cell_w) + " ";
    head.erase(head.find_last_not_of(' ') + 1);
    out += head + "\n";
  }
  for (std::size_t i = 0; i < rows; ++i) {
    std::string line = "    " + fit(label_or_index(row_labels, i * factor), label_w, true) + " ";
    for (std::size_t j = 0; j < cols; ++j) {
      const float x = m(i, j);
      std::string cell;
      const bool last = j + 1 == cols;
      if (std::isinf(x) && x < 0) {
        cell = last ? "·" : fit("·", cell_w);
      } else {
        double t = std::clamp((double(x) - lo) / span, 0.0, 1.0);
        const int level = shade_level(x, lo, span);
        std::string glyph;
        for (std::size_t k = 0; k < cell_w; ++k) glyph += kShades[level];
        // In colour the background carries the value and the glyph repeats it for monochrome eyes.
        cell = style.color ? fmt::format("\x1b[48;5;{}m{}\x1b[0m", kRamp[std::min(9, int(t * 10.0))], glyph) : glyph;
      }
      line += cell + (cell_w > 1 && !last ? " " : "");
    }
    out += line + "\n";
  }
  if (style.legend) {
    // Wrapped to the terminal's width (100 columns unless $COLUMNS says otherwise), its later
    // lines indented two more columns.
    const std::size_t width = terminal_columns() - 4;
    const std::vector<std::string> lines = legend_lines(g, style, width);
    for (std::size_t k = 0; k < lines.size(); ++k) out += (k == 0 ? "    " : "      ") + lines[k] + "\n";
  }
  return out;
}

}  // namespace attn
