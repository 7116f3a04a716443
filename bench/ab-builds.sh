#!/bin/bash
# A/B of two kpc builds at 20,000 Services: compile and a one-endpoint delta, iptables and ipvs
# mode, alternating old and new, 3 rounds; wall time and peak RSS per run (/usr/bin/time).
#   OLD=/path/to/old/checkout NEW=/path/to/new/checkout DIR=/tmp/ab bench/ab-builds.sh
# Each checkout must be built (npm run build). The new one is run with --kube-proxy-version 1.34
# (older builds know only v1.34). Input: bench/gen.js --services 20000 --seed 1 --format json.
set -u
: "${OLD:?checkout of the old build}" "${NEW:?checkout of the new build}" "${DIR:=/tmp/kpc-ab}"
mkdir -p "$DIR" && cd "$DIR"
[ -f c20k.json ] || node "$NEW/dist/bench/gen.js" --services 20000 --seed 1 --format json > c20k.json
# One endpoint address changed: the first EndpointSlice endpoint of the generated file.
line=$(grep -n -m1 '"10.128.0.2"' c20k.json | cut -d: -f1)
sed "${line}s/\"10.128.0.2\"/\"10.128.250.250\"/" c20k.json > c20k-b.json
A="--hostname-override node-0 --cluster-cidr 10.244.0.0/16"
for r in 1 2 3; do
  for m in iptables ipvs; do
    for side in old new; do
      if [ $side = old ]; then bin=$OLD/bin/kpc.js; v=""; else bin=$NEW/bin/kpc.js; v="--kube-proxy-version 1.34"; fi
      prev=prev-$m-$side.out; rm -rf "$prev" ".$prev".*
      /usr/bin/time -f "$r $m $side compile %e s %M KB" node "$bin" compile -f c20k.json $A --proxy-mode $m $v -o "$prev" 2>&1 | grep compile
      rm -rf "delta-$m-$side.out" ".delta-$m-$side.out".*
      /usr/bin/time -f "$r $m $side delta %e s %M KB" node "$bin" compile -f c20k-b.json $A --proxy-mode $m $v --previous "$prev" -o "delta-$m-$side.out" 2>&1 | grep delta
    done
    diff -r -x .kpc-bundle "delta-$m-old.out" "delta-$m-new.out" >/dev/null && echo "$r $m deltas identical"
  done
done
