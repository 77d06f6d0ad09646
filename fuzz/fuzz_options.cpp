// libFuzzer target: chapter 05's whole command line (the shared options and its own validators,
// the ones that once threw std::invalid_argument) on arbitrary argument lists. The input is split
// at NUL bytes into at most 16 arguments. ChapterApp::parse_only stops after the checks, so the
// exit status must be 0 (accepted) or 2 (refused with a message); anything else — an exception
// escaping, a crash, a sanitizer report — is a finding. The chapter's main() is compiled into
// this target as attn_fuzz_chapter_main (fuzz/CMakeLists.txt).
//   scripts/fuzz options 60
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "attn/present/cli.hpp"

int attn_fuzz_chapter_main(int argc, char** argv);

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  attn::ChapterApp::parse_only = true;
  setenv("ATTN_OPENBLAS_REEXEC", "1", 1);  // never re-execute the fuzzer to switch BLAS kernels
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"05_positional_encoding"};
  std::string cur;
  for (std::size_t i = 0; i < size && args.size() <= 16; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(char(data[i]));
    }
  }
  if (args.size() <= 16) args.push_back(cur);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = attn_fuzz_chapter_main(int(args.size()), argv.data());
  if (rc != attn::kExitOk && rc != attn::kExitUsage) std::abort();
  return 0;
}
