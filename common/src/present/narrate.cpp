// The narrator (see attn/present/narrate.hpp).
#include "attn/present/narrate.hpp"

#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <mutex>
#include <streambuf>
#include <thread>

#include <fmt/format.h>

#include "attn/present/html_view.hpp"
#include "attn/present/i18n.hpp"
#include "attn/tensor/openblas.hpp"

namespace attn {

namespace {
[[maybe_unused]] const char* const kSliceNames[] = {N_("head")};  // the slice names chapters pass to show()
constexpr std::size_t kWidth = 92;  // the header rule's width in columns
constexpr std::size_t kMaxColumns = 100;  // no line printed is wider
constexpr std::size_t kMaxCoretypeShown = 24;  // columns of a user's OPENBLAS_CORETYPE quoted in the header

std::string rule() {
  std::string r;
  for (std::size_t i = 0; i < kWidth; ++i) r += "─";
  return r;
}

// Every row non-negative and summing to 1: a tensor of attention weights (per head), which the
// --html page can draw even when the chapter printed it as numbers or its own heatmaps.
bool rows_are_distributions(const Tensor3& t) {
  if (t.size() == 0) return false;
  const std::size_t cols = t.shape(2);
  for (std::size_t r = 0; r < t.shape(0) * t.shape(1); ++r) {
    double s = 0.0;
    for (std::size_t j = 0; j < cols; ++j) {
      const float x = t.data()[r * cols + j];
      if (!(x >= 0.0f)) return false;
      s += x;
    }
    if (std::abs(s - 1.0) > 1e-3) return false;
  }
  return true;
}

std::string dims(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "×" : "") + std::to_string(s[i]);
  return out;
}
// --step on a terminal: a step that computes for seconds says so on stderr ("  … 3 s", once a
// second, after 2 s without output), so the learner sees it working rather than waiting for
// Enter; the line is erased before the step's output continues and while a pause waits.
// ATTN_BUSY_AFTER_S overrides the 2 s (tests/chapters/test_hostile_writes.cpp uses a short one).
class BusyLine {
 public:
  static BusyLine& instance() {
    static BusyLine b;
    return b;
  }
  void attach(std::ostream& out) {
    std::lock_guard<std::mutex> lock(m_);
    if (out_) return;
    if (const char* e = std::getenv("ATTN_BUSY_AFTER_S"); e && *e) after_s_ = std::atof(e);
    out_ = &out;
    buf_.inner = out.rdbuf();
    buf_.owner = this;
    out.rdbuf(&buf_);
    last_ = Clock::now();
    thread_ = std::thread([this] { run(); });
  }
  void waiting(bool w) {  // a pause waits for Enter (or the run is over): no line then
    std::lock_guard<std::mutex> lock(m_);
    erase_locked();
    waiting_ = w;
    last_ = Clock::now();
  }
  void touched() {
    std::lock_guard<std::mutex> lock(m_);
    erase_locked();
    last_ = Clock::now();
  }
  ~BusyLine() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
      erase_locked();
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (out_) out_->rdbuf(buf_.inner);
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Buf : std::streambuf {
    std::streambuf* inner = nullptr;
    BusyLine* owner = nullptr;
    int overflow(int c) override {
      owner->touched();
      if (c == traits_type::eof()) return 0;
      const int r = inner->sputc(char(c));
      inner->pubsync();
      return r;
    }
    std::streamsize xsputn(const char* p, std::streamsize n) override {
      owner->touched();
      const std::streamsize r = inner->sputn(p, n);
      inner->pubsync();  // shown now: the busy line must not appear in front of text still buffered
      return r;
    }
    int sync() override { return inner->pubsync(); }
  };
  void run() {
    std::unique_lock<std::mutex> lock(m_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (stop_ || waiting_) continue;
      const double idle = std::chrono::duration<double>(Clock::now() - last_).count();
      if (idle < after_s_) continue;
      const int shown = int(idle);
      if (shown_ && shown == shown_s_) continue;
      const std::string line = fmt::format("\r  … {} s\x1b[K", shown);
      if (::write(STDERR_FILENO, line.data(), line.size()) > 0) {
        shown_ = true;
        shown_s_ = shown;
      }
    }
  }
  void erase_locked() {
    if (!shown_) return;
    const char clear[] = "\r\x1b[K";
    if (::write(STDERR_FILENO, clear, sizeof clear - 1) < 0) return;
    shown_ = false;
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::thread thread_;
  std::ostream* out_ = nullptr;
  Buf buf_;
  Clock::time_point last_;
  double after_s_ = 2.0;
  bool stop_ = false, waiting_ = false, shown_ = false;
  int shown_s_ = -1;
};
}  // namespace

Narrator::Narrator(ChapterInfo info, NarratorOptions opts, int total_steps, std::ostream& out)
    : out_(out), info_(std::move(info)), opts_(std::move(opts)), total_steps_(total_steps) {
  if (opts_.pause && !opts_.quiet && ::isatty(STDIN_FILENO) && ::isatty(STDERR_FILENO)) BusyLine::instance().attach(out_);
}

std::string blas_kernel_note(const std::string& kernel, const char* user_coretype, bool reexec) {
  // Unset, or set by ensure_fast_openblas's own restart: the kernel is OpenBLAS's (or our) choice.
  if (user_coretype == nullptr || user_coretype[0] == '\0' || reexec) return kernel;
  const std::string asked = user_coretype;
  const bool took = asked.size() == kernel.size() &&
                    std::equal(asked.begin(), asked.end(), kernel.begin(), [](char a, char b) {
                      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
                    });
  if (took) return _f("{} (OPENBLAS_CORETYPE)", kernel);
  // OpenBLAS ignores a name it does not know (or a kernel this CPU cannot run) without a word and
  // picks its own: say which kernel it reports and that the variable did not choose it.
  std::string shown = escape_control(asked, /*keep_newlines=*/false);
  if (display_width(shown) > kMaxCoretypeShown) shown = fit(shown, kMaxCoretypeShown);
  return _f("{} (OPENBLAS_CORETYPE={} not recognised)", kernel, shown);
}

std::vector<std::string> header_lines(const std::string& left, const std::string& right) {
  const std::size_t lw = display_width(left), rw = display_width(right);
  constexpr std::size_t kGap = 2;  // the least space between the title and the right part
  if (lw + kGap + rw <= kMaxColumns)  // one line, the right part ending at the rule's end when it fits
    return {left + std::string(lw + rw + kGap <= kWidth ? kWidth - lw - rw : kGap, ' ') + right};
  // Too long for one line (a long title in Chinese beside a long kernel note): the right part on
  // its own line(s), right-aligned at the rule's end, broken between its " · " parts.
  std::vector<std::string> lines = wrap_text(left, kMaxColumns), parts;
  const std::string sep = " · ";
  for (std::size_t from = 0;;) {
    const std::size_t at = right.find(sep, from);
    parts.push_back(right.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + sep.size();
  }
  std::vector<std::string> packed;
  for (const std::string& part : parts) {
    if (!packed.empty() && display_width(packed.back()) + display_width(sep) + display_width(part) <= kWidth)
      packed.back() += sep + part;
    else
      for (const std::string& piece : wrap_text(part, kWidth)) packed.push_back(piece);
  }
  for (const std::string& line : packed) {
    const std::size_t w = display_width(line);
    lines.push_back(std::string(w < kWidth ? kWidth - w : 0, ' ') + line);
  }
  return lines;
}

void Narrator::header(const std::string& question) {
  const BlasInfo blas = blas_info();
  const std::string left = _f("Chapter {} · {}", info_.number, tr(info_.title));
  const std::string kernel = blas_kernel_note(blas.kernel, std::getenv("OPENBLAS_CORETYPE"),
                                              std::getenv("ATTN_OPENBLAS_REEXEC") != nullptr);
  const std::string right = _f("seed {} · OpenBLAS {} · {} {}", opts_.seed, kernel, blas.threads,
                               blas.threads == 1 ? _("thread") : _("threads"));
  for (const std::string& line : header_lines(left, right)) out_ << line << "\n";
  out_ << rule() << "\n";
  if (!opts_.quiet && !question.empty())
    for (const std::string& line : wrap_text(question, terminal_columns())) out_ << line << "\n";
  out_.flush();
}

void Narrator::pause_if_asked() {
  if (!opts_.pause || opts_.quiet || step_ == 0 || !::isatty(STDIN_FILENO)) return;
  // Enter pressed while the step was being computed must not skip this pause: what was typed
  // before the prompt appeared is thrown away.
  ::tcflush(STDIN_FILENO, TCIFLUSH);
  out_ << "  " << _("[Enter: next step]") << " " << std::flush;
  BusyLine::instance().waiting(true);
  std::string line;
  std::getline(std::cin, line);
  BusyLine::instance().waiting(false);
}

void Narrator::step(const std::string& title, const std::string& formula, const std::string& source) {
  pause_if_asked();
  out_.flush();  // the steps before reach a pipe or file now, not at exit: a run cut short keeps them
  ++step_;
  step_title_ = escape_control(title, false);
  if (opts_.quiet) return;
  std::string left = _f("Step {}/{}  {}", step_, total_steps_, escape_control(title));
  if (!formula.empty()) left += "  " + formula;
  const std::size_t cols = terminal_columns(), used = display_width(left) + display_width(source);
  auto bold = [&](const std::string& s) { return opts_.color ? "\x1b[1m" + s + "\x1b[0m" : s; };
  out_ << "\n";
  if (used + 2 <= cols) {  // title, formula and source on one line, the source right-aligned
    out_ << bold(left);
    if (!source.empty()) out_ << std::string(used + 2 <= kWidth ? kWidth - used : 2, ' ') << source;
    out_ << "\n";
    return;
  }
  // Too wide: the title and formula wrapped, the source alone on the next line, right-aligned.
  const std::vector<std::string> lines = wrap_text(left, cols, 0, 10);
  for (std::size_t k = 0; k < lines.size(); ++k) out_ << (k ? std::string(10, ' ') : "") << bold(lines[k]) << "\n";
  if (!source.empty()) {
    const std::size_t w = display_width(source);
    if (w + 2 <= cols) {
      out_ << std::string(w + 2 <= kWidth ? kWidth - w : 2, ' ') << source << "\n";
    } else {
      for (const std::string& line : wrap_text(source, cols, 2, 2)) out_ << "  " << line << "\n";
    }
  }
}

namespace {
// prefix + text, wrapped at the terminal's width; continuation lines indented by `hang` spaces.
std::string wrapped(const std::string& prefix, const std::string& text, std::size_t hang) {
  const std::vector<std::string> lines = wrap_text(text, terminal_columns(), display_width(prefix), hang);
  std::string out;
  for (std::size_t k = 0; k < lines.size(); ++k) out += (k == 0 ? prefix : std::string(hang, ' ')) + lines[k] + "\n";
  return out;
}
}  // namespace

std::string non_finite_word(const std::string& text) {
  const auto letter = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      quoted = !quoted;
      continue;
    }
    if (quoted || !std::isalpha(static_cast<unsigned char>(c)) || (i > 0 && letter(text[i - 1]))) continue;
    std::size_t end = i;
    while (end < text.size() && letter(text[end])) ++end;
    std::string word = text.substr(i, end - i);
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    const bool negative = i > 0 && text[i - 1] == '-';
    // −∞ is a legitimate value (a masked score, the online softmax's starting maximum); NaN and +∞ are not.
    if (word == "nan" || (!negative && (word == "inf" || word == "infinity"))) {
      const std::size_t from = negative ? i - 1 : i;
      return text.substr(from, end - from);
    }
    i = end;
  }
  return "";
}

void Narrator::refuse_non_finite_text(const std::string& text) const {
  const std::string word = non_finite_word(text);
  if (!word.empty())
    throw NonFiniteError(_f("step {} ({}): a result came out as {} — the computation turned non-finite (weights too "
                            "large, all zero or denormal?); nothing more is printed from it: {}",
                            step_, step_title_, word, escape_control(text, false)));
}

void Narrator::say(const std::string& text) {
  if (!opts_.quiet) out_ << wrapped("  ", escape_control(text), 4);
}

void Narrator::code(const std::string& where) {
  if (!opts_.quiet) out_ << wrapped(std::string("  ") + _("code: "), escape_control(where), 8);
}

void Narrator::why(const std::string& text) {
  if (!opts_.quiet) {
    const std::string prefix = std::string("  ") + _("why: ");
    out_ << wrapped(prefix, escape_control(text), display_width(prefix));
  }
}

void Narrator::result(const std::string& text) {
  refuse_non_finite_text(text);
  out_ << wrapped("  ", escape_control(text), 4);
}

void Narrator::record_raw(const std::string& name, const Shape& shape, const float* data) {
  recorder_.add(name, shape, data, step_);
}

void Narrator::record(const std::string& name, const Mat& m) { record_raw(name, shape_of(m), m.data()); }
void Narrator::record(const std::string& name, const Vec& v) { record_raw(name, shape_of(v), v.data()); }
void Narrator::record(const std::string& name, const Tensor3& t) {
  record_raw(name, shape_of(t), t.data());
  if (opts_.html_file && rows_are_distributions(t)) html_views_.push_back({name, {}, {}, {t}, false});
}
void Narrator::record(const std::string& name, const Tensor4& t) { record_raw(name, shape_of(t), t.data()); }
void Narrator::record_tokens(const std::string& name, const Labels& query_tokens, const Labels& key_tokens) {
  recorder_.set_tokens(name, query_tokens, key_tokens);
  // The --html page labels the view recorded under this name with the same tokens (a tensor recorded
  // without labels; a heatmap whose terminal columns are numbers keyed on another line).
  for (AttentionSet& v : html_views_)
    if (v.name == name || v.name.rfind(name + ": ", 0) == 0) {
      v.query_tokens = query_tokens;
      v.key_tokens = key_tokens;
    }
}

void Narrator::attention_view(const AttentionSet& set) {
  if (opts_.html_file) html_views_.push_back(set);
}
void Narrator::manifest_field(const std::string& key, const std::string& json_value) {
  recorder_.set_manifest_field(key, json_value);
}

void Narrator::show(const std::string& name, const Mat& m, const Labels& rows, const Labels& cols,
                    const std::string& caption) {
  show(name, m, rows, cols, caption, MatrixStyle{});
}

void Narrator::show(const std::string& name, const Mat& m, const Labels& rows, const Labels& cols,
                    const std::string& caption, MatrixStyle style) {
  record(name, m);
  if (opts_.quiet) return;
  out_ << "  " << name << " (" << dims(shape_of(m)) << ")" << (caption.empty() ? "" : "  " + escape_control(caption)) << "\n";
  style.full = style.full || opts_.full;
  out_ << format_matrix(m, rows, cols, style);
}

void Narrator::show(const std::string& name, const Vec& v, const Labels& labels, const std::string& caption) {
  record(name, v);
  if (opts_.quiet) return;
  out_ << "  " << name << " (" << v.size() << ")" << (caption.empty() ? "" : "  " + escape_control(caption)) << "\n";
  Mat row = xt::zeros<float>({std::size_t(1), v.size()});
  for (std::size_t j = 0; j < v.size(); ++j) row(0, j) = v(j);
  MatrixStyle style;
  style.full = opts_.full;
  style.max_cols = 10;
  out_ << format_matrix(row, {""}, labels, style);
}

void Narrator::show(const std::string& name, const Tensor3& t, const Labels& rows, const Labels& cols,
                    const std::string& caption, const std::string& slice_name) {
  record_raw(name, shape_of(t), t.data());
  if (opts_.html_file && rows_are_distributions(t))
    html_views_.push_back({caption.empty() ? name : name + ": " + caption, rows, cols, {t}, false});
  if (opts_.quiet) return;
  out_ << "  " << name << " (" << dims(shape_of(t)) << ")" << (caption.empty() ? "" : "  " + escape_control(caption)) << "\n";
  const std::size_t n = t.shape(0), limit = opts_.full ? n : std::min<std::size_t>(n, 1);
  MatrixStyle style;
  style.full = opts_.full;
  for (std::size_t i = 0; i < limit; ++i) {
    Mat slice = xt::view(t, i, xt::all(), xt::all());
    out_ << "  [" << tr(slice_name) << " " << i << "]\n" << format_matrix(slice, rows, cols, style);
  }
  if (limit < n) out_ << "  " << _f("… {} more {}s (--full shows all)", n - limit, tr(slice_name)) << "\n";
}

void Narrator::heatmap(const std::string& name, const Mat& m, const Labels& rows, const Labels& cols,
                       const std::string& caption, HeatmapStyle style) {
  if (!recorder_.has(name)) record(name, m);
  if (opts_.html_file) {  // the page draws it too: one layer, one head
    Tensor3 one = Tensor3::from_shape({1, m.shape(0), m.shape(1)});
    std::copy(m.begin(), m.end(), one.begin());
    html_views_.push_back({caption.empty() ? name : name + ": " + caption, rows, cols, {one}, false});
  }
  if (opts_.quiet) return;
  style.color = opts_.color;
  out_ << "  " << name << " (" << dims(shape_of(m)) << ") " << _("heatmap") << (caption.empty() ? "" : "  " + escape_control(caption)) << "\n";
  out_ << format_heatmap(m, rows, cols, style);
}

void Narrator::table(const Table& t, bool as_result) {
  for (const auto& row : t.data())  // the first column names the row (maybe a learner's word)
    for (std::size_t c = 1; c < row.size(); ++c) refuse_non_finite_text(row[c]);
  if (opts_.quiet && !as_result) return;
  out_ << t.render("  ", terminal_columns());
}

void Narrator::block(const std::string& text) {
  if (!opts_.quiet) out_ << text;
}

void Narrator::takeaway(const std::vector<std::string>& lines) {
  for (const auto& l : lines) refuse_non_finite_text(l);
  pause_if_asked();  // the last step stays on screen until Enter; nothing waits after the takeaway
  const std::string title = _("Takeaway");
  out_ << "\n" << (opts_.color ? "\x1b[1m" + title + "\x1b[0m" : title) << "\n";
  for (const auto& l : lines) out_ << wrapped("  • ", escape_control(l), 4);
}

void Narrator::finish() {
  if (finished_) return;
  finished_ = true;
  out_.flush();
  if (opts_.pause) BusyLine::instance().waiting(true);  // the run is over
  if (step_ != total_steps_)
    throw std::logic_error(fmt::format("chapter announced {} steps but ran {}", total_steps_, step_));
  if (opts_.export_dir) {
    recorder_.write(*opts_.export_dir, info_.number, opts_.seed);
    out_ << "\n" << _f("Exported {} tensors and manifest.json to {}", recorder_.tensors().size(),
                      escape_control(*opts_.export_dir, /*keep_newlines=*/false)) << "\n";
  }
  if (opts_.html_file) {
    if (html_views_.empty()) {
      out_ << "\n" << _("No heatmap or attention view in this run: no HTML page written") << "\n";
    } else {
      write_head_view_html(*opts_.html_file, fmt::format("Chapter {} · {}", info_.number, info_.title), html_views_);
      const std::string file = escape_control(*opts_.html_file, /*keep_newlines=*/false);  // a path: one line
      out_ << "\n"
           << (html_views_.size() == 1
                   ? _f("Wrote 1 attention view to {} (open it in a browser; no network needed)", file)
                   : _f("Wrote {} attention views to {} (open it in a browser; no network needed)",
                        html_views_.size(), file))
           << "\n";
    }
  }
}

}  // namespace attn
