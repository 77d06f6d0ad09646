// attn-bleu: corpus BLEU-4 of a hypothesis file against a reference file, so a learner can score
// their own translations with the same code the chapters use.
//   attn-bleu REF HYP                one sentence per line, whitespace-tokenised
//   attn-bleu REF HYP --by-length    also BLEU per reference-length bucket (5-10 … 51-60)
// Output (sacreBLEU's layout): BLEU = 34.12 66.7/40.0/25.0/14.3 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)
// Exit status: 0 ok, 2 bad input (missing file, a folder or device instead of a file, a line over
// 1 MiB, different line counts).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attn/data/bleu.hpp"
#include "attn/present/terminal.hpp"

namespace {

constexpr std::size_t kMaxLineBytes = 1 << 20;  // 1 MiB: far beyond any sentence

// One sentence per line. Refuses what is not a regular file (a folder, /dev/zero, a pipe) and a
// line longer than kMaxLineBytes, so that nothing is read without bound.
std::vector<attn::Tokens> read_lines(const std::string& path, const char* what) {
  namespace fs = std::filesystem;
  const std::string shown = attn::escape_control(path, false);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw std::runtime_error(fmt::format("cannot open {} file '{}': no such file", what, shown));
  if (fs::is_directory(st)) throw std::runtime_error(fmt::format("{} '{}' is a folder, not a file", what, shown));
  if (!fs::is_regular_file(st))
    throw std::runtime_error(fmt::format("{} '{}' is not a regular file (a device, pipe or socket)", what, shown));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {} file '{}'", what, shown));
  std::vector<attn::Tokens> lines;
  std::vector<char> buf(kMaxLineBytes + 2);
  while (in.getline(buf.data(), std::streamsize(buf.size()))) {
    std::string line(buf.data(), std::size_t(in.gcount()) - (in.eof() ? 0 : 1));
    lines.push_back(attn::split_whitespace(line));
  }
  if (!in.eof()) {  // failbit without eof: the buffer filled before a newline
    if (std::size_t(in.gcount()) + 1 >= buf.size())
      throw std::runtime_error(fmt::format("line {} of {} file '{}' is longer than {} bytes: not one sentence per line",
                                           lines.size() + 1, what, shown, kMaxLineBytes));
    throw std::runtime_error(fmt::format("cannot read {} file '{}'", what, shown));
  }
  return lines;
}

std::string format_score(const attn::BleuScore& s) {
  const double ratio = s.ref_len > 0 ? double(s.hyp_len) / double(s.ref_len) : 0.0;
  return fmt::format("BLEU = {:.2f} {:.1f}/{:.1f}/{:.1f}/{:.1f} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
                     100 * s.bleu, 100 * s.precisions[0], 100 * s.precisions[1], 100 * s.precisions[2],
                     100 * s.precisions[3], s.brevity_penalty, ratio, s.hyp_len, s.ref_len);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Corpus BLEU-4 (Papineni et al. 2002) of HYP against REF, one sentence per line."};
  std::string ref_path, hyp_path;
  bool by_length = false;
  app.add_option("REF", ref_path, "reference file, one whitespace-tokenised sentence per line")->required();
  app.add_option("HYP", hyp_path, "hypothesis file, line i translates line i of REF")->required();
  app.add_flag("--by-length", by_length, "also report BLEU per reference-length bucket (5-10 … 51-60)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    const auto refs = read_lines(ref_path, "reference");
    const auto hyps = read_lines(hyp_path, "hypothesis");
    if (refs.size() != hyps.size())
      throw std::runtime_error(fmt::format("'{}' has {} lines but '{}' has {}: need one hypothesis per reference",
                                           attn::escape_control(ref_path, false), refs.size(),
                                           attn::escape_control(hyp_path, false), hyps.size()));
    std::printf("%s\n", format_score(attn::corpus_bleu(hyps, refs)).c_str());
    if (by_length) {
      std::vector<std::size_t> lengths;
      for (const auto& r : refs) lengths.push_back(r.size());
      for (const auto& b : attn::bleu_by_length(hyps, refs, lengths))
        if (b.sentences == 0) std::printf("  %-6s     0 sentences\n", b.bucket.label().c_str());
        else std::printf("  %-6s %5zu sentences  %s\n", b.bucket.label().c_str(), b.sentences, format_score(b.score).c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attn-bleu: %s\n", e.what());
    return 2;
  }
  return 0;
}
