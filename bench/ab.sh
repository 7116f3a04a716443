#!/usr/bin/env bash
# Two builds of kpc run alternately on the same arguments, to tell a change from the noise:
#   bash bench/ab.sh N OLD_KPCDIR NEW_KPCDIR -- KPC ARGS...
# Each build runs N times (old, new, old, new, ...); prints per build the medians of wall time,
# user+sys CPU and peak RSS (/usr/bin/time), and every run's wall time. Outputs are discarded;
# compare them apart (cmp, sha256sum).
set -u
n=$1; A=$2; B=$3; shift 4
raw=$(mktemp); t=$(mktemp)
trap 'rm -f "$raw" "$t"' EXIT
for _ in $(seq "$n"); do
  for d in "$A" "$B"; do
    /usr/bin/time -f "%e %U %S %M" -o "$t" node "$d/bin/kpc.js" "$@" >/dev/null 2>&1
    echo "$d $(tail -1 "$t")" >> "$raw"
  done
done
python3 - "$raw" "$A" "$B" <<'P'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
for d in sys.argv[2:]:
    r = [(float(w), float(u) + float(s), int(m)) for x, w, u, s, m in rows if x == d]
    print(f"{d}: wall {st.median(x[0] for x in r):.2f} s, cpu {st.median(x[1] for x in r):.2f} s, rss {st.median(x[2] for x in r) / 1024:.0f} MB; walls {' '.join(f'{x[0]:.2f}' for x in r)}")
P
