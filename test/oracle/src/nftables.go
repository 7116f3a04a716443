package main

// --proxy-mode nftables: the release's real pkg/proxy/nftables proxier, with the real nft
// binary (knftables.New, made by NewProxier itself) in the oracle's network namespace, so the
// kernel holds what kube-proxy programmed. The proxier's knftables.Interface is wrapped
// (overlay KpcOracleWrapNFTables): every transaction passed to Run is recorded (its text
// before Run, as knftables' exec backend writes it to `nft -f -`), sent to the kernel, and
// also applied to knftables' own Fake (for its Dump()).
//
// ServiceCIDRs: the union of the input's ServiceCIDR objects' spec.cidrs and kpc's
// --service-cluster-ip-range (the API server's flag, which creates the default ServiceCIDR) is
// handed to OnServiceCIDRsChanged before the first sync, as kube-proxy's ServiceCIDR informer
// (pkg/proxy/config ServiceCIDRConfig) does once it has synced; sorted, where the informer
// passes sets.UnsortedList (the proxier joins them into `ip daddr { … } drop`, a set).
//
// Printed (--nft-output, without -o):
//
//	listing      (the runner's) `nft list table ip|ip6 kube-proxy` as read back from the kernel
//	             after the first full sync: nft's own text; objects in creation order and set
//	             elements in the kernel's order, so the runner normalises it (runner/nft.ts)
//	transaction  the text of the first full sync's transaction (tx.String(), what `nft -f`
//	             reads); kube-proxy builds it visiting Services in Go map order, so the order
//	             of per-Service lines varies from run to run
//	dump         the Fake's Dump() after that sync: the resulting table in knftables' form,
//	             sorted (stable), comparable with kube-proxy's unit-test expectations
//
// With -o DIR all three are written: DIR/kernel.listing, DIR/transaction.nft, DIR/expected.dump.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

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

// nftListTable: `nft list table FAMILY kube-proxy` in this process's network namespace.
func nftListTable(family string) (string, error) {
	cmd := exec.Command("nft", "list", "table", family, "kube-proxy")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("nft list table %s kube-proxy: %v: %s", family, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// serviceCIDRsFor: the CIDRs kube-proxy's ServiceCIDR informer would pass (all families; the
// proxier keeps its own).
func serviceCIDRsFor(o *options, c *cluster) []string {
	set := map[string]bool{}
	for _, s := range o.serviceClusterIPRange {
		if s = strings.TrimSpace(s); s != "" {
			set[s] = true
		}
	}
	for _, sc := range c.serviceCIDRs {
		for _, s := range sc.Spec.CIDRs {
			set[s] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func runNFTables(env *proxierEnv, o *options, c *cluster, mirrored []*discoveryv1.EndpointSlice, facts *nodeFactsT) (int, error) {
	if o.nftOutput != "transaction" && o.nftOutput != "dump" && o.nftOutput != "listing" {
		return exitBadInput, usagef("--nft-output: %q is not listing, transaction or dump", o.nftOutput)
	}
	p, err := newNFTablesProxier(env)
	if err != nil {
		return exitInternal, fmt.Errorf("NewProxier: %w", err)
	}
	family, nftFamily := knftables.IPv4Family, "ip"
	if o.ipFamily == "ipv6" {
		family, nftFamily = knftables.IPv6Family, "ip6"
	}
	rec := &nftRecorder{fake: knftables.NewFake(family, "kube-proxy")}
	p.KpcOracleWrapNFTables(func(real knftables.Interface) knftables.Interface {
		rec.Interface = real
		return rec
	})
	if cidrs := serviceCIDRsFor(o, c); len(cidrs) > 0 {
		p.OnServiceCIDRsChanged(cidrs)
	}
	syncErr := feedAndSync(p, c, mirrored, facts, func() int { return len(rec.txs) })
	if len(rec.txs) == 0 {
		return exitInternal, fmt.Errorf("the proxier ran no nftables transaction (sync: %v)", syncErr)
	}
	if os.Getenv("KPC_ORACLE_DEBUG") != "" {
		for i, t := range rec.txs {
			fmt.Fprintf(os.Stderr, "--- nft transaction %d (err %v)\n%s", i, rec.runErrs[i], t)
		}
	}
	// The first full sync is the first transaction (kube-proxy runs a separate `delete chain`
	// transaction first only for stale chains, which a first sync has none of).
	kernelErr := rec.runErrs[0]
	listing := ""
	if kernelErr == nil {
		if listing, err = nftListTable(nftFamily); err != nil {
			return exitInternal, err
		}
	}
	dump := ""
	if rec.fakeErr == nil {
		dump = rec.fake.Dump()
	}
	if o.outDir != "" {
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return exitInternal, err
		}
		files := map[string]string{"transaction.nft": rec.txs[0], "kernel.listing": listing}
		if rec.fakeErr == nil {
			files["expected.dump"] = dump
		}
		for name, text := range files {
			if err := writeOut(o.outDir, name, text); err != nil {
				return exitInternal, err
			}
		}
	} else {
		var text string
		switch o.nftOutput {
		case "transaction":
			text = rec.txs[0]
		case "dump":
			if rec.fakeErr != nil {
				return exitInternal, fmt.Errorf("knftables.Fake refused the transaction: %v", rec.fakeErr)
			}
			text = dump
		case "listing":
			text = listing
		}
		if err := writeOut("", "", text); err != nil {
			return exitInternal, err
		}
	}
	if rec.fakeErr != nil {
		fmt.Fprintf(os.Stderr, "oracle: note: knftables.Fake refused the transaction the kernel took: %v\n", rec.fakeErr)
	}
	if kernelErr != nil {
		fmt.Fprintf(os.Stderr, "oracle: the kernel refused kube-proxy's nftables transaction: %v\n", kernelErr)
		return exitKernel, nil
	}
	if syncErr != nil {
		fmt.Fprintf(os.Stderr, "oracle: sync: %v\n", syncErr)
	}
	return exitOK, nil
}

// runNFTLoad: `kpc-oracle nft-load [--family ip|ip6] FILE`: in a new network namespace,
// `nft -f FILE`, then print `nft list table FAMILY kube-proxy` — the same read-back the
// compile command uses, for a text made elsewhere (kpc's output), so both sides of a
// comparison are read from the kernel by the same code. Exit 4 when nft refuses the file
// (its message on stderr) or the file makes any table but FAMILY kube-proxy, 0 otherwise.
func runNFTLoad(args []string) (int, error) {
	family := "ip"
	var file string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--family" && i+1 < len(args):
			family = args[i+1]
			i++
		case strings.HasPrefix(a, "--family="):
			family = strings.TrimPrefix(a, "--family=")
		case !strings.HasPrefix(a, "-") && file == "":
			file = a
		default:
			return exitBadInput, usagef("nft-load [--family ip|ip6] FILE: unexpected %q", a)
		}
	}
	if file == "" || (family != "ip" && family != "ip6") {
		return exitBadInput, usagef("nft-load [--family ip|ip6] FILE")
	}
	if os.Getenv(netnsEnv) != "1" {
		return reexecInNetns(append([]string{"nft-load"}, args...))
	}
	if err := sh("ip", "link", "set", "lo", "up"); err != nil {
		return exitInternal, err
	}
	out, err := exec.Command("nft", "-f", file).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "nft -f: %v: %s\n", err, strings.TrimSpace(string(out)))
		return exitKernel, nil
	}
	// Only kube-proxy's table is compared: a file that makes any other table (or the other
	// family's) is refused here rather than have the extra go unseen.
	tables, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return exitInternal, fmt.Errorf("nft list tables: %v", err)
	}
	for _, t := range strings.Split(strings.TrimSpace(string(tables)), "\n") {
		if t = strings.TrimSpace(t); t != "" && t != "table "+family+" kube-proxy" {
			fmt.Fprintf(os.Stderr, "nft-load: the file also makes %q (only table %s kube-proxy is compared)\n", t, family)
			return exitKernel, nil
		}
	}
	listing, err := nftListTable(family)
	if err != nil {
		return exitInternal, err
	}
	_, err = os.Stdout.WriteString(listing)
	return exitOK, err
}
