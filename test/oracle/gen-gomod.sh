#!/usr/bin/env bash
# Writes test/oracle/vX.Y/go.mod for one kube-proxy release: k8s.io/kubernetes at the release
# and one `replace` per staging module (k8s.io/kubernetes's go.mod requires them at v0.0.0,
# which the module proxy does not serve), each at the matching v0.Y.Z. Then `go mod tidy`.
# Run by hand when adding a release; build.sh uses the committed go.mod/go.sum.
#   test/oracle/gen-gomod.sh 1.34.4
set -euo pipefail
cd "$(dirname "$0")"
full="$1"                      # 1.34.4
minor="${full%.*}"             # 1.34
staging="v0.${full#1.}"        # v0.34.4
: "${KPC_ORACLE_CACHE:=/var/cache/kpc-oracle}"
export GOMODCACHE="$KPC_ORACLE_CACHE/gomod" GOCACHE="$KPC_ORACLE_CACHE/gocache" GOFLAGS=-mod=mod
modfile="$(go mod download -json "k8s.io/kubernetes@v$full" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')"
dir="v$minor"
mkdir -p "$dir"
mods=$(awk '/^\t?k8s.io\/[a-z-]+ v0\.0\.0$/ {print $1} /^require/ {next}' "$modfile" | sed 's/^\t//' | sort -u)
{
  echo "module kpc.test/oracle"
  echo
  echo "go $(awk '$1=="go" {print $2; exit}' "$modfile")"
  echo
  echo "require k8s.io/kubernetes v$full"
  echo
  echo "replace ("
  for m in $mods; do echo "	$m => $m $staging"; done
  echo ")"
} > "$dir/go.mod"
(cd "$dir" && go mod tidy)
