// The shared chapter command line (see attn/present/cli.hpp).
#include "attn/present/cli.hpp"

#include <charconv>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/data/data_files.hpp"
#include "attn/data/output_file.hpp"
#include "attn/present/terminal.hpp"
#include "attn/present/i18n.hpp"  // last of ours: it defines the _ macro
#include "attn/tensor/openblas.hpp"

namespace attn {

namespace {
namespace fs = std::filesystem;

// The character set the environment names for the terminal (LC_ALL, else LC_CTYPE, else LANG:
// "zh_CN.GB18030" -> "GB18030") when it is not UTF-8: the chapters write UTF-8 whatever the locale
// (box lines, √, ≈ and the Chinese lesson), which such a terminal shows garbled. "" when the name
// gives no character set (C, POSIX, zh_CN) or gives UTF-8 or plain ASCII.
std::string non_utf8_charset(std::string* variable) {
  for (const char* var : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    const std::string name = v;
    const std::size_t dot = name.find('.');
    if (dot == std::string::npos) return "";
    const std::size_t at = name.find('@', dot);  // a modifier: "de_DE.ISO-8859-15@euro"
    const std::string cs = name.substr(dot + 1, at == std::string::npos ? std::string::npos : at - dot - 1);
    std::string key;
    for (unsigned char c : cs)
      if (std::isalnum(c)) key += char(std::tolower(c));
    const bool plain = cs.size() <= 24 && std::all_of(cs.begin(), cs.end(), [](unsigned char c) {
                         return std::isalnum(c) || c == '-' || c == '_';
                       });  // a name such as GB18030 or ISO-8859-1, not a path (LANG=../../etc/passwd)
    if (!plain || key.empty() || key == "utf8" || key == "ascii" || key == "usascii" || key == "ansix341968") return "";
    *variable = std::string(var) + "=" + name;
    return cs;
  }
  return "";
}

// What --html may replace, besides nothing: a page this program wrote earlier (it starts
// "<!DOCTYPE html>" and has a "<title>Chapter " near the top). Another file, named by mistake or
// through a link (notes.txt), is left as it is, and so is the file standard output or standard
// error goes to (--html /dev/stdout > log: the page would replace the log). "" when it may.
std::string html_target_problem(const std::string& path) {
  const std::string target = output_target(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat o {};
    if (::fstat(fd, &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino)
      return fd == STDOUT_FILENO ? _f("{} is the file standard output goes to; the page would replace it: name "
                                      "another file", path)
                                 : _f("{} is the file standard error goes to; the page would replace it: name "
                                      "another file", path);
  }
  if (st.st_size == 0) return "";
  std::ifstream in(target, std::ios::binary);
  std::string head(512, '\0');
  in.read(&head[0], std::streamsize(head.size()));
  head.resize(std::size_t(std::max<std::streamsize>(in.gcount(), 0)));
  if (head.rfind("<!DOCTYPE html>", 0) == 0 && head.find("<title>Chapter ") != std::string::npos) return "";
  return _f("{} exists and is not a page this program wrote; it is left as it is: name another file, or remove "
            "this one first", path);
}

// A path option given as "" (an unset $VARIABLE, most often): the options whose value is a path
// (type names PATH, FILE, DIR) never fall back to a default for it. Returns the flag, or "".
std::string empty_path_option(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    const auto is = [&](const char* t) { return type == t || type.rfind(std::string(t) + ":", 0) == 0; };
    if (o->count() == 0 || !(is("PATH") || is("FILE") || is("DIR"))) continue;
    for (const std::string& v : o->results())
      if (v.empty()) return o->get_name();
  }
  return "";
}

// An option given where a value belongs ("--html --quiet": the file name was forgotten): CLI11
// takes "--quiet" as the file name, writes a file of that name and drops the flag. Returns the
// message naming both, or "".
std::string option_given_as_value(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0 || o->get_type_size() == 0) continue;  // a flag takes no value
    for (const std::string& v : o->results()) {
      if (v.rfind("--", 0) != 0) continue;
      const std::string name = v.substr(0, v.find('='));
      try {
        app.get_option(name);
      } catch (const CLI::Error&) {
        continue;  // not one of ours: a value that happens to start with dashes
      }
      return _f("{}: got '{}', which is an option of its own: the value is missing (for a name that starts with "
                "dashes, write ./{})", o->get_name(), v, v);
    }
  }
  return "";
}

fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (!r.has_filename()) r = r.parent_path();
  return r;
}

// --export DIR and --html FILE must not meet: the export replaces DIR as a whole.
std::string export_html_clash(const std::string& dir, const std::string& file) {
  const fs::path d = resolved(dir), f = resolved(file);
  if (d == f) return _f("--export and --html both name {}; give the HTML page a file name of its own (e.g. {}.html)",
                        dir, dir);
  const fs::path rel = f.lexically_relative(d);
  if (!rel.empty() && *rel.begin() != "..")
    return _f("--html {} is inside the --export folder {}, which the export replaces as a whole; write the page "
              "beside it", file, dir);
  return "";
}

// CLI11 says "--d-model: Value 8.0 not in range 2 to 64" for a value that is no whole number (8
// is in range): said as it is. Returns "" when the message is not of that kind.
std::string range_message(const CLI::App& app, const std::string& what) {
  // CLI11's counts: "--d-k: At Most 1 required but received 2" (given twice), "--d-k: 1 required
  // UINT:INT in [1 - 64] missing" (no value after the flag, or "--d-k=").
  const std::string twice = ": At Most 1 required but received ", one = ": 1 required ", missing = " missing";
  if (const std::size_t at = what.find(twice); at != std::string::npos)
    return _f("{}: given {} times; give it once", what.substr(0, at), what.substr(at + twice.size()));
  if (const std::size_t at = what.find(one); at != std::string::npos && what.size() >= at + one.size() + missing.size() &&
                                               what.compare(what.size() - missing.size(), missing.size(), missing) == 0)
    return _f("{}: needs a value after it ({})", what.substr(0, at),
              what.substr(at + one.size(), what.size() - missing.size() - at - one.size()));
  const std::size_t colon = what.find(": Value ");
  const std::size_t mid = what.find(" not in range ");
  if (colon == std::string::npos || mid == std::string::npos || mid < colon) return "";
  const std::string flag = what.substr(0, colon), value = what.substr(colon + 8, mid - colon - 8);
  const std::string range = what.substr(mid + 14);
  const CLI::Option* o = nullptr;
  try {
    o = app.get_option(flag);
  } catch (const CLI::Error&) {
    return "";
  }
  const std::string type = o->get_type_name();
  const bool integer = type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0;  // "INT:INT in [1 - 64]"
  // "08", "0b11", "1'0": CLI11 read them in another base or refused them as out of range.
  const std::size_t first = value.find_first_not_of("+-");
  const bool not_decimal = integer && first != std::string::npos &&
                           std::isdigit(static_cast<unsigned char>(value[first])) && !decimal_integer_problem(value).empty();
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end && *end == '\0' && std::isfinite(x);
  if (!number && not_decimal) return flag + ": " + decimal_integer_problem(value);
  if (!number) return _f("{}: '{}' is not a number (allowed: {})", flag, value, range);
  if (integer && (x != std::floor(x) || value.find_first_of(".eE") != std::string::npos))
    return _f("{}: {} is not a whole number (allowed: {})", flag, value, range);
  if (not_decimal) return flag + ": " + decimal_integer_problem(value);
  return "";
}

// A value of thousands of characters (a pasted file, a runaway $(...)) would flood the terminal:
// a word of the message longer than 80 bytes is shown by its first 40 and its length.
std::string shorten_long_words(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i <= s.size();) {
    std::size_t j = s.find_first_of(" \n", i);
    if (j == std::string::npos) j = s.size();
    const std::string w = s.substr(i, j - i);
    std::size_t cut = 40;
    while (cut > 0 && cut < w.size() && (static_cast<unsigned char>(w[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8
    out += w.size() > 80 ? _f("{}… ({} characters)", w.substr(0, cut), w.size()) : w;
    if (j < s.size()) out += s[j];
    i = j + 1;
  }
  return out;
}

// Standard output could not take everything printed (closed, a full disk): the run failed.
bool stdout_failed() {
  std::cout.flush();
  return !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
}
int report_stdout_failure(const std::string& program) {
  std::cerr << program << ": " << _("error: ") << _("could not write to standard output (closed, or the disk is full)")
            << "\n";
  return kExitError;
}
// The language must be known before the chapter builds its options' help text, so it is read from
// the command line (and environment) here, before CLI11 parses anything. Returns an error message
// when Chinese was asked for but no catalog exists (run() reports it).
std::string choose_language() {
  try {
    set_language(language_from_command_line_or_environment());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
// What --seed promises in every chapter, after the chapter's own line (describe_seed).
std::string seed_promise() {
  return _("the same seed gives bit-identical numbers with the same OpenBLAS kernel and thread count (shown in "
           "the header); across kernels they agree within 1e-6 (checked only on chapter 03, by "
           "tests/chapters/test_reproducibility.cpp)");
}
// Lines of `text` wrapped to `width` columns, the first after `first` columns, the others indented
// by `next`; each line ends in '\n'.
std::string wrapped(const std::string& text, std::size_t width, std::size_t first, std::size_t next) {
  std::string out;
  bool first_line = true;
  for (const std::string& line : wrap_text(text, width, first, next)) {
    if (!first_line) out += std::string(next, ' ');
    out += line + "\n";
    first_line = false;
  }
  return out;
}
}  // namespace

std::string finite_number_problem(const std::string& s) {
  // CLI11 has already converted the text (so it is a number of some kind); strtod reads it the
  // same way, including "nan", "inf", "1e999" (overflow to inf) and hexadecimal floats.
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return _f("{} is not a number", s);
  if (!std::isfinite(x)) return _f("{} is not a finite number", s);
  return "";
}

std::string decimal_integer_problem(const std::string& s) {
  const std::size_t sign = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  const std::string digits = s.substr(sign);
  const bool plain = !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                     (digits.size() == 1 || digits[0] != '0');
  if (plain) return "";
  return _f("'{}' is not a whole number written in decimal digits (no 0x, 0b or 0o prefix, no leading 0, no "
            "spaces or separators)", s);
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) {
        const std::string problem = finite_number_problem(s);
        if (!problem.empty()) return problem;
        const double x = std::strtod(s.c_str(), nullptr);
        return x >= lo && x <= hi ? std::string() : _f("{} is not in {:g} … {:g}", s, lo, hi);
      },
      fmt::format("FLOAT in [{:g} - {:g}]", lo, hi));
}

CLI::Validator existing_input_file() {
  return CLI::Validator(
      [](std::string& s) {
        if (s.empty()) return std::string();  // run() says "needs a path, got an empty string"
        std::error_code ec;
        const auto st = std::filesystem::status(s, ec);
        if (!std::filesystem::exists(st)) return _f("no such file: {}", s);
        if (std::filesystem::is_directory(st)) return _f("{} is a folder, not a file", s);
        if (std::FILE* f = std::fopen(s.c_str(), "rb")) {
          std::fclose(f);
          return std::string();
        }
        return _f("{} cannot be opened for reading", s);
      },
      "");
}

CLI::Validator whole_number_of_parity(std::size_t lo, std::size_t hi, bool even) {
  return CLI::Validator(
      [lo, hi, even](std::string& s) {
        std::size_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size()) return _f("{} is not a whole number", s);
        if (v < lo || v > hi) return _f("{} is not in {} … {}", s, lo, hi);
        if ((v % 2 == 0) != even) return std::string(even ? _("must be even") : _("must be odd"));
        return std::string();
      },
      fmt::format("{} in [{} - {}]", even ? "EVEN" : "ODD", lo, hi));
}

std::size_t HelpFormatter::help_columns() { return std::min<std::size_t>(100, terminal_columns()); }

std::string HelpFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  const std::size_t width = help_columns();
  // The description's column: CLI11's (30) on a wide terminal; below the option when narrow.
  const bool narrow = width < 80;
  const std::size_t column = narrow ? 6 : get_column_width();
  const std::string name = make_option_name(opt, is_positional) + make_option_opts(opt);
  const std::string desc = make_option_desc(opt);
  std::string out = "  " + wrapped(name, width, 2, 6);
  if (desc.empty()) return out;
  const std::size_t name_w = display_width(name) + 2;
  if (!narrow && name_w < column && out.find('\n') + 1 == out.size()) {  // room on the option's own line
    out.pop_back();
    out += std::string(column - name_w, ' ');
  } else {
    out += std::string(column, ' ');
  }
  return out + wrapped(desc, width, column, column);
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  const std::string desc = CLI::Formatter::make_description(app);
  return desc.empty() ? desc : wrapped(desc.substr(0, desc.size() - 1), help_columns(), 0, 2);
}

ChapterApp::ChapterApp(const std::string& number, std::uint64_t default_seed, int total_steps)
    : language_error_(choose_language()),
      info_(chapter_info(number)),
      app_(_f("Chapter {} · {} — {}", info_.number, tr(info_.title), tr(info_.teaches)), info_.folder),
      total_steps_(total_steps),
      seed_(default_seed) {
  app_.formatter(std::make_shared<HelpFormatter>());
  app_.option_defaults()->group(_("Options"));  // the heading over the options in --help
  app_.set_help_flag("-h,--help", _("print this help message and exit"));
  auto fmt_ = app_.get_formatter();
  fmt_->label("Usage", _("Usage"));
  fmt_->label("OPTIONS", _("OPTIONS"));
  fmt_->label("REQUIRED", _("REQUIRED"));
  fmt_->label("Excludes", _("Excludes"));
  fmt_->label("Needs", _("Needs"));
  app_.add_option("--seed", seed_, _f("{}; {}", _("random seed"), seed_promise()))
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t(0), std::uint64_t(4294967295u)));
  app_.add_flag("--quiet", quiet_, _("print results only"));
  app_.add_flag("--no-color", no_color_, _("no colour (also when NO_COLOR is set or output is not a terminal)"));
  app_.add_flag("--full", full_, _("print every row and column of every tensor"));
  app_.add_flag("--step", pause_, _("pause for Enter after each step (when stdin is a terminal)"));
  app_.add_option("--export", export_dir_, _("write every shown tensor as .npy plus manifest.json into DIR"))
      ->type_name("DIR");
  app_.add_option("--html", html_file_, _("write every heatmap (and attention view) into one offline HTML page FILE"))
      ->type_name("FILE");
  app_.add_option("--lang", lang_, _("language of the lesson: en (English) or zh (简体中文); default from LANG"))
      ->check(CLI::IsMember({"en", "zh"}));
}

void ChapterApp::add_json_flag(const std::string& help) { app_.add_flag("--json", json_, help); }

void ChapterApp::describe_seed(const std::string& what) {
  app_.get_option("--seed")->description(_f("{}; {}", what, seed_promise()));
}

int ChapterApp::run(int argc, char** argv, const std::function<void(Narrator&)>& body) {
  if (::fcntl(STDOUT_FILENO, F_GETFD) < 0 && errno == EBADF) {
    // Closed (`>&-`): refused at once, before a file opened later could take descriptor 1 and
    // receive the narration.
    std::cerr << info_.folder << ": " << _("error: ") << _("standard output is closed; nothing would be shown") << "\n";
    return kExitError;
  }
  // Past a file-size limit (ulimit -f) a write fails with EFBIG and is reported like a full disk,
  // instead of SIGXFSZ ending the run with a temporary file left behind.
  ::signal(SIGXFSZ, SIG_IGN);
  ensure_fast_openblas(argc, argv);
  // No float option takes nan or ±inf, whether or not the chapter gave it finite_range; a whole
  // number is written in decimal digits (CLI11 would read 010 as 8, 0x10 as 16, 1'0 as 10).
  for (CLI::Option* opt : app_.get_options()) {
    const std::string type = opt->get_type_name();
    if (type.rfind("FLOAT", 0) == 0)
      opt->check(CLI::Validator([](std::string& s) { return finite_number_problem(s); }, "", "finite"));
    if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0)
      opt->check(CLI::Validator([](std::string& s) { return decimal_integer_problem(s); }, "", "decimal"));
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app_.help();
    return stdout_failed() ? report_stdout_failure(info_.folder) : kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app_.help("", CLI::AppFormatMode::All);
    return stdout_failed() ? report_stdout_failure(info_.folder) : kExitOk;
  } catch (const CLI::ParseError& e) {
    // CLI11's own message stays as it is (it names the flag); the lines around it are translated.
    const std::string clearer = range_message(app_, e.what());
    std::cerr << info_.folder << ": " << escape_control(shorten_long_words(clearer.empty() ? e.what() : clearer)) << "\n"
              << _f("Run '{} --help' for the options.", info_.folder) << "\n";
    return kExitUsage;
  }
  if (!language_error_.empty()) {
    std::cerr << info_.folder << ": error: " << language_error_ << "\n";
    return kExitError;
  }
  if (const std::string taken = option_given_as_value(app_); !taken.empty()) {
    std::cerr << info_.folder << ": " << escape_control(taken, /*keep_newlines=*/false) << "\n";
    return kExitUsage;
  }
  if (const std::string flag = empty_path_option(app_); !flag.empty()) {
    std::cerr << info_.folder << ": " << _f("{}: needs a path, got an empty string (an unset variable?)", flag) << "\n";
    return kExitUsage;
  }
  if (!export_dir_.empty() && !html_file_.empty()) {
    if (const std::string clash = export_html_clash(export_dir_, html_file_); !clash.empty()) {
      std::cerr << info_.folder << ": " << escape_control(clash, /*keep_newlines=*/false) << "\n";
      return kExitUsage;
    }
  }
  NarratorOptions opts;
  opts.seed = seed_;
  opts.quiet = quiet_;
  opts.full = full_;
  opts.pause = pause_;
  opts.color = color_wanted(no_color_);
  if (parse_only) return kExitOk;
  if (!html_file_.empty()) {  // checked before the export folder is created, and before any work
    std::string err = output_file_problem(html_file_);
    if (const auto place = data_place_holding(html_file_); err.empty() && place)
      err = _f("{} is inside the shipped data folder {} ({}); write the page somewhere else", html_file_,
               shown_path(place->dir), place->why);
    if (err.empty()) err = html_target_problem(html_file_);
    if (!err.empty()) {
      std::cerr << info_.folder << ": --html: " << escape_control(err, /*keep_newlines=*/false) << "\n";
      return kExitUsage;
    }
    opts.html_file = html_file_;
  }
  if (app_.count("--export") > 0) {  // "" was refused above
    try {
      prepare_export_dir(export_dir_);
    } catch (const std::exception& e) {
      std::cerr << info_.folder << ": " << escape_control(e.what(), /*keep_newlines=*/false) << "\n";
      return kExitUsage;
    }
    opts.export_dir = export_dir_;
  }
  std::string variable;
  if (const std::string cs = non_utf8_charset(&variable); !cs.empty()) {
    // Plain ASCII, in English: the one text such a terminal is sure to show as written.
    const std::string shown = escape_control(variable.substr(0, 30), false), set = escape_control(cs.substr(0, 24), false);
    std::cerr << info_.folder << ": note: " << shown << " names a character set other than UTF-8;\n"
              << "  this program writes UTF-8 (box lines, symbols, the Chinese lesson), shown garbled there.\n"
              << "  Use a UTF-8 locale (LANG=zh_CN.UTF-8 or C.UTF-8), or convert the output:\n  " << info_.folder
              << " ... | iconv -f UTF-8 -t " << set << "//TRANSLIT\n";
  }
  try {
    Narrator nar(info_, opts, count_steps_ ? count_steps_() : total_steps_, json_ ? std::cerr : std::cout);
    nar.header(question_);
    body(nar);
    nar.finish();
    if (json_) {
      if (!nar.json_document()) throw std::logic_error("--json: the chapter produced no JSON document");
      std::cout << *nar.json_document() << "\n" << std::flush;
    }
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << info_.folder << ": " << _("error: ") << escape_control(e.what()) << "\n";
    return kExitError;
  }
  return stdout_failed() ? report_stdout_failure(info_.folder) : kExitOk;
}

}  // namespace attn
