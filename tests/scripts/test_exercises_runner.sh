#!/usr/bin/env bash
# scripts/exercises says what is wrong instead of exiting silently, and prints every hint whole:
#   - `hint N` prints a hint's continuation lines (9 hints in chapters 08–11 run over two lines);
#   - `check 99` and `hint 99` exit 2 with a message (they used to exit 2 saying nothing);
#   - a number too big for the shell's arithmetic is named as typed, not as a wrapped number.
# None of these needs a build.
set -uo pipefail
src=${1:?usage: test_exercises_runner.sh SOURCE_DIR}
ex="$src/scripts/exercises"
fail=0
no() { echo "FAIL: $*"; fail=1; }

out=$("$ex" hint 8) || no "hint 8 exited $?"
grep -q "a sum of$" <<<"$out" && grep -q "log-probabilities, i.e. the log of the product of probabilities." <<<"$out" \
  || no "hint 8 drops the line after '…: a sum of'"
grep -q "parent, then token, so the result is deterministic." <<<"$out" || no "hint 8 cuts '…break ties by'"
out=$("$ex" hint 9) || no "hint 9 exited $?"
grep -q "ONE head, so it restarts at 0 for every head." <<<"$out" || no "hint 9 drops 'ONE head, …'"
# Every comment line right after a hint reaches the output (all chapters).
for f in "$src"/chapters/*/exercises.cpp; do
  n=$(basename "$(dirname "$f")" | cut -c1-2)
  out=$("$ex" hint "$n")
  while IFS= read -r line; do
    grep -qF -- "${line#// }" <<<"$out" || no "hint $n drops: ${line#// }"
  done < <(awk '/^\/\/ Hint:/ { h = 1; next } h && /^\/\/ / { print; next } { h = 0 }' "$f")
done

for cmd in check hint; do
  err=$("$ex" $cmd 99 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || no "$cmd 99 exits $rc, not 2"
  grep -q "no exercises for chapter '99'" <<<"$err" || no "$cmd 99 says nothing (stderr: '$err')"
done
err=$("$ex" hint 99999999999999999999 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || no "hint 99999999999999999999 exits $rc"
grep -q "chapter '99999999999999999999'" <<<"$err" || no "hint 99999999999999999999 names another chapter: '$err'"
err=$("$ex" hint abc 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "not a chapter number" <<<"$err" || no "hint abc: exit $rc, '$err'"
err=$("$ex" frobnicate 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "unknown command 'frobnicate'" <<<"$err" || no "frobnicate: exit $rc, '$err'"
err=$("$ex" check 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "which chapter?" <<<"$err" || no "check without a chapter: exit $rc, '$err'"
"$ex" hint 008 | grep -q "Exercise 08.1" || no "hint 008 does not mean chapter 08"

[ $fail -eq 0 ] && echo "exercises runner: hints whole, bad chapter numbers and commands named"
exit $fail
