#!/usr/bin/env bash
# scripts/check-layers must pass on the tree as it is and fail, naming the file and line, when an
# include runs up a layer. Copies the core's folders to a scratch directory and plants one there.
set -euo pipefail
src=${1:?usage: test_check_layers.sh SOURCE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/common"
cp -r "$src/common/include" "$src/common/src" "$tmp/common/"

"$src/scripts/check-layers" "$tmp" >/dev/null || { echo "FAIL: check-layers rejects the tree as it is"; exit 1; }

# Plant: the ground layer reaching for the presentation layer.
victim="$tmp/common/src/tensor/softmax.cpp"
printf '#include "attn/present/narrate.hpp"\n' >> "$victim"
line=$(wc -l < "$victim")
if out=$("$src/scripts/check-layers" "$tmp"); then
  echo "FAIL: check-layers passed with tensor/ including present/"; exit 1
fi
grep -q "common/src/tensor/softmax.cpp:$line: tensor/ includes attn/present/" <<<"$out" \
  || { echo "FAIL: the message does not name the file and line:"; echo "$out"; exit 1; }

# Plant: a file at the top level of the include tree, outside every layer.
sed -i '$d' "$victim"
printf '#pragma once\n' > "$tmp/common/include/attn/stray.hpp"
if out=$("$src/scripts/check-layers" "$tmp"); then
  echo "FAIL: check-layers passed with a header outside the layer folders"; exit 1
fi
grep -q "common/include/attn/stray.hpp: a source file outside every layer folder" <<<"$out" \
  || { echo "FAIL: the message does not name the stray header:"; echo "$out"; exit 1; }
echo "check-layers: passes on the tree, fails on both planted violations"
