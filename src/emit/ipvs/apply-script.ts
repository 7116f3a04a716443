/**
 * `apply.sh`: a POSIX shell script that puts the bundle on a node (or into a network namespace)
 * the way kube-proxy's sync leaves it, and can be run again:
 *
 *   0. --standalone: create the dummy interface kube-ipvs0 and set kube-proxy's sysctls
 *      (ip_forward; arp_ignore/arp_announce with --ipvs-strict-arp); otherwise kube-ipvs0
 *      must exist.
 *   1. ipset restore < ipset.rules                  (creates all sets, replaces their entries)
 *   2. iptables-restore -w --noflush < iptables.rules  (ip6tables-restore for IPv6); with
 *      --standalone the built-in chain jumps are first deleted, so the file's `-I` lines do not
 *      pile up on a second run
 *   3. kube-ipvs0: `ip address replace A dev kube-ipvs0` per line of kube-ipvs0.addrs, then
 *      every other global address of the family on kube-ipvs0 is removed
 *   4. IPVS: `ipvsadm -S -n` gives the current table; an awk pass turns ipvs.rules into a delta
 *      (existing services `-A`→`-E`, existing real servers `-a`→`-e`, real servers no longer
 *      wanted `-d`, virtual services of this family no longer wanted `-D` unless inside an
 *      --ipvs-exclude-cidrs range) and feeds it to `ipvsadm -R`. --standalone then sets the
 *      net.ipv4.vs sysctls kube-proxy needs (the first ipvsadm call loaded ip_vs).
 *
 * With `inline` the four files are embedded as quoted here-documents (written to a temporary
 * directory) so the script alone is the whole output; otherwise it reads its sibling files.
 * Every embedded line is checked to be printable ASCII and not the here-document terminator;
 * every value placed in shell code is checked against a whitelist (safe-text.ts).
 *
 * Differences from kube-proxy, by necessity: a real server kube-proxy would quiesce (TCP with
 * live connections: weight 0, deleted later) is deleted at once; kube-proxy's net.ipv4.vs
 * conn_reuse_mode handling (kernel-version dependent) is not reproduced; fwmark services and
 * IPv4-embedded IPv6 addresses are left alone by the clean-up.
 */

import type { IPFamily } from '../../net/ip.js';
import { IPVS_BUILTIN_JUMPS, jumpArgs } from '../../lang/iptables/chains.js';
import { BUNDLE_FILES, type IpvsBundle } from './bundle.js';
import { safeCIDR, safeHeredocLine, unsafeOutput } from './safe-text.js';

export interface ApplyScriptOptions {
  /** Embed the four files (the script alone is the output); else read them next to the script. */
  inline: boolean;
  family: IPFamily;
  /** Create kube-ipvs0, set kube-proxy's sysctls, manage the built-in chain jumps. */
  standalone: boolean;
  /** --ipvs-strict-arp: with `standalone`, also arp_ignore=1 and arp_announce=2. */
  strictARP?: boolean;
  /** --ipvs-exclude-cidrs of this family: virtual services inside are never deleted. */
  excludeCIDRs?: readonly string[];
}

/** The here-document terminator of each part in an inline apply.sh (also how kpc reads one back). */
export const HEREDOC_TERMINATORS: Readonly<Record<keyof IpvsBundle, string>> = {
  ipvsRules: 'KPC_END_OF_IPVS_RULES',
  ipsetRules: 'KPC_END_OF_IPSET_RULES',
  iptablesRules: 'KPC_END_OF_IPTABLES_RULES',
  addresses: 'KPC_END_OF_KUBE_IPVS0_ADDRS',
};

const PARTS: readonly (keyof IpvsBundle)[] = ['ipvsRules', 'ipsetRules', 'iptablesRules', 'addresses'];

/** What safeHeredocLine lets through, over lines. */
const SAFE_HEREDOC_TEXT = /^[\x20-\x7e\n]*$/;

/** `cat > "$dir/FILE" <<'TERMINATOR'` … : one part of the bundle embedded in a script. */
export function heredoc(part: keyof IpvsBundle, content: string): string {
  const terminator = HEREDOC_TERMINATORS[part];
  if (content !== '' && !content.endsWith('\n')) throw unsafeOutput(`${BUNDLE_FILES[part]} (no final newline)`, content.slice(-40));
  // One scan of the whole text (a delta embeds the full address list at every watch step); a
  // text that fails it is gone through line by line for the message naming the line.
  if (!SAFE_HEREDOC_TEXT.test(content) || content.startsWith(`${terminator}\n`) || content.includes(`\n${terminator}\n`)) {
    for (const line of content === '' ? [] : content.slice(0, -1).split('\n')) {
      safeHeredocLine(line);
      if (line === terminator) throw unsafeOutput('line equal to the here-document terminator', line);
    }
  }
  return `cat > "$dir/${BUNDLE_FILES[part]}" <<'${terminator}'\n${content}${terminator}\n`;
}

/**
 * The awk program of step 4 (no single quote inside: it is embedded in '...'). Input: the
 * current table (`ipvsadm -S -n`) then ipvs.rules; variables fam (4|6) and excl (CIDRs).
 * The first file is told apart by name, not by FNR == NR, which breaks when it is empty.
 */
const IPVS_DELTA_AWK = String.raw`
function pad4(g) { while (length(g) < 4) g = "0" g; return g }
function expand6(a,    d, left, right, nl, nr, L, R, i, out) {
  d = index(a, "::")
  if (d) { left = substr(a, 1, d - 1); right = substr(a, d + 2) } else { left = a; right = "" }
  nl = (left == "") ? 0 : split(left, L, ":")
  nr = (right == "") ? 0 : split(right, R, ":")
  out = ""
  for (i = 1; i <= nl; i++) out = out pad4(L[i])
  for (i = 1; i <= 8 - nl - nr; i++) out = out "0000"
  for (i = 1; i <= nr; i++) out = out pad4(R[i])
  return tolower(out)
}
function hexval(c) { return index("0123456789abcdef", c) - 1 }
function ip4num(a,    p) { split(a, p, "."); return ((p[1] * 256 + p[2]) * 256 + p[3]) * 256 + p[4] }
function inside(a, cidr,    c, n, A, N, full, r, m) {
  split(cidr, c, "/"); n = c[2] + 0
  if (fam == 4) { m = 2 ^ (32 - n); return int(ip4num(a) / m) == int(ip4num(c[1]) / m) }
  A = expand6(a); N = expand6(c[1]); full = int(n / 4)
  if (substr(A, 1, full) != substr(N, 1, full)) return 0
  r = n % 4; if (r == 0) return 1
  m = 2 ^ (4 - r)
  return int(hexval(substr(A, full + 1, 1)) / m) == int(hexval(substr(N, full + 1, 1)) / m)
}
function address(svc,    a) {
  a = svc; sub(/^[^ ]+ /, "", a); sub(/:[0-9]+$/, "", a); gsub(/[][]/, "", a); return a
}
function ours(svc,    a, i, n, E) {
  if (svc ~ /^-f /) return 0
  a = address(svc)
  if (a ~ /\./ && fam == 6) return 0
  if (a !~ /\./ && fam == 4) return 0
  if (a ~ /\./ && a ~ /:/) return 0
  n = split(excl, E, " ")
  for (i = 1; i <= n; i++) if (inside(a, E[i])) return 0
  return 1
}
FILENAME == ARGV[1] {
  if ($1 == "-A") cur_svc[$2 " " $3] = 1
  else if ($1 == "-a") cur_dst[$2 " " $3 " " $5] = 1
  next
}
$1 == "-A" { k = $2 " " $3; want_svc[k] = 1; if (k in cur_svc) $1 = "-E"; print; next }
$1 == "-a" { k = $2 " " $3 " " $5; want_dst[k] = 1; if (k in cur_dst) $1 = "-e"; print; next }
{ print }
END {
  for (k in cur_dst) {
    split(k, f, " ")
    if (((f[1] " " f[2]) in want_svc) && !(k in want_dst)) print "-d " f[1] " " f[2] " -r " f[3]
  }
  for (k in cur_svc) if (!(k in want_svc) && ours(k)) print "-D " k
}
`;

/** The sysctls kube-proxy's NewProxier ensures (conn_reuse_mode left out: kernel dependent). */
function sysctlLines(strictARP: boolean): { early: string[]; ipvs: string[] } {
  const early = ['sysctl -q -w net.ipv4.ip_forward=1'];
  if (strictARP) early.push('sysctl -q -w net.ipv4.conf.all.arp_ignore=1', 'sysctl -q -w net.ipv4.conf.all.arp_announce=2');
  const ipvs = ['sysctl -q -w net.ipv4.vs.conntrack=1', 'sysctl -q -w net.ipv4.vs.expire_nodest_conn=1', 'sysctl -q -w net.ipv4.vs.expire_quiescent_template=1'];
  return { early, ipvs };
}

/**
 * How a script finds its four parts (`$dir`): written from inline heredocs into its temporary
 * directory, or the files beside the script, checked to be there.
 */
export function partsSection(contents: Pick<IpvsBundle, keyof IpvsBundle>, inline: boolean): string[] {
  if (inline) return ['dir=$work\n', ...PARTS.map((part) => heredoc(part, contents[part]))];
  return [
    `dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
for f in ${PARTS.map((p) => BUNDLE_FILES[p]).join(' ')}; do
  [ -f "$dir/$f" ] || { echo "apply.sh: $dir/$f is missing" >&2; exit 1; }
done
`,
  ];
}

export function renderApplyScript(bundle: IpvsBundle, options: ApplyScriptOptions): string {
  const { family, standalone } = options;
  const v = family === 'IPv4' ? '4' : '6';
  const iptables = family === 'IPv4' ? 'iptables' : 'ip6tables';
  const excl = (options.excludeCIDRs ?? []).map((c) => safeCIDR(c, family)).join(' ');
  const sysctls = sysctlLines(options.strictARP ?? false);
  const out: string[] = [];

  out.push(`#!/bin/sh
# Generated by kpc: kube-proxy IPVS mode (${family}) state for one node. Run as root (or in a
# network namespace: ip netns exec NS sh apply.sh). Applies ipset.rules, iptables.rules,
# kube-ipvs0.addrs and ipvs.rules in this order; safe to run again.
set -eu
export LC_ALL=C
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
`);
  out.push(...partsSection(bundle, options.inline));

  out.push('\n# 0. kube-ipvs0, the dummy interface the service addresses are bound to\n');
  if (standalone) {
    out.push('ip link show dev kube-ipvs0 >/dev/null 2>&1 || ip link add kube-ipvs0 type dummy\n');
    out.push(sysctls.early.join('\n') + '\n');
  } else {
    out.push('ip link show dev kube-ipvs0 >/dev/null 2>&1 || { echo "apply.sh: no kube-ipvs0 interface (kube-proxy creates it; kpc --standalone adds it)" >&2; exit 1; }\n');
  }

  out.push('\n# 1. ipsets\nipset restore < "$dir/ipset.rules"\n');

  out.push('\n# 2. iptables\n');
  if (standalone) {
    for (const j of IPVS_BUILTIN_JUMPS) {
      out.push(`while ${iptables} -w -t ${j.table} -D ${j.from} ${jumpArgs(j)} 2>/dev/null; do :; done\n`);
    }
  }
  out.push(`${iptables}-restore -w --noflush < "$dir/iptables.rules"\n`);

  out.push(`
# 3. addresses on kube-ipvs0
if [ -s "$dir/kube-ipvs0.addrs" ]; then
  sed 's/^/address replace /; s/$/ dev kube-ipvs0/' "$dir/kube-ipvs0.addrs" | ip -batch -
fi
ip -o -${v} address show dev kube-ipvs0 scope global | while read -r _ _ _ addr _; do
  grep -qxF -- "$addr" "$dir/kube-ipvs0.addrs" || ip address del "$addr" dev kube-ipvs0
done
`);

  out.push(`
# 4. IPVS: the current table, turned into a delta to the wanted one
ipvsadm -S -n > "$work/current.rules"
`);
  if (standalone) out.push(sysctls.ipvs.join('\n') + '\n');
  out.push(`awk -v fam=${v} -v excl='${excl}' '${IPVS_DELTA_AWK}' "$work/current.rules" "$dir/ipvs.rules" > "$work/delta.rules"
ipvsadm -R < "$work/delta.rules"
`);
  return out.join('');
}
