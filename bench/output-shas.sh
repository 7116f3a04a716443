#!/usr/bin/env bash
# The sha256 of 19 kpc outputs at 20,000 Services, to show an optimisation changes no byte:
#   bash bench/output-shas.sh KPCDIR LABEL [WORK]     # then diff WORK/A.sha WORK/B.sha
# KPCDIR is a built checkout (npm run build); WORK (default /tmp/kpc-shas) keeps the inputs:
# the generated cluster (JSON and YAML), the same with one endpoint of ns-0/svc-0 moved, and
# that one's outputs as the "previous" state, made once by the first KPCDIR given, so that
# every checkout compared reads the same previous files.
set -u
K="node $1/bin/kpc.js"; L=$2; W=${3:-/tmp/kpc-shas}; O=$W/out-$L
F="--kube-proxy-version 1.34 --hostname-override node-0 --cluster-cidr 10.244.0.0/16"
I=$W/c20k.json; P=$W/prev-20k
mkdir -p "$W"
if [[ ! -s $I ]]; then
  node "$1/dist/bench/gen.js" --services 20000 --seed 1 --format json > "$I"
  node "$1/dist/bench/gen.js" --services 20000 --seed 1 --format yaml > "$W/c20k.yaml"
  node -e 'const fs=require("fs");const s=fs.readFileSync(process.argv[1],"utf8");const i=s.indexOf("\"10.128.0.2\"");fs.writeFileSync(process.argv[2],s.slice(0,i)+"\"10.128.250.250\""+s.slice(i+12))' "$I" "$W/c20k-changed.json"
fi
if [[ ! -d $P ]]; then
  mkdir -p "$P.tmp"
  $K compile -f "$W/c20k-changed.json" $F -o "$P.tmp/ipt.txt" 2>/dev/null
  $K compile -f "$W/c20k-changed.json" $F --proxy-mode nftables -o "$P.tmp/nft.txt" 2>/dev/null
  $K compile -f "$W/c20k-changed.json" $F --proxy-mode ipvs -o "$P.tmp/ipvs" 2>/dev/null
  mv "$P.tmp" "$P"
fi
rm -rf "$O"; mkdir -p "$O"
run() { local name=$1; shift; "$@" > "$O/$name" 2>/dev/null; echo "$name rc=$?"; }
run ipt.txt       $K compile -f $I $F
run ipt-yaml.txt  $K compile -f $W/c20k.yaml $F
run ipvs.sh       $K compile -f $I $F --proxy-mode ipvs
run nft.txt       $K compile -f $I $F --proxy-mode nftables
run nft137.txt    $K compile -f $I --kube-proxy-version 1.37 --hostname-override node-0 --cluster-cidr 10.244.0.0/16 --proxy-mode nftables
run d-ipt.txt       $K compile -f $I $F --previous $P/ipt.txt
run d-ipt-full.txt  $K compile -f $I $F --previous $P/ipt.txt --full
run d-nft.txt       $K compile -f $I $F --proxy-mode nftables --previous $P/nft.txt
run d-nft-full.txt  $K compile -f $I $F --proxy-mode nftables --previous $P/nft.txt --full
run d-ipvs.sh       $K compile -f $I $F --proxy-mode ipvs --previous $P/ipvs
run diff-ipt.txt    $K diff -f $I $F --previous $P/ipt.txt
run diff-ipt.json   $K diff -f $I $F --previous $P/ipt.txt -o json
run diff-nft.txt    $K diff -f $I $F --proxy-mode nftables --previous $P/nft.txt
run diff-ipvs.txt   $K diff -f $I $F --proxy-mode ipvs --previous $P/ipvs
run check.txt       $K check -f $I $F --golden $P/ipt.txt
run trace.json      $K trace -f $I $F --to 10.96.0.10:80 --from 10.0.3.4 -o json
run explain.txt     $K explain -f $I $F ns-0/svc-0
run trace-nft-rules.json $K trace --rules $P/nft.txt --to 10.96.0.10:80 --from 10.0.3.4 -o json
run trace-ipt-rules.json $K trace --rules $P/ipt.txt --to 10.96.0.10:80 --from 10.0.3.4 -o json
(cd "$O" && sha256sum -- *) > "$W/$L.sha"
echo "wrote $W/$L.sha"
