// Translations: GNU gettext (glibc's libintl), text domain "attn", catalogs po/<lang>.po compiled to
// <build>/locale/<lang>/LC_MESSAGES/attn.mo at build time. English is the default and is never
// looked up: the English text is the message id, printed as written.
//
// Mark every string a learner reads:
//   nar.say(_("plain text"));                          // _(…): the translation of a literal
//   nar.say(_f("{} of {} words", a, b));               // _f(…): translate, then fmt::format it
//   const char* title = N_("Self-attention");          // N_(…): mark only; translate later with tr()
// The chapter's language: --lang en|zh, else the environment (LANGUAGE, LC_ALL, LC_MESSAGES, LANG
// starting with "zh" means Chinese). scripts/update-po extracts the marked strings (xgettext) into
// po/attn.pot and merges them into po/zh_CN.po; `scripts/update-po check` (ctest scripts/catalog)
// fails when a marked string has no Chinese entry, and tests/core/test_i18n.cpp when a
// translation's {} placeholders differ from the English.
#pragma once

#include <string>

#include <fmt/format.h>

namespace attn {

enum class Language { English, Chinese };

Language language();
// Switches the language of every later tr(); Chinese needs the compiled catalog (throws
// std::runtime_error naming the folders searched when there is none).
void set_language(Language lang);
// "en" -> English, "zh" (or "zh_CN", "zh_CN.UTF-8") -> Chinese; anything else throws std::invalid_argument.
Language parse_language(const std::string& name);
// Chinese when the first non-empty of LANGUAGE, LC_ALL, LC_MESSAGES, LANG starts with "zh".
Language language_from_environment();
// The language asked for on this process's command line (--lang X or --lang=X, read from
// /proc/self/cmdline so that it is known before any option text is built), else the environment.
Language language_from_command_line_or_environment();
// The folder holding <lang>/LC_MESSAGES/attn.mo: $ATTN_LOCALE_DIR, else locale/ in the build folder
// that holds the program (build*/bin/<program> -> build*/locale), else an installed copy's
// (DIR/bin/<program> -> DIR/share/attention_step_by_step/locale), else the one this build wrote.
// Empty when none exists.
std::string locale_dir();

// The translation of msgid in the current language (msgid itself in English or when missing).
const char* tr(const char* msgid);
std::string tr(const std::string& msgid);

}  // namespace attn

#define _(msgid) ::attn::tr(msgid)
#define N_(msgid) msgid
#define _f(msgid, ...) ::fmt::format(::fmt::runtime(::attn::tr(msgid)), __VA_ARGS__)
