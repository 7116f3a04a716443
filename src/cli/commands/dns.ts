/**
 * `kpc dns [zones]`: the records cluster DNS (CoreDNS's kubernetes plugin) serves for the
 * input, as RFC 1035 zone files; `kpc dns resolve NAME [TYPE]`: the answer a Pod gets, with
 * its resolver's search-list walk. Exit 0 (whatever the answer), 2 for bad input or usage.
 * src/dns/README.md is the reference.
 */

import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandSpec } from '../command-spec.js';
import { canonicalIP } from '../../net/ip.js';
import {
  buildDnsCluster,
  buildZones,
  DEFAULT_TTL,
  parseClusterDomain,
  parseDomain,
  renderResolution,
  renderZone,
  resolutionJSON,
  resolveFromPod,
  zoneFileName,
  type DnsCluster,
  type PodMode,
  type RRType,
} from '../../dns/index.js';
import { EXIT, isKpcError, usageError } from '../../errors.js';
import { explainWriteErrors, writeBundleDir, type Io } from '../io.js';
import type { CommonFlags } from '../pipeline.js';
import { readObjects } from '../read-objects.js';
import { reportNotes, reportWarnings } from '../report.js';

export interface DnsFlags extends CommonFlags {
  clusterDomain: string;
  ttl: number;
  serial: number;
  dnsService: string;
  dnsPodIp?: string[];
  output?: string;
}

export interface DnsResolveFlags extends DnsFlags {
  fromNamespace: string;
  ndots: number;
  search?: string[];
  pods: PodMode;
}

const OFFLINE_HELP = `
What cannot be known offline (kpc prints what it can and says so):
  - The DNS server's own address: CoreDNS names itself in NS records by the Services whose
    endpoints hold its pod address. kpc takes --dns-pod-ip, else the ready endpoints of
    --dns-service (default kube-system/kube-dns), else that Service's cluster IPs, else writes
    ns.dns.<zone> without an address. The SOA serial (CoreDNS: time of the last change) is --serial.
  - Pod names (a-b-c-d.<ns>.pod.<zone>): with "pods insecure" (kubeadm's Corefile) CoreDNS
    answers any dashed address without checking a Pod exists; no zone file can list them.
    kpc dns resolve answers them (--pods).
  - Wildcards: CoreDNS (1.9+) serves none, but it matches a "_" label as any port or protocol
    (_._tcp.<svc>...) and port labels without underscores (http.tcp.<svc>...); the zone files
    list the specification's names only.
  - Names outside the cluster zone, reverse names of addresses it does not know
    ("fallthrough in-addr.arpa ip6.arpa"), and ExternalName targets outside the zone go to the
    upstream resolver (forward . /etc/resolv.conf), as do the node's own search domains
    (--search): kpc marks those answers as forwarded.
  - Namespaces: CoreDNS answers NXDOMAIN below a namespace that does not exist; kpc takes the
    namespaces of the input's objects to be the ones that exist.

Zone files and CoreDNS disagree where a master file cannot say what the plugin computes (see
src/dns/README.md): empty non-terminals (_tcp.<svc>..., dns.<zone>, partial reverse names)
answer NODATA from a zone but NXDOMAIN from CoreDNS; an ExternalName CNAME is also returned
for SRV and TXT queries, which CoreDNS answers NODATA; CoreDNS answers an SOA query at any name.
`;

const ZONES_EXAMPLES = `
Examples:
  # Every record of the cluster, one zone after the other
  kubectl get svc,endpointslices -A -o yaml | kpc dns -f -

  # As zone files for a DNS server (DIR/cluster.local.zone, DIR/10.in-addr.arpa.zone, ...)
  kpc dns -f manifests/ -R -o zones/ --cluster-domain cluster.local --ttl 30
`;

const RESOLVE_EXAMPLES = `
Examples:
  # Why does "db" not resolve from namespace web?
  kpc dns resolve db --from-namespace web -f manifests/ -R

  # SRV records of a StatefulSet's headless Service, as a Pod in shop asks for them
  kpc dns resolve _peer._tcp.db SRV --from-namespace shop -f manifests/ -R

  # Reverse lookup of a cluster IP, as JSON
  kpc dns resolve 10.96.0.10 PTR -f manifests/ -R -o json
`;

function intArg(min: number, max: number, what: string): (text: string) => number {
  return (text) => {
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new InvalidArgumentError(`${what} is a whole number from ${min} to ${max}`);
    return Number(text);
  };
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** After the shared input options: what DNS needs beyond the objects. */
function addClusterOptions(cmd: Command): Command {
  cmd
    .option('--cluster-domain <domain>', "the cluster's DNS domain (kubelet --cluster-domain)", 'cluster.local')
    .addOption(new Option('--ttl <seconds>', "the kubernetes plugin's ttl (its default 5; kubeadm's Corefile and the Helm chart set 30)").argParser(intArg(0, 3600, '--ttl')).default(DEFAULT_TTL))
    .addOption(new Option('--serial <n>', 'the SOA serial to write (CoreDNS uses the Unix time of the last change)').argParser(intArg(0, 4294967295, '--serial')).default(1))
    .option('--dns-service <ns/name>', "the Service in front of CoreDNS's pods, for NS records", 'kube-system/kube-dns')
    .option('--dns-pod-ip <ip>', "CoreDNS's own pod address (repeatable), for NS records", collect);
  return cmd;
}

function loadCluster(flags: DnsFlags, io: Io, pods: PodMode): DnsCluster {
  if (flags.config !== undefined) throw usageError('kpc dns reads no KubeProxyConfiguration (--config)');
  let zone: string;
  try {
    zone = parseClusterDomain(flags.clusterDomain);
  } catch (e) {
    if (isKpcError(e, 'dns.name')) throw usageError(`--cluster-domain "${flags.clusterDomain}": ${e.message}`);
    throw e;
  }
  if (zone === 'in-addr.arpa.' || zone === 'ip6.arpa.' || zone.endsWith('.in-addr.arpa.') || zone.endsWith('.ip6.arpa.')) throw usageError(`--cluster-domain "${flags.clusterDomain}" is a reverse zone`);
  const m = /^([^/]+)\/([^/]+)$/.exec(flags.dnsService);
  if (!m) throw usageError(`--dns-service: "${flags.dnsService}" is not NAMESPACE/NAME`);
  for (const ip of flags.dnsPodIp ?? []) if (canonicalIP(ip) === undefined) throw usageError(`--dns-pod-ip: "${ip}" is not an IP address`);

  const { loaded, input } = readObjects(flags, io);
  const namespaces = new Set<string>();
  for (const { object } of loaded.objects) if (object.metadata.namespace !== '') namespaces.add(object.metadata.namespace);
  try {
    const cluster = buildDnsCluster(
      { services: input.services, slices: input.slices, namespaces },
      {
        zone,
        ttl: flags.ttl,
        serial: flags.serial,
        pods,
        dnsService: { namespace: m[1]!, name: m[2]! },
        ...(flags.dnsPodIp ? { dnsPodIPs: flags.dnsPodIp } : {}),
      },
    );
    reportWarnings(io, cluster.warnings);
    reportNotes(io, cluster.notes);
    return cluster;
  } catch (e) {
    if (isKpcError(e, 'dns.name')) throw usageError(`a record's name cannot be written (--cluster-domain ${flags.clusterDomain}): ${e.message}`);
    throw e;
  }
}

export function runDnsZones(flags: DnsFlags, io: Io): number {
  const cluster = loadCluster(flags, io, 'insecure');
  let zones;
  try {
    zones = buildZones(cluster);
  } catch (e) {
    if (isKpcError(e, 'dns.name')) throw usageError(`a record's name cannot be written (--cluster-domain ${flags.clusterDomain}): ${e.message}`);
    throw e;
  }
  const texts = zones.map((z) => ({ name: zoneFileName(z), content: renderZone(z, flags.ttl) }));
  if (flags.output !== undefined) {
    const dir = flags.output;
    explainWriteErrors(dir, () => writeBundleDir(dir, texts.map((t) => ({ ...t, mode: 0o644 })), { kind: 'zones' }));
    reportNotes(io, [`wrote ${texts.length} zone file${texts.length > 1 ? 's' : ''} to ${dir}: ${texts.map((t) => t.name).join(', ')}`]);
    return EXIT.ok;
  }
  io.stdout([texts.map((t) => t.content).join('\n')]);
  return EXIT.ok;
}

const TYPES: RRType[] = ['A', 'AAAA', 'SRV', 'CNAME', 'PTR', 'TXT', 'NS', 'SOA'];

export function runDnsResolve(name: string, type: string | undefined, flags: DnsResolveFlags, io: Io): number {
  const t = (type ?? 'A').toUpperCase() as RRType;
  if (!TYPES.includes(t)) throw usageError(`type "${type}" is not one of ${TYPES.join(', ')}`);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(flags.fromNamespace) || flags.fromNamespace.length > 63) throw usageError(`--from-namespace: "${flags.fromNamespace}" is not a namespace name`);
  const search: string[] = [];
  for (const s of flags.search ?? []) {
    try {
      search.push(parseDomain(s).slice(0, -1));
    } catch (e) {
      if (isKpcError(e, 'dns.name')) throw usageError(`--search "${s}": ${e.message}`);
      throw e;
    }
  }
  const cluster = loadCluster(flags, io, flags.pods);
  let resolution;
  try {
    resolution = resolveFromPod(cluster, name, t, { fromNamespace: flags.fromNamespace, ndots: flags.ndots, extraSearch: search });
  } catch (e) {
    if (isKpcError(e, 'dns.name')) throw usageError(`"${name}": ${e.message}`);
    throw e;
  }
  io.stdout([flags.output === 'json' ? `${JSON.stringify(resolutionJSON(resolution), null, 2)}\n` : renderResolution(resolution)]);
  return EXIT.ok;
}

const zonesCommand: CommandSpec<DnsFlags> = {
  name: 'zones',
  description: 'print the zone files (the default: kpc dns -f ... is kpc dns zones -f ...)',
  isDefault: true,
  options(cmd) {
    addClusterOptions(cmd);
    cmd.option('-o, --output <dir>', 'write one file per zone into DIR (DIR/cluster.local.zone, DIR/10.in-addr.arpa.zone, ...), replaced as a whole');
  },
  help: [ZONES_EXAMPLES + OFFLINE_HELP],
  run: runDnsZones,
};

interface DnsResolveArgs extends DnsResolveFlags {
  name: string;
  type?: string;
}

const resolveCommand: CommandSpec<DnsResolveArgs> = {
  name: 'resolve',
  description: "the answer a Pod gets for NAME: its resolver's search list (ndots:5) walked step by step, each name answered as CoreDNS answers it",
  arguments: [
    { name: '<name>', description: 'the name as an application asks for it (db, db.shop, _http._tcp.web, web.shop.svc.cluster.local.), or an IP address with type PTR', key: 'name' },
    { name: '[type]', description: `${TYPES.join(', ')} (default A)`, key: 'type' },
  ],
  options(cmd) {
    addClusterOptions(cmd);
    cmd
      .option('--from-namespace <ns>', "the Pod's namespace (its first search domain)", 'default')
      .addOption(new Option('--ndots <n>', 'the resolver option ndots (the kubelet writes 5)').argParser(intArg(0, 15, '--ndots')).default(5))
      .option('--search <domain>', "a search domain after the cluster's (the node's resolv.conf; repeatable)", collect)
      .addOption(new Option('--pods <mode>', 'the plugin\'s pods mode for a-b-c-d.<ns>.pod names (kubeadm: insecure)').choices(['insecure', 'disabled']).default('insecure'))
      .addOption(new Option('-o, --output <format>', 'text or json').choices(['text', 'json']).default('text'));
  },
  help: [RESOLVE_EXAMPLES + OFFLINE_HELP],
  run: (flags, io) => runDnsResolve(flags.name, flags.type, flags, io),
};

/** `kpc dns` (zones, the default) and `kpc dns resolve`. */
export const dnsCommand: CommandSpec<never> = {
  name: 'dns',
  description: "cluster DNS: the records CoreDNS's kubernetes plugin serves (zone files), and what a Pod's lookup gets (resolve)",
  subcommands: [zonesCommand, resolveCommand],
  options() {},
  help: [OFFLINE_HELP],
};
