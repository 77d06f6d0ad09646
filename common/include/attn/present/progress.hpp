// A training progress bar on stderr (presentation, not numerics: layers never print):
//   step  120/700 [#######·············]  loss 1.234  3.2k tok/s  ETA 0:42
// On a terminal it is drawn in place with '\r'. When stderr is not a terminal (a log file, a
// pipe) a long run is not silent: the same line is printed as plain text, the first after 10 s
// and then every 30 s, with no control characters (a short run prints none). Nothing with --quiet.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace attn {

// One line of the bar (no '\r', no newline); pure, so tests can pin it.
std::string format_progress(std::int64_t step, std::int64_t total, double loss, double tokens_per_s,
                            double eta_seconds, int width = 20);
// "0:42", "12:05", "1:02:03"
std::string format_duration(double seconds);

bool stderr_is_terminal();

class ProgressBar {
 public:
  // enabled = false draws nothing (pass !quiet). On std::cerr: a bar when stderr is a terminal,
  // plain lines otherwise. Given another stream: a bar, unless lines = true.
  ProgressBar(std::int64_t total_steps, bool enabled);
  ProgressBar(std::int64_t total_steps, bool enabled, std::ostream& out, bool lines = false);
  // Plain-line mode: seconds before the first line and between lines (10 and 30 by default).
  void set_line_interval(double first_s, double every_s);
  // After each step: the step just finished (1-based), its loss, and the tokens it processed.
  void update(std::int64_t step, double loss, std::int64_t tokens);
  // Ends the line (once); also called by the destructor.
  void finish();
  ~ProgressBar();
  // A training loop's per-step callback that updates this bar (TrainConfig::on_step and the like).
  std::function<void(std::size_t, double, std::int64_t)> callback();

 private:
  std::int64_t total_;
  bool enabled_, lines_, finished_ = false;
  double next_line_s_ = 10.0, line_every_s_ = 30.0;
  std::ostream* out_;
  std::chrono::steady_clock::time_point start_;
  std::int64_t tokens_ = 0;
};

}  // namespace attn
