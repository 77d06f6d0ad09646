// The Chinese catalog and the translation switch (attn/present/i18n.hpp): every entry of
// po/zh_CN.po is translated, not fuzzy, and keeps the English's {} placeholders in the same order
// (fmt fills them by position); the compiled catalog is found and tr()/_f() use it; English is
// the message id itself. scripts/update-po check (ctest scripts/catalog) adds: no marked string
// of po/POTFILES lacks its entry.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "attn/present/i18n.hpp"

using namespace attn;

namespace {
struct PoEntry {
  std::string msgid, msgstr;
  bool fuzzy = false;
  int line = 0;
};

// Unescapes one "…" string of a .po line (\" \\ \n \t).
std::string po_string(const std::string& line) {
  const auto a = line.find('"'), b = line.rfind('"');
  std::string out;
  if (a == std::string::npos || b <= a) return out;
  for (std::size_t i = a + 1; i < b; ++i) {
    if (line[i] == '\\' && i + 1 < b) {
      const char c = line[++i];
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      out += line[i];
    }
  }
  return out;
}

std::vector<PoEntry> read_po(const std::string& path) {
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "cannot read " << path);
  std::vector<PoEntry> out;
  PoEntry cur;
  std::string line, *target = nullptr;
  bool fuzzy = false;
  int n = 0;
  auto flush = [&] {
    if (target != nullptr) out.push_back(cur);
    cur = PoEntry{};
    target = nullptr;
  };
  while (std::getline(f, line)) {
    ++n;
    if (line.rfind("#,", 0) == 0 && line.find("fuzzy") != std::string::npos) fuzzy = true;
    if (line.rfind("msgid ", 0) == 0) {
      flush();
      cur.fuzzy = fuzzy;
      fuzzy = false;
      cur.line = n;
      cur.msgid = po_string(line);
      target = &cur.msgid;
    } else if (line.rfind("msgstr ", 0) == 0) {
      cur.msgstr = po_string(line);
      target = &cur.msgstr;
    } else if (!line.empty() && line[0] == '"' && target != nullptr) {
      *target += po_string(line);
    }
  }
  flush();
  return out;
}

// The {…} replacement fields of an fmt string, in order ({{ and }} are literal braces).
std::vector<std::string> placeholders(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '{' && i + 1 < s.size() && s[i + 1] == '{') { ++i; continue; }
    if (s[i] == '}' && i + 1 < s.size() && s[i + 1] == '}') { ++i; continue; }
    if (s[i] != '{') continue;
    int depth = 1;
    std::size_t j = i + 1;
    for (; j < s.size() && depth > 0; ++j) depth += s[j] == '{' ? 1 : s[j] == '}' ? -1 : 0;
    out.push_back(s.substr(i, j - i));
    i = j - 1;
  }
  return out;
}
// The fields as "index:spec", sorted: "{}" "{:.1f}" -> "0:" "1:.1f"; a translation may reorder with
// explicit indices ("{1} … {0}"), which fmt allows only when every field of the string has one.
std::vector<std::string> numbered(const std::vector<std::string>& fields) {
  std::vector<std::string> out;
  int next = 0;
  for (const std::string& f : fields) {
    const std::string inner = f.substr(1, f.size() - 2);
    std::size_t k = 0;
    while (k < inner.size() && std::isdigit(static_cast<unsigned char>(inner[k]))) ++k;
    const std::string index = k > 0 ? inner.substr(0, k) : std::to_string(next++);
    std::string spec = inner.substr(k);
    out.push_back(index + (spec.empty() || spec[0] == ':' ? spec : ":" + spec));
  }
  std::sort(out.begin(), out.end());
  return out;
}
const std::string kPo = std::string(ATTN_SOURCE_DIR) + "/po/zh_CN.po";
}  // namespace

TEST_CASE("po/zh_CN.po: every entry translated, none fuzzy, placeholders as in the English") {
  const std::vector<PoEntry> entries = read_po(kPo);
  REQUIRE(entries.size() > 100);
  std::size_t checked = 0;
  for (const PoEntry& e : entries) {
    if (e.msgid.empty()) continue;  // the header
    CAPTURE(e.line);
    CAPTURE(e.msgid);
    CHECK_MESSAGE(!e.msgstr.empty(), "po/zh_CN.po:" << e.line << ": no Chinese for this message");
    CHECK_MESSAGE(!e.fuzzy, "po/zh_CN.po:" << e.line << ": fuzzy (a guess by msgmerge): check it, remove the flag");
    CHECK_MESSAGE(numbered(placeholders(e.msgid)) == numbered(placeholders(e.msgstr)),
                  "po/zh_CN.po:" << e.line << ": the translation's {} fields differ from the English's");
    std::size_t indexed = 0;
    const auto fields = placeholders(e.msgstr);
    for (const std::string& f : fields) indexed += f.size() > 2 && std::isdigit(static_cast<unsigned char>(f[1]));
    CHECK_MESSAGE((indexed == 0 || indexed == fields.size()),
                  "po/zh_CN.po:" << e.line << ": fmt cannot mix {} and {0} fields in one string");
    ++checked;
  }
  CHECK(checked + 1 == entries.size());
}

TEST_CASE("placeholders() finds fmt fields and skips escaped braces") {
  CHECK(placeholders("a {} b {:.1f} c {{x}} {:>{}}") == std::vector<std::string>{"{}", "{:.1f}", "{:>{}}"});
  CHECK(placeholders("no fields").empty());
  CHECK(numbered(placeholders("{} of {:.1f}")) == numbered(placeholders("{1:.1f} 中的 {0}")));
  CHECK(numbered(placeholders("{} of {:.1f}")) != numbered(placeholders("{1} 中的 {0:.1f}")));
}

TEST_CASE("tr and _f: English is the message id; Chinese comes from the compiled catalog") {
  REQUIRE_MESSAGE(!locale_dir().empty(), "no compiled catalog: is msgfmt (package gettext) installed?");
  CHECK(parse_language("en") == Language::English);
  CHECK(parse_language("zh") == Language::Chinese);
  CHECK(parse_language("zh_CN.UTF-8") == Language::Chinese);
  CHECK_THROWS_AS(parse_language("fr"), std::invalid_argument);
  set_language(Language::English);
  CHECK(std::string(_("Takeaway")) == "Takeaway");
  CHECK(_f("Step {}/{}  {}", 2, 7, "x") == "Step 2/7  x");
  set_language(Language::Chinese);
  const std::string zh = _("Takeaway");
  CHECK(zh != "Takeaway");
  CHECK(zh == [] {
    for (const PoEntry& e : read_po(kPo))
      if (e.msgid == "Takeaway") return e.msgstr;
    return std::string();
  }());
  const std::string step = _f("Step {}/{}  {}", 2, 7, "x");
  CHECK(step.find('2') != std::string::npos);
  CHECK(step != "Step 2/7  x");
  CHECK(std::string(_("a string that is not in the catalog")) == "a string that is not in the catalog");
  set_language(Language::English);
  CHECK(std::string(_("Takeaway")) == "Takeaway");
}

TEST_CASE("set_language: the system's own messages follow the lesson's language, never as '?'") {
  REQUIRE(!locale_dir().empty());
  set_language(Language::Chinese);
  const std::string zh = std::strerror(ENOENT);  // Chinese where the system has libc's catalog
  CHECK(zh.find('?') == std::string::npos);
  set_language(Language::English);  // back to English: LANGUAGE as it was, so English again
  CHECK(std::string(std::strerror(ENOENT)) == "No such file or directory");
}
