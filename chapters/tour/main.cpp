// The tour: one line per chapter (ready ones first marked ▶), then chapter 03 itself.
//   build/bin/attn-tour            list, then run chapter 03 with the same flags
//   build/bin/attn-tour --list     the list only
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/present/chapters.hpp"
#include "attn/present/terminal.hpp"
#include "attn/tensor/openblas.hpp"
#include "attn/present/i18n.hpp"  // last of ours: it defines the _ macro

int main(int argc, char** argv) {
  attn::ensure_fast_openblas(argc, argv);
  try {  // --lang zh (passed on to chapter 03 as well) or LANG=zh_CN.UTF-8: the list in Chinese
    attn::set_language(attn::language_from_command_line_or_environment());
  } catch (const std::exception& e) {
    std::cerr << "attn-tour: " << e.what() << "\n";
    return 1;
  }
  namespace fs = std::filesystem;
  const fs::path bin_dir = fs::read_symlink("/proc/self/exe").parent_path();
  bool list_only = false;
  std::vector<char*> forward;  // flags passed on to chapter 03
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") list_only = true;
    else if (a == "--help" || a == "-h") {
      std::cout << _("attn-tour: lists the chapters, then runs chapter 03.\n"
                     "  --list   only the list\n"
                     "  other flags are passed to chapter 03 (see 03_self_attention --help)\n");
      return 0;
    } else forward.push_back(argv[i]);
  }
  std::cout << _("Attention, step by step — the chapters (▶ built and ready; · planned)") << "\n\n";
  // Titles in one column as wide as the widest; what each teaches wrapped into the rest of 100.
  std::size_t title_w = 0;
  for (const auto& c : attn::chapter_list()) title_w = std::max(title_w, attn::display_width(attn::tr(c.title)));
  const std::size_t indent = 8 + title_w + 1;
  for (const auto& c : attn::chapter_list()) {
    const bool ready = fs::exists(bin_dir / c.folder);
    const std::vector<std::string> lines = attn::wrap_text(attn::tr(c.teaches), 100 - std::min<std::size_t>(indent, 60));
    std::cout << fmt::format("  {} {}  {} {}\n", ready ? "▶" : "·", c.number, attn::fit(attn::tr(c.title), title_w),
                             lines.front());
    for (std::size_t i = 1; i < lines.size(); ++i) std::cout << std::string(indent, ' ') << lines[i] << "\n";
  }
  std::cout << "\n" << _f("Run any of them as {}/<NN_topic> (--help lists its options).", bin_dir.string()) << "\n";
  if (list_only) return 0;
  const fs::path ch03 = bin_dir / "03_self_attention";
  std::cout << _("Now chapter 03:") << "\n\n" << std::flush;
  std::vector<char*> args{const_cast<char*>(ch03.c_str())};
  args.insert(args.end(), forward.begin(), forward.end());
  args.push_back(nullptr);
  execv(ch03.c_str(), args.data());
  std::cerr << _f("attn-tour: could not start {}", ch03.string()) << "\n";
  return 1;
}
