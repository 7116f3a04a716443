/**
 * kube-proxy's configuration validation (pkg/proxy/apis/config/validation Validate), in its
 * order, on the internal configuration. Details are kube-proxy's text; paths are the fields as
 * written in the file (kube-proxy prints internal Go names such as
 * `KubeProxyConfiguration.KubeProxyIPTablesConfiguration.MasqueradeBit`, which cannot be located
 * in a YAML file).
 *
 * The feature gates are applied first, as kube-proxy's options Complete() applies them before
 * Validate: with the release's own gate table (src/releases), so a gate the release does not know
 * or has locked is refused in its words, and gates that change validation (KubeProxyIPVS) act.
 *
 * Not checked, because they need kube-proxy's binary rather than its configuration:
 * showHiddenMetricsForVersion (the release's own minor version) and logging options.
 *
 * kpc adds two rules of its own, because these values are written into its output: the IPVS
 * scheduler must be one the kernel has, and detect-local interface names must be interface names.
 */

import { fieldError, fieldWarning, type FieldError } from '../../../diagnostics.js';
import { parseCIDR } from '../../../net/ip.js';
import { invalid, notSupported } from '../field-errors.js';
import { asJSON } from '../go-format.js';
import { parsedIP } from '../validate/ips.js';
import { formatGoDuration } from './duration.js';
import { splitHostPort } from './host-port.js';
import type { At, InternalProxyConfig } from './internal.js';
import { goTrimSpace } from '../../../go/strings.js';
import { applyGates, behaviourOf, gatesOf, type AppliedGates, type KubeProxyRelease } from '../../../releases/index.js';
import { duplicate } from '../field-errors.js';

export const PROXY_MODES = ['iptables', 'ipvs', 'nftables'];
export const DETECT_LOCAL_MODES = ['ClusterCIDR', 'NodeCIDR', 'BridgeInterface', 'InterfaceNamePrefix', ''];
/** Schedulers of the Linux IPVS module (ip_vs_*.ko). */
export const IPVS_SCHEDULERS = ['dh', 'fo', 'lblc', 'lblcr', 'lc', 'mh', 'nq', 'ovf', 'rr', 'sed', 'sh', 'twos', 'wlc', 'wrr'];

const NON_NEGATIVE = 'must be greater than or equal to 0';

/** A metav1.Duration prints as its JSON form: the quoted Go duration string. */
const dur = (at: At<number>) => asJSON(formatGoDuration(at.value));

function masqueradeBit(at: At<number>): FieldError[] {
  return at.value < 0 || at.value > 31 ? [invalid(at.path, asJSON(at.value), 'must be within the range [0, 31]')] : [];
}

function nonNegativeDuration(at: At<number>): FieldError[] {
  return at.value < 0 ? [invalid(at.path, dur(at), NON_NEGATIVE)] : [];
}

function validateIPVS(c: InternalProxyConfig): FieldError[] {
  const errs = [...nonNegativeDuration(c.ipvs.tcpTimeout), ...nonNegativeDuration(c.ipvs.tcpFinTimeout), ...nonNegativeDuration(c.ipvs.udpTimeout)];
  c.ipvs.excludeCIDRs.value.forEach((cidr, i) => {
    if (!parseCIDR(cidr)) errs.push(invalid([...c.ipvs.excludeCIDRs.path, i], cidr, 'must be a valid CIDR'));
  });
  return errs;
}

function validateLinux(c: InternalProxyConfig): FieldError[] {
  const ct = c.linux.conntrack;
  const errs: FieldError[] = [];
  if (ct.maxPerCore.value < 0) errs.push(invalid(ct.maxPerCore.path, asJSON(ct.maxPerCore.value), NON_NEGATIVE));
  if (ct.min.value < 0) errs.push(invalid(ct.min.path, asJSON(ct.min.value), NON_NEGATIVE));
  errs.push(...nonNegativeDuration(ct.tcpEstablishedTimeout), ...nonNegativeDuration(ct.tcpCloseWaitTimeout));
  errs.push(...nonNegativeDuration(ct.udpTimeout), ...nonNegativeDuration(ct.udpStreamTimeout));
  const oom = c.linux.oomScoreAdj;
  if (oom.value < -1000 || oom.value > 1000) errs.push(invalid(oom.path, oom.value, 'must be within the range [-1000, 1000]'));
  return errs;
}

/** validateProxyModeLinux: from v1.37 ipvs is a mode only while the KubeProxyIPVS gate is on. */
function validateMode(c: InternalProxyConfig, gates: AppliedGates, release: KubeProxyRelease): FieldError[] {
  const mode = c.mode.value;
  const ipvsGated = gatesOf(release).has('KubeProxyIPVS') && !gates.enabled('KubeProxyIPVS');
  const valid = PROXY_MODES.filter((m) => m !== 'ipvs' || !ipvsGated);
  if (mode === '' || valid.includes(mode)) return [];
  return [invalid(c.mode.path, mode, `must be ${valid.join(', ')} or blank (blank means the best-available proxy [currently iptables])`)];
}


function validatePeriods(c: InternalProxyConfig): FieldError[] {
  const errs: FieldError[] = [];
  if (c.configSyncPeriod.value <= 0) errs.push(invalid(c.configSyncPeriod.path, dur(c.configSyncPeriod), 'must be greater than 0'));
  if (c.syncPeriod.value <= 0) errs.push(invalid(c.syncPeriod.path, dur(c.syncPeriod), 'must be greater than 0'));
  if (c.minSyncPeriod.value < 0) errs.push(invalid(c.minSyncPeriod.path, dur(c.minSyncPeriod), NON_NEGATIVE));
  if (c.minSyncPeriod.value > c.syncPeriod.value) {
    errs.push(invalid(c.syncPeriod.path, dur(c.minSyncPeriod), 'must be greater than or equal to KubeProxyConfiguration.MinSyncPeriod'));
  }
  return errs;
}

/** validateHostPort: `IP:port` with a parseable IP and a port in 1-65535. */
function validateHostPort(at: At<string>): FieldError[] {
  const hp = splitHostPort(at.value);
  if (!hp) return [invalid(at.path, at.value, 'must be IP:port')];
  const errs: FieldError[] = [];
  if (!parsedIP(hp.host)) errs.push(invalid(at.path, hp.host, 'must be a valid IP'));
  const p = /^[+-]?\d+$/.test(hp.port) ? Number(hp.port) : NaN;
  if (!(p >= 1 && p <= 65535)) errs.push(invalid(at.path, hp.port, 'must be a valid port'));
  return errs;
}

/** utilnet.ParsePortRange: "", "N", "A-B" or "A+N" within 0-65535, low <= high. */
export function isValidPortRange(value: string): boolean {
  const v = goTrimSpace(value);
  if (v === '') return true;
  const int = (s: string) => (/^[+-]?\d+$/.test(s) ? Number(s) : NaN);
  const hyphen = v.indexOf('-');
  const plus = v.indexOf('+');
  let low: number;
  let high: number;
  if (hyphen === -1 && plus === -1) low = high = int(v);
  else if (hyphen !== -1 && plus === -1) {
    low = int(v.slice(0, hyphen));
    high = int(v.slice(hyphen + 1));
  } else if (plus !== -1 && hyphen === -1) {
    low = int(v.slice(0, plus));
    high = low + int(v.slice(plus + 1));
  } else return false;
  if (Number.isNaN(low) || Number.isNaN(high)) return false;
  return low <= 65535 && high <= 65535 && high >= low;
}

/** validateKubeProxyNodePortAddress: up to v1.36 `primary` alone; v1.37 adds keywords among CIDRs. */
function validateNodePortAddresses(at: At<string[]>, release: KubeProxyRelease): FieldError[] {
  const keywords = behaviourOf(release).nodePortAddressKeywords;
  const errs: FieldError[] = [];
  if (keywords.length === 1) {
    for (const [i, addr] of at.value.entries()) {
      if (addr === 'primary') {
        if (i !== 0 || at.value.length !== 1) errs.push(invalid([...at.path, i], addr, "can't use both 'primary' and CIDRs"));
        break;
      }
      if (!parseCIDR(addr)) errs.push(invalid([...at.path, i], addr, 'must be a valid CIDR'));
    }
    return errs;
  }
  const seen = new Set<string>();
  for (const [i, addr] of at.value.entries()) {
    if (keywords.includes(addr)) {
      if (seen.has(addr)) errs.push(duplicate([...at.path, i], addr));
      seen.add(addr);
      continue;
    }
    if (!parseCIDR(addr)) errs.push(invalid([...at.path, i], addr, `must be a valid CIDR or one of the keywords ${keywords.map((k) => `'${k}'`).join(', ')}`));
  }
  return errs;
}

const DUAL_STACK_PAIR = 'must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]';

/** validateDualStackCIDRStrings; v1alpha1's comma-separated clusterCIDR cannot be indexed. */
function validateClusterCIDRs(at: At<string[]>): FieldError[] {
  const cidrs = at.value;
  const indexable = at.path[at.path.length - 1] !== 'clusterCIDR';
  if (cidrs.length > 2) return [invalid(at.path, asJSON(cidrs), DUAL_STACK_PAIR)];
  const errs: FieldError[] = [];
  cidrs.forEach((c, i) => {
    if (!parseCIDR(c)) errs.push(invalid(indexable ? [...at.path, i] : at.path, c, 'must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)'));
  });
  if (cidrs.length === 2) {
    const fams = cidrs.map((c) => parseCIDR(c)?.cidr.ip.family);
    if (!fams.includes(undefined) && fams[0] === fams[1]) errs.push(invalid(at.path, asJSON(cidrs), DUAL_STACK_PAIR));
  }
  return errs;
}

/**
 * kpc rule: an interface name kpc writes into `-i` arguments; one rule for the config and the
 * flags (--pod-bridge-interface, --pod-interface-name-prefix), so neither takes what the other refuses.
 */
export function interfaceNameProblem(value: string): string | undefined {
  if (value === '') return 'must not be empty';
  if (!/^[A-Za-z0-9_.@-]{1,15}$/.test(value) || value === '.' || value === '..') {
    return "must be a network interface name: 1-15 characters from A-Z, a-z, 0-9, '_', '.', '@' and '-' (kpc writes it into rules)";
  }
  return undefined;
}

function validateInterfaceName(at: At<string>): FieldError[] {
  const problem = interfaceNameProblem(at.value);
  return problem === undefined ? [] : [invalid(at.path, at.value, problem)];
}

function validateDetectLocal(c: InternalProxyConfig): FieldError[] {
  const mode = c.detectLocalMode;
  if (!DETECT_LOCAL_MODES.includes(mode.value)) return [notSupported(mode.path, mode.value, DETECT_LOCAL_MODES)];
  switch (mode.value) {
    case 'BridgeInterface':
      return validateInterfaceName(c.detectLocal.bridgeInterface);
    case 'InterfaceNamePrefix':
      return validateInterfaceName(c.detectLocal.interfaceNamePrefix);
    case 'ClusterCIDR':
    case '':
      // "" is what v1alpha1 leaves unset; kube-proxy reads it as ClusterCIDR.
      return c.detectLocal.clusterCIDRs.value.length > 0 ? validateClusterCIDRs(c.detectLocal.clusterCIDRs) : [];
  }
  return [];
}

/** kpc rule: the scheduler name goes into ipvsadm input. */
function validateScheduler(c: InternalProxyConfig): FieldError[] {
  const s = c.ipvs.scheduler;
  return s.value === '' || IPVS_SCHEDULERS.includes(s.value) ? [] : [notSupported(s.path, s.value, IPVS_SCHEDULERS)];
}

/** Feature gates as options Complete() sets them; their errors stop kube-proxy before Validate. */
function validateFeatureGates(c: InternalProxyConfig, release: KubeProxyRelease): { gates: AppliedGates; errors: FieldError[]; warnings: FieldError[] } {
  const requested = Object.fromEntries(Object.entries(c.featureGates).map(([k, v]) => [k, v.value]));
  const gates = applyGates(release, requested);
  const pathOf = (gate: string) => c.featureGates[gate]?.path ?? ['featureGates'];
  return {
    gates,
    errors: gates.errors.map((p) => fieldError(pathOf(p.gate), p.message)),
    warnings: gates.warnings.map((p) => fieldWarning(pathOf(p.gate), p.message)),
  };
}

export interface ConfigVerdict {
  errors: FieldError[];
  warnings: FieldError[];
}

export function validateProxyConfig(c: InternalProxyConfig, release: KubeProxyRelease): ConfigVerdict {
  const fg = validateFeatureGates(c, release);
  if (fg.errors.length > 0) return { errors: fg.errors, warnings: fg.warnings };
  const errs: FieldError[] = [];
  errs.push(...masqueradeBit(c.iptables.masqueradeBit));
  if (c.mode.value === 'ipvs') errs.push(...validateIPVS(c));
  if (c.mode.value === 'nftables') errs.push(...masqueradeBit(c.nftables.masqueradeBit));
  errs.push(...validateLinux(c));
  errs.push(...validateMode(c, fg.gates, release));
  if (c.burst.value < 0) errs.push(invalid(c.burst.path, c.burst.value, NON_NEGATIVE));
  errs.push(...validatePeriods(c));
  if (c.bindAddress && !parsedIP(c.bindAddress.value)) {
    errs.push(invalid(c.bindAddress.path, c.bindAddress.value, 'not a valid textual representation of an IP address'));
  }
  if (c.healthzBindAddress && c.healthzBindAddress.value !== '') errs.push(...validateHostPort(c.healthzBindAddress));
  if (c.metricsBindAddress) errs.push(...validateHostPort(c.metricsBindAddress));
  if (c.portRange && !isValidPortRange(c.portRange.value)) {
    errs.push(invalid(c.portRange.path, c.portRange.value, 'must be a valid port range (e.g. 300-2000)'));
  }
  errs.push(...validateNodePortAddresses(c.nodePortAddresses, release));
  errs.push(...validateDetectLocal(c));
  if (c.mode.value === 'ipvs') errs.push(...validateScheduler(c));
  return { errors: errs, warnings: fg.warnings };
}

