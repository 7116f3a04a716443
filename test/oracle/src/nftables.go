package main

import discoveryv1 "k8s.io/api/discovery/v1"

// --proxy-mode nftables: not built yet (phase 3 of issue 15). The oracle refuses it with a
// usage error instead of printing anything.

func runNFTables(env *proxierEnv, o *options, c *cluster, mirrored []*discoveryv1.EndpointSlice, facts *nodeFactsT) (int, error) {
	return exitBadInput, usagef("--proxy-mode nftables: not implemented in the oracle yet")
}
