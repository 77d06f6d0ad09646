// The printed word for a computed verdict (attn/studies/verdict.hpp), in the lesson's language:
// "holds", "partly", "does not hold", "within noise", "not judged (too noisy)". A report picks its
// sentence from the outcome; it never prints a verdict that the measurement did not produce.
#pragma once

#include "attn/studies/verdict.hpp"

namespace attn {

const char* outcome_word(Outcome o);
// The sentence a report prints for an outcome: `holds`, `fails`, or `otherwise` (partly,
// inconclusive or too noisy), each already translated.
const char* sentence_for(Outcome o, const char* holds, const char* fails, const char* otherwise);

}  // namespace attn
