// The shared main() of every doctest executable: switch OpenBLAS to its fast kernel first (as
// every program does), then run doctest with the command line as given.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "attn/present/i18n.hpp"
#include "attn/tensor/openblas.hpp"

namespace {

// Every test case starts in English, whatever LANG the suite runs under and whatever an earlier
// case switched to (a ChapterApp takes its language from the environment, as a chapter does). A
// case that checks Chinese text sets the language itself.
struct EnglishAtEachTestCase : doctest::IReporter {
  explicit EnglishAtEachTestCase(const doctest::ContextOptions&) {}
  void test_case_start(const doctest::TestCaseData&) override { attn::set_language(attn::Language::English); }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
DOCTEST_REGISTER_LISTENER("english_at_each_test_case", 1, EnglishAtEachTestCase);

}  // namespace

int main(int argc, char** argv) {
  attn::ensure_fast_openblas(argc, argv);
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
