#!/usr/bin/env bash
# Whether two built checkouts trace the same through one rules file: stdout, stderr and exit code
# of `kpc trace --rules FILE ARGS` for each line of ARGS in PACKETS (default bench/trace-packets.txt):
#   bash bench/trace-compare.sh OLD NEW FILE [PACKETS]
set -u
OLD=$1 NEW=$2 FILE=$3 PACKETS=${4:-$(dirname "$0")/trace-packets.txt}
W=$(mktemp -d)
n=0 bad=0
while read -r args; do
  [[ -z $args || $args == \#* ]] && continue
  n=$((n + 1))
  for side in old new; do
    d=$OLD; [[ $side == new ]] && d=$NEW
    # shellcheck disable=SC2086
    (cd "$d" && node bin/kpc.js trace --rules "$FILE" $args >"$W/$side.out" 2>"$W/$side.err"; echo "rc $?" >>"$W/$side.out")
  done
  if ! cmp -s "$W/old.out" "$W/new.out" || ! cmp -s "$W/old.err" "$W/new.err"; then
    bad=$((bad + 1))
    echo "differs: $args"
  fi
done <"$PACKETS"
rm -rf "$W"
echo "$n packets, $bad differ"
((bad == 0))
