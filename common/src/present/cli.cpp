// The shared chapter command line (see attn/present/cli.hpp).
#include "attn/present/cli.hpp"

#include <iostream>

#include <fmt/format.h>

#include "attn/present/terminal.hpp"
#include "attn/tensor/openblas.hpp"

namespace attn {

ChapterApp::ChapterApp(const std::string& number, std::uint64_t default_seed, int total_steps)
    : info_(chapter_info(number)),
      app_(fmt::format("Chapter {} · {} — {}", info_.number, info_.title, info_.teaches), info_.folder),
      total_steps_(total_steps),
      seed_(default_seed) {
  app_.add_option("--seed", seed_, "random seed. The same seed gives bit-identical numbers with the same OpenBLAS kernel and "
                  "thread count (shown in the header), and numbers within 1e-6 of each other across kernels")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t(0), std::uint64_t(4294967295u)));
  app_.add_flag("--quiet", quiet_, "print results only");
  app_.add_flag("--no-color", no_color_, "no colour (also when NO_COLOR is set or output is not a terminal)");
  app_.add_flag("--full", full_, "print every row and column of every tensor");
  app_.add_flag("--step", pause_, "pause for Enter after each step (when stdin is a terminal)");
  app_.add_option("--export", export_dir_, "write every shown tensor as .npy plus manifest.json into DIR")
      ->type_name("DIR");
}

int ChapterApp::run(int argc, char** argv, const std::function<void(Narrator&)>& body) {
  ensure_fast_openblas(argc, argv);
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app_.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app_.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << info_.folder << ": " << escape_control(e.what()) << "\nRun '" << info_.folder << " --help' for the options.\n";
    return kExitUsage;
  }
  NarratorOptions opts;
  opts.seed = seed_;
  opts.quiet = quiet_;
  opts.full = full_;
  opts.pause = pause_;
  opts.color = color_wanted(no_color_);
  if (parse_only) return export_dir_.empty() && app_.count("--export") > 0 ? kExitUsage : kExitOk;
  if (app_.count("--export") > 0) {  // given, even as "": prepare_export_dir refuses an empty name
    try {
      prepare_export_dir(export_dir_);
    } catch (const std::exception& e) {
      std::cerr << info_.folder << ": " << escape_control(e.what()) << "\n";
      return kExitUsage;
    }
    opts.export_dir = export_dir_;
  }
  try {
    Narrator nar(info_, opts, total_steps_, std::cout);
    nar.header(question_);
    body(nar);
    nar.finish();
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << info_.folder << ": error: " << escape_control(e.what()) << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace attn
