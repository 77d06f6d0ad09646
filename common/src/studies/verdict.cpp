// Verdicts from measurements (attn/studies/verdict.hpp).
#include "attn/studies/verdict.hpp"

#include <cmath>

namespace attn {

Verdict judge_at_least(double measured, double bound, double partly) {
  Verdict v{measured, bound, partly, Outcome::inconclusive};
  if (!std::isfinite(measured)) return v;
  v.outcome = measured >= bound ? Outcome::holds : measured >= partly ? Outcome::partly : Outcome::fails;
  return v;
}

Verdict judge_at_most(double measured, double bound, double partly) {
  Verdict v{measured, bound, partly, Outcome::inconclusive};
  if (!std::isfinite(measured)) return v;
  v.outcome = measured <= bound ? Outcome::holds : measured <= partly ? Outcome::partly : Outcome::fails;
  return v;
}

Verdict judge_greater(double a, double b, double noise) {
  const double d = a - b;
  Verdict v{d, noise, noise, Outcome::inconclusive};
  if (!std::isfinite(d) || !std::isfinite(noise)) return v;
  if (d > noise) v.outcome = Outcome::holds;
  else if (d < -noise) v.outcome = Outcome::fails;
  return v;
}

const char* outcome_id(Outcome o) {
  switch (o) {
    case Outcome::holds: return "holds";
    case Outcome::partly: return "partly";
    case Outcome::fails: return "fails";
    case Outcome::too_noisy: return "too_noisy";
    case Outcome::inconclusive: break;
  }
  return "inconclusive";
}

}  // namespace attn
