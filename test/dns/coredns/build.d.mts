/** Build (or find in its cache) the CoreDNS of test/dns/coredns; `why` says why not. */
export function buildCoreDNS(): { path?: string; why?: string };
