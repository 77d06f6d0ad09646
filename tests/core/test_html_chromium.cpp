// The head view page (attn/present/html_view.hpp) rendered by headless Chromium, when
// /usr/bin/chromium exists (scripts/install-deps --browser installs it; without it this file's one
// test is skipped, never passed): one SVG text element per token on each side, and the layer and
// head chosen in the URL's hash are the ones drawn (checked on the lines' weights in the DOM).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "attn/present/html_view.hpp"
#include "head_view_sample.hpp"

using namespace attn;
using head_view_sample::count;
using head_view_sample::sample_set;
namespace fs = std::filesystem;

namespace {
std::string run_chromium(const fs::path& page, const std::string& hash, const fs::path& profile) {
  const std::string cmd = "/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
                          "--no-first-run --user-data-dir='" + profile.string() + "' --dump-dom 'file://" +
                          page.string() + hash + "' 2>/dev/null";
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  return out;
}
}  // namespace

// Skipped (doctest's skip decorator; ctest then reports "Skipped", see tests/CMakeLists.txt) when
// the browser is absent.
TEST_CASE("head view in headless Chromium: one SVG text per token, the hash selects the head drawn" *
          doctest::skip(!fs::exists("/usr/bin/chromium"))) {
  const fs::path dir = fs::temp_directory_path() / ("attn-chromium-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path page = dir / "view.html";
  write_head_view_html(page.string(), "chromium check", {sample_set()});
  const std::string head0 = run_chromium(page, "#set=0&layer=0&head=0", dir / "profile");
  REQUIRE_MESSAGE(head0.find("id=\"head-view\"") != std::string::npos, "Chromium printed no DOM: " << head0.substr(0, 300));
  CHECK(count(head0, "class=\"tok-q\"") == 5);
  CHECK(count(head0, "class=\"tok-k\"") == 5);
  CHECK(head0.find("&lt;sat&gt;") != std::string::npos);
  CHECK(head0.find("data-head=\"0\"") != std::string::npos);
  // Head 0 is the identity: a full-weight line 3 -> 3 and none 3 -> 2.
  CHECK(head0.find("data-q=\"3\" data-k=\"3\" data-w=\"1.0000\"") != std::string::npos);
  CHECK(head0.find("data-q=\"3\" data-k=\"2\"") == std::string::npos);
  CHECK(count(head0, "class=\"edge\"") == 5);
  const std::string head1 = run_chromium(page, "#set=0&layer=0&head=1", dir / "profile");
  CHECK(head1.find("data-head=\"1\"") != std::string::npos);
  CHECK(head1.find("data-q=\"3\" data-k=\"2\" data-w=\"1.0000\"") != std::string::npos);
  CHECK(head1.find("data-q=\"3\" data-k=\"3\"") == std::string::npos);
  // Layer 1, head 2 looks at token 1 from every row that can see it.
  const std::string l1 = run_chromium(page, "#set=0&layer=1&head=2", dir / "profile");
  CHECK(l1.find("data-layer=\"1\"") != std::string::npos);
  CHECK(l1.find("data-q=\"4\" data-k=\"1\" data-w=\"1.0000\"") != std::string::npos);
  fs::remove_all(dir);
}
