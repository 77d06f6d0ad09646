// The checks every chapter smoke test starts with, in one place:
//   const RunResult r = check_chapter_runs("03_self_attention", {"--no-color"});
// runs the chapter, requires exit status 0 (the message is its stderr), reads the number of steps
// N from the program's own "Step 1/N" line (the chapter says it once, in main.cpp) and checks that
// every "Step k/N" was printed, and with --no-color that the output holds no escape code.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "run_program.hpp"

// N of the first "Step 1/N" line; 0 when there is none (a --quiet run).
inline int announced_steps(const RunResult& r) {
  const std::string key = "Step 1/";
  const std::size_t at = r.out.find(key);
  if (at == std::string::npos) return 0;
  return std::atoi(r.out.c_str() + at + key.size());
}

inline RunResult check_chapter_runs(const std::string& program, const std::vector<std::string>& args = {"--no-color"}) {
  RunResult r = run_program(program, args);
  REQUIRE_MESSAGE(r.status == 0, program << ": " << r.err);
  const int steps = announced_steps(r);
  CHECK_MESSAGE(steps > 0, program << " printed no \"Step 1/N\" line");
  for (int s = 1; s <= steps; ++s)
    CHECK_MESSAGE(r.has("Step " + std::to_string(s) + "/" + std::to_string(steps)), program << ": step " << s << " missing");
  if (std::find(args.begin(), args.end(), "--no-color") != args.end())
    CHECK_MESSAGE(r.out.find('\x1b') == std::string::npos, program << ": an escape code under --no-color");
  return r;
}
