// Progress bar on stderr (see attn/present/progress.hpp).
#include "attn/present/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>
#include <iostream>

namespace attn {

std::string format_duration(double seconds) {
  if (!(seconds >= 0.0)) return "?";
  const long s = long(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string format_progress(std::int64_t step, std::int64_t total, double loss, double tokens_per_s,
                            double eta_seconds, int width) {
  const double frac = total > 0 ? std::min(1.0, double(step) / double(total)) : 0.0;
  const int filled = int(frac * width + 1e-9);
  std::string bar(std::size_t(filled), '#');
  for (int i = filled; i < width; ++i) bar += "·";
  const std::string rate = tokens_per_s >= 1000.0 ? fmt::format("{:.1f}k", tokens_per_s / 1000.0)
                                                  : fmt::format("{:.0f}", tokens_per_s);
  const int digits = int(std::to_string(total).size());
  return fmt::format("step {:>{}}/{} [{}]  loss {:.3f}  {} tok/s  ETA {}", step, digits, total, bar, loss, rate,
                     format_duration(eta_seconds));
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

ProgressBar::ProgressBar(std::int64_t total_steps, bool enabled)
    : ProgressBar(total_steps, enabled, std::cerr, !stderr_is_terminal()) {}

ProgressBar::ProgressBar(std::int64_t total_steps, bool enabled, std::ostream& out, bool lines)
    : total_(total_steps), enabled_(enabled), lines_(lines), out_(&out), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::set_line_interval(double first_s, double every_s) {
  next_line_s_ = first_s;
  line_every_s_ = every_s;
}

void ProgressBar::update(std::int64_t step, double loss, std::int64_t tokens) {
  tokens_ += tokens;
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0.0 ? double(tokens_) / elapsed : 0.0;
  const double eta = step > 0 ? elapsed / double(step) * double(total_ - step) : -1.0;
  if (lines_) {
    if (elapsed < next_line_s_) return;
    next_line_s_ = elapsed + line_every_s_;
    *out_ << format_progress(step, total_, loss, rate, eta) << '\n' << std::flush;
    return;
  }
  *out_ << '\r' << format_progress(step, total_, loss, rate, eta) << "\x1b[K" << std::flush;  // clear the rest
}

void ProgressBar::finish() {
  if (enabled_ && !lines_ && !finished_) *out_ << '\n' << std::flush;
  finished_ = true;
}

ProgressBar::~ProgressBar() { finish(); }

}  // namespace attn

namespace attn {
std::function<void(std::size_t, double, std::int64_t)> ProgressBar::callback() {
  return [this](std::size_t step, double loss, std::int64_t tokens) {
    update(std::int64_t(step), loss, tokens);
  };
}
}  // namespace attn
