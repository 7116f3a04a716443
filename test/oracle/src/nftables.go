package main

// --proxy-mode nftables: the release's real pkg/proxy/nftables proxier, with the real nft
// binary in the oracle's network namespace. Its knftables.Interface (made by NewProxier with
// knftables.New) is wrapped (overlay KpcOracleWrapNFTables): every transaction passed to Run is
// recorded and also applied to knftables' own Fake. Printed (--nft-output):
//   transaction  the text of the first full sync's transaction (tx.String(), what `nft -f`
//                reads); kube-proxy builds it visiting Services in Go map order, so the order
//                of per-Service lines varies from run to run
//   dump         the Fake's Dump() after that sync: the resulting table, sorted (stable)
// kpc has no nftables mode yet: nothing is compared; the runner does not use it.

import (
	"context"
	"fmt"
	"os"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/knftables"
)

type nftRecorder struct {
	knftables.Interface
	fake    *knftables.Fake
	txs     []string
	runErrs []error
	fakeErr error
}

func (r *nftRecorder) Run(ctx context.Context, tx *knftables.Transaction) error {
	r.txs = append(r.txs, tx.String())
	err := r.Interface.Run(ctx, tx)
	r.runErrs = append(r.runErrs, err)
	if err == nil {
		if ferr := r.fake.Run(ctx, tx); ferr != nil && r.fakeErr == nil {
			r.fakeErr = ferr
		}
	}
	return err
}

func runNFTables(env *proxierEnv, o *options, c *cluster, mirrored []*discoveryv1.EndpointSlice, facts *nodeFactsT) (int, error) {
	if o.nftOutput != "transaction" && o.nftOutput != "dump" {
		return exitBadInput, usagef("--nft-output: %q is not transaction or dump", o.nftOutput)
	}
	p, err := newNFTablesProxier(env)
	if err != nil {
		return exitInternal, fmt.Errorf("NewProxier: %w", err)
	}
	family := knftables.IPv4Family
	if o.ipFamily == "ipv6" {
		family = knftables.IPv6Family
	}
	rec := &nftRecorder{fake: knftables.NewFake(family, "kube-proxy")}
	p.KpcOracleWrapNFTables(func(real knftables.Interface) knftables.Interface {
		rec.Interface = real
		return rec
	})
	syncErr := feedAndSync(p, c, mirrored, facts, func() int { return len(rec.txs) })
	if len(rec.txs) == 0 {
		return exitInternal, fmt.Errorf("the proxier ran no nftables transaction (sync: %v)", syncErr)
	}
	text := rec.txs[0]
	if o.nftOutput == "dump" {
		if rec.fakeErr != nil {
			return exitInternal, fmt.Errorf("knftables.Fake refused the transaction: %v", rec.fakeErr)
		}
		text = rec.fake.Dump()
	}
	if err := writeOut(o.outDir, "", text); err != nil {
		return exitInternal, err
	}
	if rec.runErrs[0] != nil {
		fmt.Fprintf(os.Stderr, "oracle: the kernel refused kube-proxy's nftables transaction: %v\n", rec.runErrs[0])
		return exitKernel, nil
	}
	return exitOK, nil
}
