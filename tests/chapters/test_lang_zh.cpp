// The Chinese edition end to end: every chapter runs with --lang zh (and LANG=zh_CN.UTF-8 picks
// it too), prints its step titles and takeaway in Chinese, and keeps every line within the
// terminal's 100 columns (CJK characters count 2). English stays the default whatever LANGUAGE
// says when --lang en is given; an unknown language is a usage error.
#include <doctest/doctest.h>

#include <sstream>

#include "attn/present/terminal.hpp"
#include "run_program.hpp"

namespace {
// The widest line of a program's output, in terminal columns.
std::size_t widest_line(const std::string& out, std::string* which = nullptr) {
  std::istringstream in(out);
  std::string line;
  std::size_t w = 0;
  while (std::getline(in, line))
    if (attn::display_width(line) > w) {
      w = attn::display_width(line);
      if (which) *which = line;
    }
  return w;
}

struct Case {
  const char* program;
  std::vector<std::string> args;
  const char* title;  // the chapter's Chinese title, as the header prints it
};
}  // namespace

TEST_CASE("every chapter runs in Chinese, with lines no wider than 100 columns") {
  const std::vector<Case> cases = {
      {"00_seq2seq_bottleneck", {}, "第 00 章 · Seq2Seq 的瓶颈"},
      {"01_bahdanau", {}, "第 01 章 · Bahdanau 注意力"},
      {"02_luong", {}, "第 02 章 · Luong 注意力"},
      {"03_self_attention", {}, "第 03 章 · 自注意力"},
      {"04_multi_head", {}, "第 04 章 · 多头注意力"},
      {"05_positional_encoding", {}, "第 05 章 · 位置编码"},
      {"06_efficient_attention", {"--sizes", "256,512,1024"}, "第 06 章 · 高效注意力"},
      {"07_cross_attention", {}, "第 07 章 · 交叉注意力 (cross-attention)"},
      {"08_transformer", {}, "第 08 章 · Transformer"},
      {"09_modern_decoder", {"--tokens", "20"}, "第 09 章 · 现代解码器 (modern decoder)"},
      {"10_interpretability", {}, "第 10 章 · 可解释性 (interpretability)"},
      {"11_fast_attention", {"--sizes", "256,512", "--dims", "64", "--heads", "2", "--gpu-sizes", "256"},
       "第 11 章 · 快速注意力"},
      {"12_beyond_attention", {}, "第 12 章 · 超越 softmax 注意力"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.program);
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--lang", "zh", "--no-color"});
    const RunResult r = run_program(c.program, args);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(r.has(c.title));
    CHECK(r.has("第 1/"));   // "Step 1/N"
    CHECK(r.has("要点"));    // "Takeaway"
    CHECK(r.has("为什么："));  // "why:"
    CHECK_FALSE(r.has("Takeaway"));
    std::string line;
    CHECK_MESSAGE(widest_line(r.out, &line) <= 100, "too wide: " << line);
  }
}

TEST_CASE("LANG=zh_CN.UTF-8 chooses Chinese; --lang en keeps English; --lang fr is a usage error") {
  const RunResult zh = run_program("03_self_attention", {"--quiet"}, {"LANG=zh_CN.UTF-8", "LANGUAGE=", "LC_ALL="});
  REQUIRE_MESSAGE(zh.status == 0, zh.err);
  CHECK(zh.has("要点"));
  const RunResult en = run_program("03_self_attention", {"--quiet", "--lang", "en"}, {"LANG=zh_CN.UTF-8"});
  REQUIRE_MESSAGE(en.status == 0, en.err);
  CHECK(en.has("Takeaway"));
  CHECK_FALSE(en.has("要点"));
  const RunResult help = run_program("04_multi_head", {"--help", "--lang", "zh"});
  CHECK(help.status == 0);
  CHECK(help.has("选项"));       // CLI11's OPTIONS heading
  CHECK(help.has("头数"));       // --heads's help text
  const RunResult bad = run_program("03_self_attention", {"--lang", "fr"});
  CHECK(bad.status == 2);
  CHECK(bad.err_has("--lang"));
  const RunResult bad_zh = run_program("04_multi_head", {"--lang", "zh", "--heads", "3"});
  CHECK(bad_zh.status == 2);
  CHECK(bad_zh.err_has("运行"));  // "Run '04_multi_head --help' for the options." in Chinese
}

TEST_CASE("English lines stay within 100 columns too") {
  for (const char* program : {"03_self_attention", "04_multi_head", "05_positional_encoding"}) {
    CAPTURE(program);
    const RunResult r = run_program(program, {"--no-color"}, {"LANG=C", "LANGUAGE=", "LC_ALL="});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    std::string line;
    CHECK_MESSAGE(widest_line(r.out, &line) <= 100, "too wide: " << line);
  }
}
