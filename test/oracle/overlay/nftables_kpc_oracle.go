package nftables

// This file is ADDED to k8s.io/kubernetes/pkg/proxy/nftables by kpc's test oracle
// (test/oracle/build.sh, `go build -overlay`). It copies or changes no upstream logic: it
// lets the oracle put a recording wrapper around the proxier's knftables.Interface (which
// NewProxier makes itself with knftables.New), and call the package's own sync once.

import "sigs.k8s.io/knftables"

// KpcOracleWrapNFTables replaces proxier.nftables with wrap(proxier.nftables).
func (proxier *Proxier) KpcOracleWrapNFTables(wrap func(knftables.Interface) knftables.Interface) {
	proxier.nftables = wrap(proxier.nftables)
}

// KpcOracleSyncProxyRules runs one syncProxyRules, as the proxier's BoundedFrequencyRunner would.
func (proxier *Proxier) KpcOracleSyncProxyRules() error { return proxier.syncProxyRules() }
