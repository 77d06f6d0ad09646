// The chapters in a learner's environment, whatever it sets: OPENBLAS_CORETYPE unset, set to a
// kernel OpenBLAS knows, or to a name it does not know (it then silently picks its own); LANG
// Chinese or English; COLUMNS unset, 40 or 200; one BLAS/OpenMP thread. Every run succeeds, no
// line is wider than 100 columns, and the header says which kernel OpenBLAS reports and whether
// the user's OPENBLAS_CORETYPE chose it.
#include <doctest/doctest.h>

#include <sstream>

#include "attn/present/terminal.hpp"
#include "run_program.hpp"

namespace {
std::size_t env_widest_line(const std::string& out, std::string* which) {
  std::istringstream in(out);
  std::string line;
  std::size_t w = 0;
  while (std::getline(in, line))
    if (attn::display_width(line) > w) w = attn::display_width(line), *which = line;
  return w;
}

// The header's lines: everything before the rule (a line of '─').
std::string env_header(const std::string& out) {
  const std::size_t rule = out.find("──────────");
  return rule == std::string::npos ? std::string() : out.substr(0, rule);
}

struct EnvCase {
  std::string name;
  std::vector<std::string> env;
  std::size_t width = 100;  // the widest line allowed: narration wraps at COLUMNS when it is wider
};

// Cases that do not name a kernel unset OPENBLAS_CORETYPE, which the parent environment may set.
const std::vector<EnvCase>& environments() {
  static const std::vector<EnvCase> cases = {
      {"OPENBLAS_CORETYPE unset", {"-u", "OPENBLAS_CORETYPE", "-u", "COLUMNS"}},
      {"OPENBLAS_CORETYPE=Prescott", {"OPENBLAS_CORETYPE=Prescott"}},
      {"OPENBLAS_CORETYPE=Haswell", {"OPENBLAS_CORETYPE=Haswell"}},
      {"OPENBLAS_CORETYPE=Nonsense", {"OPENBLAS_CORETYPE=Nonsense"}},
      {"LANG=zh_CN.UTF-8", {"-u", "OPENBLAS_CORETYPE", "LANG=zh_CN.UTF-8"}},
      {"LANG=zh_CN.UTF-8, OPENBLAS_CORETYPE=Haswell", {"LANG=zh_CN.UTF-8", "OPENBLAS_CORETYPE=Haswell"}},
      {"COLUMNS=40", {"-u", "OPENBLAS_CORETYPE", "COLUMNS=40"}},
      {"COLUMNS=200", {"-u", "OPENBLAS_CORETYPE", "COLUMNS=200"}, 200},
      {"one thread", {"-u", "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"}},
  };
  return cases;
}
}  // namespace

TEST_CASE("chapters 03, 04 and 07 run in every environment a learner may have, within 100 columns") {
  for (const std::string program : {"03_self_attention", "04_multi_head", "07_cross_attention"}) {
    for (const EnvCase& e : environments()) {
      CAPTURE(program);
      CAPTURE(e.name);
      const RunResult r = run_program(program, {"--no-color"}, e.env);
      REQUIRE_MESSAGE(r.status == 0, r.err);
      CHECK(r.has("Takeaway") != r.has("要点"));  // the whole lesson ran, in one language
      std::string line;
      CHECK_MESSAGE(env_widest_line(r.out, &line) <= e.width, "too wide: " << line);
      const std::string header = env_header(r.out);
      REQUIRE(!header.empty());
      CHECK_MESSAGE(env_widest_line(header, &line) <= 100, "header too wide: " << line);
      if (e.name == "OPENBLAS_CORETYPE=Nonsense") {
        CHECK(r.has("OPENBLAS_CORETYPE=Nonsense not recognised"));
        CHECK(header.find("(OPENBLAS_CORETYPE)") == std::string::npos);
      } else if (e.name == "OPENBLAS_CORETYPE=Prescott") {
        CHECK(r.has("OpenBLAS Prescott (OPENBLAS_CORETYPE)"));  // SSE3: every x86-64 runs it
      } else if (e.name.find("OPENBLAS_CORETYPE=") == std::string::npos) {
        CHECK(header.find("OPENBLAS_CORETYPE") == std::string::npos);  // nobody chose the kernel
      }
      if (e.name == "one thread") CHECK(header.find("1 thread") != std::string::npos);
    }
  }
}

TEST_CASE("the header fits 100 columns in both languages however long OPENBLAS_CORETYPE is") {
  const std::string long_name(300, 'x');
  for (const std::string lang : {"en", "zh"}) {
    for (const std::string& value : {std::string("Nonsense"), long_name, std::string("a\x1b[2Jb")}) {
      CAPTURE(lang);
      CAPTURE(value.size());
      // Chapter 07's Chinese title is the longest beside chapter 09's and 10's.
      const RunResult r = run_program("07_cross_attention", {"--quiet", "--no-color", "--lang", lang},
                                      {"OPENBLAS_CORETYPE=" + value});
      REQUIRE_MESSAGE(r.status == 0, r.err);
      std::string line;
      CHECK_MESSAGE(env_widest_line(r.out, &line) <= 100, "too wide: " << line);
      CHECK(r.out.find('\x1b') == std::string::npos);  // the user's text is shown escaped
      CHECK(r.out.find(std::string(60, 'x')) == std::string::npos);  // and cut short
    }
  }
}
