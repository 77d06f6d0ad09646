// Verdict words (attn/present/verdict_words.hpp).
#include "attn/present/verdict_words.hpp"

#include "attn/present/i18n.hpp"  // last: it defines the _ macro

namespace attn {

const char* outcome_word(Outcome o) {
  switch (o) {
    case Outcome::holds: return _("holds");
    case Outcome::partly: return _("partly");
    case Outcome::fails: return _("does not hold");
    case Outcome::too_noisy: return _("not judged (too noisy)");
    case Outcome::inconclusive: break;
  }
  return _("within noise");
}

const char* sentence_for(Outcome o, const char* holds, const char* fails, const char* otherwise) {
  return o == Outcome::holds ? holds : o == Outcome::fails ? fails : otherwise;
}

}  // namespace attn
