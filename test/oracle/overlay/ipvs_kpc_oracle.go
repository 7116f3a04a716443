package ipvs

// This file is ADDED to k8s.io/kubernetes/pkg/proxy/ipvs by kpc's test oracle
// (test/oracle/build.sh, `go build -overlay`). It copies or changes no upstream logic: it
// only lets the oracle call the package's own sync once, synchronously.

// KpcOracleSyncProxyRules runs one syncProxyRules, as the proxier's BoundedFrequencyRunner would.
func (proxier *Proxier) KpcOracleSyncProxyRules() error { return proxier.syncProxyRules() }
