#!/usr/bin/env bash
# kpc trace --rules against one read of the same file, two built checkouts alternating:
#   bash bench/trace-rules.sh OLD NEW IPTABLES_FILE NFTABLES_FILE [SITTINGS]
# (the files: kpc's compile of a generated cluster, e.g. node dist/bench/gen.js --services 20000
# --seed 1 --format json, in iptables and nftables mode). Per sitting and file: the read once
# (`node -e readFileSync`), then OLD and NEW on a packet to the first Service of KUBE-SERVICES
# ("first") and to an address no Service has ("miss"). Prints "label wall_s max_rss_KB".
set -u
OLD=$1 NEW=$2 IPT=$3 NFT=$4 N=${5:-3}
t() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | grep -v '^note' | tail -n1; }
for ((i = 1; i <= N; i++)); do
  for f in "$IPT" "$NFT"; do
    k=$(basename "$f")
    echo "read $k $(t node -e "require('fs').readFileSync(process.argv[1],'utf8')" "$f")"
    for d in "$OLD" "$NEW"; do
      echo "$d $k first $(cd "$d" && t node bin/kpc.js trace --rules "$f" --to 10.96.0.10:80 --from 10.0.3.4 -o json)"
      echo "$d $k miss $(cd "$d" && t node bin/kpc.js trace --rules "$f" --to 10.128.0.2:8080 --from 10.0.3.4 -o json)"
    done
  done
done
