// The command line every chapter shares (CLI11):
//   --help  --seed N  --quiet  --no-color  --full  --step  --export DIR  --html FILE  --lang en|zh  [--json]
// plus the chapter's own options, added to app() before run(). A bad value names the flag and
// what is allowed and exits with status 2; an unwritable --export folder is refused before any
// work starts; an error during the chapter prints "error: …" and exits 1.
//
//   attn::ChapterApp ch("03", /*default_seed=*/7, /*total_steps=*/9);  // chapter 03 has 9 steps
//   int n = 4;
//   ch.app().add_option("--tokens", n, "…")->check(CLI::Range(1, 12));
//   return ch.run(argc, argv, [&](attn::Narrator& nar) { … });
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/present/narrate.hpp"

namespace attn {

// CLI11's --help, wrapped to help_columns() display columns (CJK counts 2): each option's
// description continues under its own column (or, on a terminal under 80 columns, on the lines
// below the option), and the title wraps too. ChapterApp installs it; tests/core/test_presentation
// and tests/chapters/test_help check the widths.
class HelpFormatter : public CLI::Formatter {
 public:
  // min(100, terminal_columns()): the course's width, or a narrower $COLUMNS.
  static std::size_t help_columns();
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_description(const CLI::App* app) const override;
};

class ChapterApp {
 public:
  ChapterApp(const std::string& number, std::uint64_t default_seed, int total_steps);
  CLI::App& app() { return app_; }
  // Parses argv, prepares the narrator and runs body. Returns the process exit status.
  int run(int argc, char** argv, const std::function<void(Narrator&)>& body);
  // For a chapter whose number of steps depends on its options: run() calls count() after parsing
  // the command line, before the first step, and announces that many steps instead of total_steps.
  void count_steps(std::function<int()> count) { count_steps_ = std::move(count); }
  // The question shown under the header.
  void set_question(std::string q) { question_ = std::move(q); }
  // Adds --json: with it stdout carries only the document the body hands to Narrator::json()
  // (printed after the run; a run that hands none fails), and the narration goes to stderr.
  void add_json_flag(const std::string& help);
  // What --seed changes in this chapter, said before the promise every chapter makes in --help.
  void describe_seed(const std::string& what);
  // For a chapter that shows no heatmap or attention view: --html would write nothing, so it is not
  // offered (not listed in --help; given anyway, CLI11 names it as unknown).
  void drop_html_option() { app_.remove_option(app_.get_option("--html")); }
  // The chapter's number ("01"), as registered in chapters.cpp.
  const std::string& number() const { return info_.number; }
  // For fuzz/fuzz_options.cpp: run() stops after parsing and checking the command line (exit
  // status as usual, nothing created on disk, the chapter body never runs).
  static inline bool parse_only = false;

 private:
  std::string language_error_;  // set before anything else: the options' help text is translated
  ChapterInfo info_;
  CLI::App app_;
  int total_steps_;
  std::function<int()> count_steps_;
  std::uint64_t seed_;
  bool quiet_ = false, no_color_ = false, full_ = false, pause_ = false, json_ = false;
  std::string export_dir_, html_file_;
  std::string lang_;
  std::string question_;
};

// The check for a floating-point option: a finite number from lo to hi. CLI11's Range lets NaN
// through (every comparison with NaN is false) and ±inf past an infinite bound; this refuses both,
// naming the value. ChapterApp::run also adds its finiteness half to every FLOAT option the
// chapter did not give it, so no float option anywhere accepts nan or inf.
CLI::Validator finite_range(double lo, double hi);
// The check for a whole number from lo to hi that is even (or odd): one check, so --help shows one
// name, "EVEN in [4 - 64]" ("ODD in [1 - 8191]"); a bad value is named with what is wrong with it.
CLI::Validator whole_number_of_parity(std::size_t lo, std::size_t hi, bool even);
// The check for an option naming a file the chapter reads (a model): it must be there, be a file
// (not a folder) and open for reading. CLI11 runs it while parsing, so a wrong path is named (exit
// 2) before the chapter prints anything. An empty path is left to run()'s own message.
CLI::Validator existing_input_file();
// "" when s is a finite number, else why not (for CLI11 checks).
std::string finite_number_problem(const std::string& s);
// "" when s is a whole number written in decimal digits (an optional sign, no leading 0), else why
// not. ChapterApp::run adds it to every INT and UINT option: CLI11 alone reads 010 as 8 (octal),
// 0x10 as 16, 0b11 as 3 and 1'0 as 10, a value other than the one the learner typed.
std::string decimal_integer_problem(const std::string& s);

// Exit statuses shared by every program.
constexpr int kExitOk = 0;
constexpr int kExitError = 1;  // the run failed (bad file, numerical failure)
constexpr int kExitUsage = 2;  // bad command line

}  // namespace attn
