#!/bin/bash
# A/B: old (49234d6) vs new (HEAD) kpc, 20k Services, compile and delta, both modes, alternating.
cd /tmp/nftscale
A="--hostname-override node-0 --cluster-cidr 10.244.0.0/16"
for r in 1 2 3; do
  for m in iptables ipvs; do
    for side in old new; do
      if [ $side = old ]; then bin=/tmp/kpc-old/bin/kpc.js; v=""; else bin=/work/main/bin/kpc.js; v="--kube-proxy-version 1.34"; fi
      if [ $m = ipvs ]; then prev=prev-$m-$side.d; o="-o $prev"; rm -rf $prev .prev-$m-$side.d*; else prev=prev-$m-$side.out; o="-o $prev"; fi
      /usr/bin/time -f "$r $m $side compile %e s %M KB" node $bin compile -f c20k.json $A --proxy-mode $m $v $o 2>&1 | grep compile
      /usr/bin/time -f "$r $m $side delta %e s %M KB" node $bin compile -f c20k-b.json $A --proxy-mode $m $v --previous $prev -o delta-$m-$side.out 2>&1 | grep delta
    done
    cmp delta-$m-old.out delta-$m-new.out && echo "$r $m deltas identical ($(wc -c < delta-$m-new.out) bytes)"
  done
done
