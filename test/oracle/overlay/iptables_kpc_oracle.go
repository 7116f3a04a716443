package iptables

// This file is ADDED to k8s.io/kubernetes/pkg/proxy/iptables by kpc's test oracle
// (test/oracle/build.sh, `go build -overlay`). It copies or changes no upstream logic: it
// only lets the oracle call the package's own sync once, synchronously, and stand in for a
// host without nfacct counters.

// KpcOracleSyncProxyRules runs one syncProxyRules, as the proxier's BoundedFrequencyRunner would.
func (proxier *Proxier) KpcOracleSyncProxyRules() error { return proxier.syncProxyRules() }

// KpcOracleDisableNFAcct makes the proxier behave as on a host where nfacct.New() failed
// (NewProxier then leaves proxier.nfacct nil and every nfAcctCounters entry false).
func (proxier *Proxier) KpcOracleDisableNFAcct() { proxier.nfacct = nil }
