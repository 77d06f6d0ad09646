#!/usr/bin/env bash
# scripts/lint must pass on the tree as it is and fail, naming what is wrong, on each planted
# violation: a `code:` pointer to a function its header does not declare and one to a header that
# does not exist, a header missing from its folder's README, a cited document not in the tree, a
# std::exp outside the softmax family, and an include that runs up a layer. Each is planted alone
# in a scratch copy of the tree (data/ and build folders left out) and removed before the next.
set -euo pipefail
src=${1:?usage: test_lint.sh SOURCE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$src" --exclude=./data --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tmp" -xf -
lint="$src/scripts/lint"

"$lint" "$tmp" >/dev/null || { echo "FAIL: lint rejects the tree as it is:"; "$lint" "$tmp"; exit 1; }

# expect_failure WHAT PATTERN: the lint must exit 1 and print a line matching PATTERN.
expect_failure() {
  local out
  if out=$("$lint" "$tmp"); then echo "FAIL: lint passed with $1"; exit 1; fi
  grep -qE "$2" <<<"$out" || { echo "FAIL: with $1 the message does not match '$2':"; echo "$out"; exit 1; }
  echo "ok: fails on $1"
}
main="$tmp/chapters/03_self_attention/main.cpp"
cp "$main" "$tmp/main.saved"

# 1. A code pointer to a function the header does not declare, split over two literals as the
#    chapters write long ones.
printf '  void planted(Narrator& nar) { nar.code("attn/tensor/softmax.hpp: softmax_row, "\n  "no_such_function"); }\n' >> "$main"
expect_failure "a code pointer to a missing function" \
  "chapters/03_self_attention/main.cpp:[0-9]+: code pointer names no_such_function, which attn/tensor/softmax.hpp does not declare"
cp "$tmp/main.saved" "$main"

# 2. A code pointer to a header that does not exist.
printf '  void planted(Narrator& nar) { nar.code("attn/tensor/no_such_header.hpp: softmax_row"); }\n' >> "$main"
expect_failure "a code pointer to a missing header" "code pointer names attn/tensor/no_such_header.hpp, which does not exist"
cp "$tmp/main.saved" "$main"

# 3. A header its folder's README does not name.
printf '#pragma once\n' > "$tmp/common/include/attn/nn/planted_header.hpp"
expect_failure "a header missing from its README" "common/include/attn/nn/README.md: does not name planted_header.hpp"
rm "$tmp/common/include/attn/nn/planted_header.hpp"

# 4. A document cited that is not in the tree.
victim="$tmp/common/src/nn/loss.cpp"
cp "$victim" "$tmp/loss.saved"
printf '// The rules are in DESIGN.md.\n' >> "$victim"
expect_failure "a cited document not in the tree" "common/src/nn/loss.cpp:[0-9]+: cites DESIGN.md, which is not in the tree"
cp "$tmp/loss.saved" "$victim"

# 5. A softmax re-derived with std::exp outside the family (a commented one does not count).
printf '// std::exp(x) in a comment is fine\nfloat planted(float x) { return std::exp(x); }\n' >> "$victim"
line=$(wc -l < "$victim")
expect_failure "std::exp outside the softmax family" "common/src/nn/loss.cpp:$line: std::exp outside the softmax family"
cp "$tmp/loss.saved" "$victim"

# 6. An include that runs up a layer (scripts/check-layers, run by the lint).
printf '#include "attn/present/narrate.hpp"\n' >> "$victim"
expect_failure "an include running up a layer" "common/src/nn/loss.cpp:[0-9]+: nn/ includes attn/present/"
cp "$tmp/loss.saved" "$victim"

"$lint" "$tmp" >/dev/null || { echo "FAIL: lint still fails after every plant was removed"; exit 1; }
echo "lint: passes on the tree, fails on each of the six planted violations"
