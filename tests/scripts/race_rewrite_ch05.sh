#!/usr/bin/env bash
# A checkpoint rewritten in place (same inode, no rename) by another program while chapter 05 reads
# it. A writer rewrites a scratch copy of data/ch05/rope.safetensors over and over in two halves,
# alternating two valid RoPE models (the shipped one and one retrained for 400 steps), while
# chapter 05 runs RUNS times. Each run is classified:
#   whole-A / whole-B  exit 0 with exactly the output of a quiet run on model A / B
#   refused            exit 1 naming rope.safetensors as changed (or cut short) while it was read
#   BAD                anything else: exit 0 with other figures (a mixed file was used), or a crash
#   tests/scripts/race_rewrite_ch05.sh BIN_DIR [RUNS]      (exit 1 when any run is BAD)
set -euo pipefail
bin=${1:?usage: race_rewrite_ch05.sh BIN_DIR [RUNS]}
runs=${2:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
writer_pid=
cleanup() { [ -n "$writer_pid" ] && kill "$writer_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

mkdir -p "$tmp/a/ch05" "$tmp/b" "$tmp/race/ch05"
cp "$src"/data/ch05/*.safetensors "$tmp/a/ch05/"
cp -r "$tmp/a/ch05" "$tmp/b/"
ATTN_DATA_DIR="$tmp/b" "$bin/05_positional_encoding" --train --train-steps 400 --quiet >/dev/null
cp "$tmp"/a/ch05/*.safetensors "$tmp/race/ch05/"
cp "$tmp/b/ch05/rope.safetensors" "$tmp/race/ch05/rope_b.safetensors"
cp "$tmp/a/ch05/rope.safetensors" "$tmp/race/ch05/rope_a.safetensors"
[ "$(stat -c %s "$tmp/race/ch05/rope_a.safetensors")" = "$(stat -c %s "$tmp/race/ch05/rope_b.safetensors")" ] ||
  { echo "the two RoPE models differ in size: the halves would not line up" >&2; exit 2; }
ATTN_DATA_DIR="$tmp/a" "$bin/05_positional_encoding" --quiet --no-color >"$tmp/out_a"
cp "$tmp/b/ch05/rope.safetensors" "$tmp/a/ch05/rope.safetensors"
ATTN_DATA_DIR="$tmp/a" "$bin/05_positional_encoding" --quiet --no-color >"$tmp/out_b"
cmp -s "$tmp/out_a" "$tmp/out_b" && { echo "models A and B print the same: the test cannot tell them apart" >&2; exit 2; }

# The writer: in place, first half, a pause, second half; A and B in turn.
python3 - "$tmp/race/ch05" <<'EOF' &
import os, sys, time
d = sys.argv[1]
blobs = [open(os.path.join(d, n), "rb").read() for n in ("rope_a.safetensors", "rope_b.safetensors")]
half = len(blobs[0]) // 2
target = os.path.join(d, "rope.safetensors")
k = 0
while True:
    k += 1
    b = blobs[k % 2]
    with open(target, "r+b") as f:
        f.write(b[:half]); f.flush(); os.fsync(f.fileno())
        time.sleep(0.002)
        f.write(b[half:]); f.flush()
    time.sleep(0.001)
EOF
writer_pid=$!
sleep 0.2

whole_a=0 whole_b=0 refused=0 bad=0
for i in $(seq 1 "$runs"); do
  set +e
  ATTN_DATA_DIR="$tmp/race" "$bin/05_positional_encoding" --quiet --no-color >"$tmp/out" 2>"$tmp/err"
  status=$?
  set -e
  if [ $status = 0 ] && cmp -s "$tmp/out" "$tmp/out_a"; then whole_a=$((whole_a + 1))
  elif [ $status = 0 ] && cmp -s "$tmp/out" "$tmp/out_b"; then whole_b=$((whole_b + 1))
  elif [ $status = 1 ] && grep -q "rope.safetensors: changed" "$tmp/err"; then refused=$((refused + 1))
  else bad=$((bad + 1)); echo "run $i: exit $status: $(head -c 300 "$tmp/err")"
  fi
done
echo "runs $runs: whole-A $whole_a, whole-B $whole_b, refused $refused, BAD $bad"
[ $bad = 0 ]
