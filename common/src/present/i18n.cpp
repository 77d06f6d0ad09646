// Translations through glibc's gettext (see attn/present/i18n.hpp).
#include "attn/present/i18n.hpp"

#include <libintl.h>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

namespace fs = std::filesystem;

namespace {
constexpr const char* kDomain = "attn";
Language g_language = Language::English;

bool has_catalog(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "zh_CN" / "LC_MESSAGES" / "attn.mo", ec);
}

std::vector<fs::path> locale_candidates() {
  std::vector<fs::path> c;
  if (const char* env = std::getenv("ATTN_LOCALE_DIR"); env && *env) c.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux: the running program
  if (!ec) {
    c.push_back(exe.parent_path().parent_path() / "locale");  // build*/bin/<program> -> build*/locale
    c.push_back(exe.parent_path().parent_path() / "share" / "attention_step_by_step" / "locale");  // installed
  }
#ifdef ATTN_BUILD_LOCALE_DIR
  c.emplace_back(ATTN_BUILD_LOCALE_DIR);
#endif
  return c;
}

bool starts_with_zh(const char* v) { return v && v[0] == 'z' && v[1] == 'h'; }
}  // namespace

Language language() { return g_language; }

std::string locale_dir() {
  for (const fs::path& d : locale_candidates())
    if (has_catalog(d)) return d.string();
  return "";
}

void set_language(Language lang) {
  static std::optional<std::string> language_before;  // LANGUAGE as it was before Chinese set it
  static bool set_by_us = false;
  if (lang == Language::English) {
    if (set_by_us) {  // back to English: system messages (strerror) in English again, not Chinese
      if (language_before) setenv("LANGUAGE", language_before->c_str(), 1);
      else unsetenv("LANGUAGE");
      set_by_us = false;
      textdomain(textdomain(nullptr));
    }
    g_language = lang;
    return;
  }
  const std::string dir = locale_dir();
  if (dir.empty()) {
    std::string searched;
    for (const fs::path& d : locale_candidates()) searched += (searched.empty() ? "" : ", ") + d.string();
    throw std::runtime_error("no Chinese catalog (zh_CN/LC_MESSAGES/attn.mo) in " + searched +
                             "; build the project (msgfmt compiles po/zh_CN.po) or set ATTN_LOCALE_DIR");
  }
  // gettext reads the language from LANGUAGE, but ignores it in the plain "C" locale: use C.UTF-8
  // for messages only (numbers keep the "C" format), unless a real locale is already set.
  const char* current = std::setlocale(LC_MESSAGES, nullptr);
  if (current == nullptr || std::string(current) == "C" || std::string(current) == "POSIX")
    if (std::setlocale(LC_MESSAGES, "C.UTF-8") == nullptr) std::setlocale(LC_MESSAGES, "C.utf8");
  if (!set_by_us) {
    const char* before = std::getenv("LANGUAGE");
    language_before = before ? std::optional<std::string>(before) : std::nullopt;
    set_by_us = true;
  }
  setenv("LANGUAGE", "zh_CN", 1);
  bindtextdomain(kDomain, dir.c_str());
  bind_textdomain_codeset(kDomain, "UTF-8");
  bind_textdomain_codeset("libc", "UTF-8");  // strerror's Chinese in UTF-8, not "?" in the C locale's ASCII
  textdomain(textdomain(nullptr));  // drops gettext's cache of earlier lookups
  g_language = lang;
}

Language parse_language(const std::string& name) {
  if (name == "en" || name == "C" || name.rfind("en_", 0) == 0) return Language::English;
  if (name == "zh" || name.rfind("zh_", 0) == 0) return Language::Chinese;
  throw std::invalid_argument("unknown language '" + name + "' (en or zh)");
}

Language language_from_environment() {
  for (const char* var : {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"}) {
    const char* v = std::getenv(var);
    if (v && *v) return starts_with_zh(v) ? Language::Chinese : Language::English;
  }
  return Language::English;
}

Language language_from_command_line_or_environment() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t pos = 0; pos < all.size();) {
    const std::size_t end = all.find('\0', pos);
    args.push_back(all.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string value;
    if (args[i] == "--lang" && i + 1 < args.size()) value = args[i + 1];
    else if (args[i].rfind("--lang=", 0) == 0) value = args[i].substr(7);
    else continue;
    try {
      return parse_language(value);
    } catch (const std::invalid_argument&) {
      break;  // the command line parser reports it with the flag's name
    }
  }
  return language_from_environment();
}

const char* tr(const char* msgid) {
  if (g_language == Language::English || msgid == nullptr || *msgid == '\0') return msgid;
  return dgettext(kDomain, msgid);
}

std::string tr(const std::string& msgid) { return tr(msgid.c_str()); }

}  // namespace attn
