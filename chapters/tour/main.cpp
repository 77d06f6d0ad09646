// The tour: one line per chapter (ready ones first marked ▶), then chapter 03 itself.
//   build/bin/attn-tour            list, then run chapter 03 with the same flags
//   build/bin/attn-tour --list     the list only
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/present/chapters.hpp"
#include "attn/tensor/openblas.hpp"

int main(int argc, char** argv) {
  attn::ensure_fast_openblas(argc, argv);
  namespace fs = std::filesystem;
  const fs::path bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  bool list_only = false;
  std::vector<char*> forward;  // flags passed on to chapter 03
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") list_only = true;
    else if (a == "--help" || a == "-h") {
      std::cout << "attn-tour: lists the chapters, then runs chapter 03.\n"
                   "  --list   only the list\n"
                   "  other flags are passed to chapter 03 (see 03_self_attention --help)\n";
      return 0;
    } else forward.push_back(argv[i]);
  }
  std::cout << "Attention, step by step — the chapters (▶ built and ready; · planned)\n\n";
  for (const auto& c : attn::chapter_list()) {
    const bool ready = fs::exists(bin_dir / c.folder);
    std::cout << fmt::format("  {} {}  {:<26} {}\n", ready ? "▶" : "·", c.number, c.title, c.teaches);
  }
  std::cout << fmt::format("\nRun any of them as {}/<NN_topic> (--help lists its options).\n", bin_dir.string());
  if (list_only) return 0;
  const fs::path ch03 = bin_dir / "03_self_attention";
  std::cout << "Now chapter 03:\n\n" << std::flush;
  std::vector<char*> args{const_cast<char*>(ch03.c_str())};
  args.insert(args.end(), forward.begin(), forward.end());
  args.push_back(nullptr);
  execv(ch03.c_str(), args.data());
  std::cerr << "attn-tour: could not start " << ch03 << "\n";
  return 1;
}
