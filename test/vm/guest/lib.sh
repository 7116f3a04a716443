# kpc VM guest library (bash). Sourced by every generated case.sh and by the case's `script`.
# Runs inside the case's "node" network namespace (PID 1 started it with `ip netns exec node`),
# so plain commands (ipvsadm, ipset, iptables, ip) act on the node. Other namespaces (pods,
# clients) are reached with `kpc_in NAME cmd...`.
#
# Environment (exported by case.sh): KPC_I (case index, 000...), KPC_DIR (/kpc/cases/$KPC_I),
# KPC_FILES ($KPC_DIR/files: the case's files, cwd of apply and script), KPC_OUT (outputs).
#
# Functions for scripts:
#   kpc_out NAME CMD...        run CMD (command or function), record stdout/stderr/exit code as
#                              output NAME; returns CMD's exit code. stdin is the caller's
#                              (kpc_out r ipset restore < ipset.rules works; /dev/null otherwise)
#   kpc_in NS CMD...           run CMD (a program) in network namespace NS ("node" = here)
#   kpc_dump [TAG]             record the standard read-backs (as NAME@TAG when TAG is given):
#                              ipvsadm-save, ipset-save, iptables-save, ip6tables-save, kube-ipvs0
#   kpc_probe NAME FROM PROTO HOST PORT [COUNT] [WAIT]
#                              connect COUNT times from namespace FROM to HOST:PORT (tcp|udp) and
#                              record output probe:NAME: one line per attempt, the answer (first
#                              line the server sent) or "!fail rc=N"; exit code = failed attempts
# Set-up functions (used by case.sh): kpc_sysctl, kpc_serve, kpc_serve_wait,
#   kpc_iptables_backend, kpc_step. The namespaces and links come from `ip -batch` files that
#   vm.ts writes (node.batch, ns-NAME.batch).

kpc_up() { local u _; read -r u _ </proc/uptime; echo "$u"; }

kpc__fname() { local n=${1//\//_}; echo "$KPC_OUT/$n"; }

kpc_out() {
  local name=$1; shift
  local f; f=$(kpc__fname "$name")
  "$@" >"$f.stdout" 2>"$f.stderr"
  local rc=$?
  echo "$rc" >"$f.rc"
  return "$rc"
}

kpc_in() {
  local ns=$1; shift
  if [[ $ns == node ]]; then "$@"; else nsenter --net="/run/netns/$ns" -- "$@"; fi
}

# kpc_step NAME SECS CMD...: run the program CMD in $KPC_FILES with a timeout, as output NAME.
kpc_step() {
  local name=$1 secs=$2; shift 2
  (cd "$KPC_FILES" && kpc_out "$name" timeout -s KILL "$secs" "$@")
}

kpc_dump() {
  local s=${1:+@$1}
  kpc_out "ipvsadm-save$s" ipvsadm -S -n # what ipvsadm-save -n runs, one exec less
  kpc_out "ipset-save$s" ipset save -sorted
  kpc_out "iptables-save$s" iptables-save
  kpc_out "ip6tables-save$s" ip6tables-save
  kpc_out "kube-ipvs0$s" ip -o addr show dev kube-ipvs0
  return 0
}

# kpc_sysctl KEY=VALUE...: set sysctls in the node namespace (missing keys are reported).
kpc_sysctl() {
  local kv k v rc=0
  for kv in "$@"; do
    k=${kv%%=*}; v=${kv#*=}
    if ! echo "$v" >"/proc/sys/${k//.//}" 2>/dev/null; then
      echo "kpc_sysctl: cannot set $k=$v" >&2; rc=1
    fi
  done
  return $rc
}

kpc_iptables_backend() { # nft | legacy: what iptables/ip6tables(-save/-restore) run
  local b=$1 f s
  for f in iptables ip6tables; do
    for s in "" -save -restore; do ln -sf "$f-$b$s" "/usr/sbin/$f$s"; done
  done
}

# kpc_sleep SECS: sleep without an exec (bash has no sleep builtin; exec costs ~60 ms in TCG).
kpc_sleep() {
  [[ -n ${KPC_SLEEP_FD:-} ]] || { mkfifo "/tmp/kpc-sleep.$$" && exec {KPC_SLEEP_FD}<>"/tmp/kpc-sleep.$$" && rm -f "/tmp/kpc-sleep.$$"; }
  read -r -t "$1" -u "$KPC_SLEEP_FD" _ || true
}

# kpc_serve NS PROTO PORT REPLY [peer]: start a server in namespace NS that answers every
# connection (tcp) or datagram (udp) with the line REPLY, or with "REPLY PEER-IP" (the client
# address as the server sees it: shows masquerading) when the 5th argument is "peer".
# tcp: busybox nc -ll -e (socat for "peer"); udp: socat (from the socat.cpio.gz segment).
# kpc_serve_wait then waits until all of them listen.
KPC_SERVERS=()
kpc_serve() {
  local ns=$1 proto=$2 port=$3 reply=$4 peer=${5:-}
  local answer="/bin/echo $reply"
  # /kpc/peer-echo.sh prints "REPLY $SOCAT_PEERADDR" without socat's [] and ::ffff: (plain words
  # only: socat parses ":", ",", brackets in addresses; EXEC: splits on spaces, no shell)
  [[ $peer == peer ]] && answer="/kpc/peer-echo.sh $reply"
  if [[ $proto == tcp && $peer != peer ]]; then
    nsenter --net="/run/netns/$ns" -- nc -ll -p "$port" -e /bin/echo "$reply" </dev/null >/dev/null 2>&1 &
  else
    command -v socat >/dev/null || { echo "kpc_serve: no socat in the guest (install socat on the host and rebuild)" >&2; return 1; }
    if [[ $proto == tcp ]]; then
      # -t 10: the client (nc </dev/null) half-closes at once; without it socat gives the
      # answer script only 0.5 s after that EOF, and a slow (TCG, busy host) fork+exec loses it
      nsenter --net="/run/netns/$ns" -- socat -t 10 TCP6-LISTEN:"$port",ipv6only=0,reuseaddr,fork EXEC:"$answer" </dev/null >/dev/null 2>&1 &
    else
      nsenter --net="/run/netns/$ns" -- socat -t 10 UDP6-RECVFROM:"$port",ipv6only=0,fork EXEC:"$answer" </dev/null >/dev/null 2>&1 &
    fi
  fi
  KPC_SERVERS+=("$! $proto $port $ns")
}

# kpc_serve_wait: wait (<= 5 s) until every server started by kpc_serve listens, reading
# /proc/PID/net/{tcp,udp}{,6} of the server (its namespace's sockets): tcp state 0A, udp 07.
kpc_serve_wait() {
  local s pid proto port ns hex want f n _sl loc _rem st ok rc=0
  for s in "${KPC_SERVERS[@]}"; do
    read -r pid proto port ns <<<"$s"
    printf -v hex '%04X' "$port"
    [[ $proto == tcp ]] && want=0A || want=07
    ok=0
    for ((n = 0; n < 100 && !ok; n++)); do
      for f in "/proc/$pid/net/$proto" "/proc/$pid/net/${proto}6"; do
        [[ -r $f ]] || continue
        while read -r _sl loc _rem st _; do
          [[ $loc == *":$hex" && $st == "$want" ]] && { ok=1; break; }
        done <"$f"
        ((ok)) && break
      done
      ((ok)) && break
      [[ -d /proc/$pid ]] || break
      kpc_sleep 0.05
    done
    if ((!ok)); then echo "kpc_serve: $proto/$port in $ns is not listening (server pid $pid)" >&2; rc=1; fi
  done
  KPC_SERVERS=()
  return $rc
}

# kpc__probe_loop PROTO HOST PORT COUNT WAIT (runs inside the source namespace)
kpc__probe_loop() {
  local proto=$1 host=$2 port=$3 count=$4 wait=$5 i r rc fails=0
  for ((i = 0; i < count; i++)); do
    if [[ $proto == tcp ]]; then
      r=$(nc -w "$wait" "$host" "$port" </dev/null)
      rc=$?
    else
      # bash's /dev/udp: a connected UDP socket; send one line, then ONE read() of the answer
      # datagram (dd: bash's read builtin reads 1 byte per read(), which truncates datagrams)
      r=$(exec 4<>"/dev/udp/$host/$port" && echo kpc-probe >&4 && timeout -s KILL "$wait" dd bs=65536 count=1 <&4 2>/dev/null)
      rc=$?
    fi
    r=${r%%$'\n'*}
    if ((rc == 0)) && [[ -n $r ]]; then
      echo "$r"
    elif ((rc == 0)); then
      echo "!fail rc=0 (no answer)"
    else
      echo "!fail rc=$rc"
      fails=$((fails + 1))
    fi
  done
  return "$fails"
}

kpc_probe() {
  local name=$1 from=$2 proto=$3 host=$4 port=$5 count=${6:-1} wait=${7:-4}
  local limit=$((count * (wait + 1) + 5))
  if [[ $from == node ]]; then
    kpc_out "probe:$name" timeout -s KILL "$limit" bash -c '. /kpc/lib.sh; kpc__probe_loop "$@"' _ "$proto" "$host" "$port" "$count" "$wait"
  else
    kpc_out "probe:$name" timeout -s KILL "$limit" nsenter --net="/run/netns/$from" -- \
      bash -c '. /kpc/lib.sh; kpc__probe_loop "$@"' _ "$proto" "$host" "$port" "$count" "$wait"
  fi
}
