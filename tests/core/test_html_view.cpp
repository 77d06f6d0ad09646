// The offline head view (attn/present/html_view.hpp) and --html through the narrator: the page's
// data, bad input, the atomic write. test_html_chromium.cpp renders the page in a browser.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "attn/present/html_view.hpp"
#include "head_view_sample.hpp"
#include "attn/present/narrate.hpp"

using namespace attn;
using head_view_sample::count;
using head_view_sample::sample_set;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("head view page: self-contained, data for every set, tokens escaped, bad shapes refused") {
  const std::string page = head_view_html("Sample <page>", {sample_set()});
  CHECK(page.find("<!DOCTYPE html>") == 0);
  CHECK(page.find("Sample &lt;page&gt;") != std::string::npos);
  CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // the SVG namespace, nothing fetched
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("\"<sat>\"") != std::string::npos);  // inside JSON, read with textContent
  AttentionSet sneaky = sample_set();
  sneaky.query_tokens[0] = sneaky.key_tokens[0] = "</script>";
  const std::string p2 = head_view_html("x", {sneaky});
  CHECK(count(p2, "</script>") == 2);  // the two real ones; the token is written as <\/script>
  AttentionSet bad = sample_set();
  bad.key_tokens.pop_back();
  CHECK_THROWS_AS(head_view_html("x", {bad}), ShapeError);
  CHECK_THROWS_AS(head_view_html("x", {}), std::invalid_argument);
}

TEST_CASE("head view page: written atomically, an unwritable path throws and leaves nothing") {
  const fs::path dir = fs::temp_directory_path() / ("attn-html-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path page = dir / "view.html";
  write_head_view_html(page.string(), "t", {sample_set()});
  CHECK(slurp(page).find("</html>") != std::string::npos);
  CHECK_THROWS_AS(write_head_view_html((dir / "missing" / "v.html").string(), "t", {sample_set()}), std::runtime_error);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("narrator --html: every heatmap shown becomes a view, written by finish()") {
  const fs::path page = fs::temp_directory_path() / ("attn-narr-" + std::to_string(::getpid()) + ".html");
  NarratorOptions o;
  o.quiet = true;
  o.html_file = page.string();
  std::ostringstream out;
  Narrator nar(chapter_info("03"), o, 1, out);
  nar.step("one");
  Mat m = xt::zeros<float>({2, 3});
  m(0, 1) = 1.0f;
  m(1, 2) = 1.0f;
  nar.heatmap("weights", m, {"a", "b"}, {"x", "y", "z"}, "a caption");
  nar.attention_view(sample_set());
  Tensor3 heads = xt::zeros<float>({2, 2, 3});  // rows are distributions: drawn as two heads
  heads(0, 0, 0) = heads(0, 1, 1) = heads(1, 0, 2) = heads(1, 1, 2) = 1.0f;
  nar.show("per_head_weights", heads);
  nar.show("not_weights", Tensor3(heads * 2.0f));  // rows sum to 2: not attention, not drawn
  nar.finish();
  const std::string html = slurp(page);
  CHECK(html.find("weights: a caption") != std::string::npos);
  CHECK(html.find("\"sample\"") != std::string::npos);
  CHECK(html.find("per_head_weights") != std::string::npos);
  CHECK(html.find("not_weights") == std::string::npos);
  CHECK(out.str().find("Wrote 3 attention views to") != std::string::npos);
  // A second finish() (a chapter's own, then ChapterApp's) writes and announces nothing more.
  fs::remove(page);
  nar.finish();
  CHECK_FALSE(fs::exists(page));
  const std::string said = out.str();
  CHECK(said.find("Wrote 3 attention views") == said.rfind("Wrote 3 attention views"));
}
