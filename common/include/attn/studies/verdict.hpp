// A verdict is data: what was measured, the claim it tests, the bound, and the outcome computed
// from them. Studies return verdicts; present/ chooses the printed words from `outcome` (never a
// literal sentence printed whatever was measured), and each verdict's test drives it both ways.
//   Verdict v = judge_at_least(measured_bleu, /*bound=*/90.0, /*partly=*/80.0);
//   if (v.outcome == Outcome::holds) …
#pragma once

#include <string>

namespace attn {

enum class Outcome {
  holds,         // the measurement meets the claim's bound
  partly,        // between the bound and a weaker one
  fails,         // the measurement contradicts the claim
  inconclusive,  // within noise of the alternative, or not measurable (a skipped row, a NaN)
  too_noisy,     // not judged: the measurement's own noise is larger than the claim's tolerance
};

struct Verdict {
  double measured = 0.0;  // the number compared with the bound
  double bound = 0.0;     // the claim holds when `measured` is on the right side of it
  double partly = 0.0;    // a weaker bound for Outcome::partly (equal to `bound` when unused)
  Outcome outcome = Outcome::inconclusive;
  bool holds() const { return outcome == Outcome::holds; }
};

// measured ≥ bound → holds; ≥ partly → partly; else fails; a non-finite measurement is
// inconclusive. `partly` defaults to `bound` (no middle ground).
Verdict judge_at_least(double measured, double bound, double partly);
inline Verdict judge_at_least(double measured, double bound) { return judge_at_least(measured, bound, bound); }
// measured ≤ bound → holds; ≤ partly → partly; else fails (partly ≥ bound).
Verdict judge_at_most(double measured, double bound, double partly);
inline Verdict judge_at_most(double measured, double bound) { return judge_at_most(measured, bound, bound); }
// Is `a` larger than `b` beyond `noise` (e.g. two standard errors)? a − b > noise → holds;
// |a − b| ≤ noise → inconclusive; a − b < −noise → fails. measured = a − b, bound = noise.
Verdict judge_greater(double a, double b, double noise);

// The outcome as an export/JSON identifier: "holds", "partly", "fails", "inconclusive",
// "too_noisy".
const char* outcome_id(Outcome o);

}  // namespace attn
