/**
 * The typed rule model `kpc trace` walks: tables → chains → rules, each rule with its parsed
 * matches and target. It is read from iptables-restore input (kpc's own output) or from a
 * node's `iptables-save` (see read.ts); both forms give the same model for the same rules,
 * whatever order iptables-save prints the options in.
 */

/** An address or network as a rule matches it: `-s 10.0.0.0/8`, `-d 1.2.3.4/32`, `-d ::1/128`. */
export interface AddressMatchSpec {
  family: 'IPv4' | 'IPv6';
  /** The network address bytes (already masked). */
  bytes: Uint8Array;
  /** The netmask bytes (a prefix, or iptables-save's dotted form for a non-contiguous mask). */
  mask: Uint8Array;
  /** As written in the rule. */
  text: string;
}

export type PortRange = readonly [number, number];

export type Match =
  /** `-s` / `-d`; a comma list (iptables makes one rule per address) matches any of them. */
  | { kind: 'address'; which: 'source' | 'destination'; negated: boolean; addresses: AddressMatchSpec[] }
  /** `-p`: the lower-case protocol name (numbers are translated: 6 → tcp); `all` matches anything. */
  | { kind: 'protocol'; negated: boolean; protocol: string }
  /** `-i` / `-o`; a trailing `+` is a prefix match. */
  | { kind: 'interface'; which: 'in' | 'out'; negated: boolean; name: string }
  /** `-f`: a non-first fragment (never the first packet of a connection). */
  | { kind: 'fragment'; negated: boolean }
  /** `--sport`/`--dport` of tcp, udp, sctp, or `--sports`/`--dports`/`--ports` of multiport. */
  | { kind: 'port'; which: 'source' | 'destination' | 'either'; negated: boolean; ranges: PortRange[]; module: string }
  /** tcp `--syn` / `--tcp-flags MASK COMP`, as flag sets. */
  | { kind: 'tcp-flags'; negated: boolean; mask: string[]; comp: string[] }
  /** addrtype `--src-type` / `--dst-type`. */
  | { kind: 'addrtype'; which: 'source' | 'destination'; negated: boolean; types: string[] }
  /** conntrack `--ctstate` or state `--state`. */
  | { kind: 'ctstate'; negated: boolean; states: string[] }
  /** mark `--mark value[/mask]` (packet mark) or connmark `--mark` (connection mark). */
  | { kind: 'mark'; on: 'packet' | 'connection'; negated: boolean; value: number; mask: number }
  /** statistic `--mode random --probability P`. */
  | { kind: 'random'; negated: boolean; probability: number; text: string }
  /** recent: `--set` records the source, `--rcheck`/`--update` test for an earlier one (session affinity). */
  | { kind: 'recent'; negated: boolean; name: string; action: 'set' | 'rcheck' | 'update' | 'remove'; seconds?: number; reap: boolean }
  | { kind: 'comment'; text: string }
  /** nfacct `--nfacct-name`: counts, always matches. */
  | { kind: 'nfacct'; name: string }
  /** iprange `--src-range` / `--dst-range`. */
  | { kind: 'iprange'; which: 'source' | 'destination'; negated: boolean; from: AddressMatchSpec; to: AddressMatchSpec }
  /** A match that always matches a first packet and changes nothing (limit, pkttype unicast, ...). */
  | { kind: 'neutral'; module: string; text: string }
  /** A match kpc trace cannot evaluate offline (ipset, owner, socket, physdev, ...): treated as not matching. */
  | { kind: 'unsupported'; module: string; text: string };

export type Target =
  | { kind: 'chain'; chain: string; goto: boolean }
  | { kind: 'ACCEPT' }
  | { kind: 'DROP' }
  | { kind: 'RETURN' }
  | { kind: 'REJECT'; rejectWith?: string }
  /** DNAT `--to-destination ip[:port]`, `[ip6]:port`; a range uses its first address and port. */
  | { kind: 'DNAT'; to: string; ip?: string; port?: number }
  | { kind: 'SNAT'; to: string }
  | { kind: 'MASQUERADE'; options: string[] }
  /** MARK, normalised to `--set-xmark value/mask`: mark = (mark & ~mask) ^ value. */
  | { kind: 'MARK'; value: number; mask: number; text: string }
  /** CONNMARK `--set-xmark` / `--save-mark` / `--restore-mark` are not modelled beyond set-xmark. */
  | { kind: 'CONNMARK'; value?: number; mask?: number; text: string }
  /** Any other target (LOG, NFLOG, CT, ...): not modelled; treated as non-terminating. */
  | { kind: 'other'; name: string; options: string[] };

export interface Rule {
  table: string;
  chain: string;
  /** 1-based position in its chain (as `iptables -L --line-numbers` counts). */
  index: number;
  /** 1-based line in the text it was read from. */
  line: number;
  /** The rule as written, without the leading `-A CHAIN` (for display). */
  spec: string;
  matches: Match[];
  /** Undefined for a rule with no `-j` (kube-proxy's "other traffic ... will be dropped" rule). */
  target?: Target;
  /** The `-m comment` text, if any. */
  comment?: string;
  /** Not in the text: one of kube-proxy's jumps from a built-in chain, assumed (see builtin-jumps.ts). */
  implicit?: boolean;
}

export interface Chain {
  name: string;
  builtin: boolean;
  /** Built-in chains: ACCEPT or DROP. User chains: '-'. */
  policy: string;
  rules: Rule[];
  /** Line of its declaration (0 when created implicitly). */
  line: number;
}

export interface Table {
  name: string;
  /** In declaration order. */
  chains: Map<string, Chain>;
}

export interface RuleSet {
  /** In the order the text gives them. */
  tables: Map<string, Table>;
  /** Things worth saying about the text (not errors): chains created implicitly, `-X` of unknown chains. */
  warnings: string[];
}

