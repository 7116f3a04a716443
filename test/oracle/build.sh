#!/usr/bin/env bash
# Builds kube-proxy's own code into the test oracle, one binary per release:
#   test/oracle/build.sh [1.34 1.35 1.36 1.37]     (default: every vX.Y/ folder)
# Binaries: $KPC_ORACLE_BIN/kpc-oracle-vX.Y ($KPC_ORACLE_CACHE/bin; KPC_ORACLE_CACHE defaults to
# /var/cache/kpc-oracle). Go's module and build caches live there too (gomod/, gocache/), so a
# second run downloads and compiles nothing. The Go sources are shared (src/, symlinked into
# each vX.Y/); vX.Y/compat.go holds each release's constructor calls; overlay/ holds the two
# files ADDED to the upstream proxier packages with `go build -overlay` (they expose one
# synchronous sync and a no-nfacct switch; no upstream code is copied or changed).
# Every release builds with this machine's Go (1.26.8; go.mod says at most go 1.26.0).
# KPC_ORACLE_BIN (default $KPC_ORACLE_CACHE/bin) puts the binaries, and this build's alternate
# go.mod and overlay files (in its .work/), elsewhere: two checkouts with different oracle
# sources then share the module and build caches without overwriting each other's binaries.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${KPC_ORACLE_CACHE:=/var/cache/kpc-oracle}"
: "${KPC_ORACLE_BIN:=$KPC_ORACLE_CACHE/bin}"
export GOMODCACHE="$KPC_ORACLE_CACHE/gomod" GOCACHE="$KPC_ORACLE_CACHE/gocache"
export GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local
if [[ "$KPC_ORACLE_BIN" == "$KPC_ORACLE_CACHE/bin" ]]; then work="$KPC_ORACLE_CACHE"; else work="$KPC_ORACLE_BIN/.work"; fi
mkdir -p "$KPC_ORACLE_BIN" "$work/mod" "$GOMODCACHE" "$GOCACHE"
if ! command -v go >/dev/null; then echo "build.sh: no go on PATH" >&2; exit 127; fi

versions=("$@")
if ((${#versions[@]} == 0)); then
  for d in "$here"/v*/; do d="${d%/}"; versions+=("${d##*/v}"); done
fi
for v in "${versions[@]}"; do
  v="${v#v}"
  dir="$here/v$v"
  [[ -f "$dir/go.mod" ]] || { echo "build.sh: no $dir/go.mod" >&2; exit 2; }
  t0=$(date +%s.%N)
  cd "$dir"
  out="$KPC_ORACLE_BIN/kpc-oracle-v$v"
  # Up to date when the inputs (sources through the symlinks, go.mod/go.sum, overlay, Go
  # version) hash as they did for the binary there: then nothing is built.
  stamp="$( { go version; cat go.mod go.sum ./*.go "$here"/overlay/*.go; } | sha256sum | cut -d' ' -f1)"
  if [[ -x "$out" && -f "$out.stamp" && "$(cat "$out.stamp")" == "$stamp" ]]; then
    echo "up to date: $out ($("$out" version))"
    continue
  fi
  kver="$(awk '$1=="k8s.io/kubernetes" {print $2}' go.mod)"
  go mod download "k8s.io/kubernetes@$kver"
  kdir="$(go mod download -json "k8s.io/kubernetes@$kver" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')"
  # `go build -overlay` may not replace files under GOMODCACHE, so the build uses a
  # hard-linked copy of the unmodified module (outside GOMODCACHE) through an alternate
  # go.mod (-modfile) that adds `replace k8s.io/kubernetes => COPY`; the overlay then ADDS the
  # two files to that copy's packages. The committed go.mod/go.sum stay as they are.
  copy="$KPC_ORACLE_CACHE/src/kubernetes@$kver"
  if [[ ! -f "$copy/.complete" ]]; then
    rm -rf "$copy"; mkdir -p "$KPC_ORACLE_CACHE/src"
    cp -al "$kdir" "$copy.tmp" && chmod u+w "$copy.tmp" && touch "$copy.tmp/.complete" && mv "$copy.tmp" "$copy"
  fi
  modfile="$work/mod/v$v.mod"
  { cat go.mod; echo; echo "replace k8s.io/kubernetes => $copy"; } > "$modfile.new"
  cmp -s "$modfile.new" "$modfile" && rm "$modfile.new" || mv "$modfile.new" "$modfile"
  cmp -s go.sum "${modfile%.mod}.sum" || cp go.sum "${modfile%.mod}.sum"
  overlay="$work/overlay-v$v.json"
  cat > "$overlay" <<JSON
{"Replace": {
  "$copy/pkg/proxy/iptables/kpc_oracle.go": "$here/overlay/iptables_kpc_oracle.go",
  "$copy/pkg/proxy/ipvs/kpc_oracle.go": "$here/overlay/ipvs_kpc_oracle.go",
  "$copy/pkg/proxy/nftables/kpc_oracle.go": "$here/overlay/nftables_kpc_oracle.go"
}}
JSON
  go build -modfile "$modfile" -overlay "$overlay" -trimpath -o "$out.tmp" .
  mv "$out.tmp" "$out"
  echo "$stamp" > "$out.stamp"
  t1=$(date +%s.%N)
  printf 'built %s (%s) in %.1f s\n' "$out" "$("$out" version)" "$(echo "$t1 - $t0" | bc)"
done
