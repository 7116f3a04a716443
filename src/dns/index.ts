/** Cluster DNS: the records CoreDNS's kubernetes plugin serves, as zone files and per query. */

export { buildDnsCluster, DEFAULT_TTL, DNS_SCHEMA_VERSION, endpointHostname, type DnsCluster, type DnsInput, type DnsOptions, type PodMode } from './model.js';
export { serve, type Rcode, type Served } from './coredns.js';
export { buildZones, renderZone, srvWeight, zoneFileName, type Zone } from './zone.js';
export { podSearchList, questionName, renderResolution, resolutionJSON, resolveFromPod, type Resolution, type ResolveOptions } from './resolve.js';
export { dnsNameError, parseClusterDomain, parseDomain } from './names.js';
export { RR_TYPES, rrText, type RR, type RRType } from './rr.js';
