package main

// ipvs mode: the real pkg/proxy/ipvs proxier with FakeIPVS and FakeIPSet (see proxier.go), the
// real iptables runner and the real netlink handle in the namespace. Printed as kpc's bundle
// (fixtures/README.md "Bundle cases"; the formats of fixtures/kube-proxy/ipvs/tools/render.mjs):
//   ipvs.rules        the FakeIPVS state in `ipvsadm-save -n` form (ipvsadm -R input), services in
//                     ipvsadm's order (protocol number, address as libipvs compares it, port),
//                     real servers by address then port; a `--set T F U` line first when the
//                     proxier configured timeouts
//   ipset.rules       the FakeIPSet state as `ipset restore` input, the sets in kube-proxy's
//                     ipsetInfo order (proxier.go), entries sorted
//   iptables.rules    the bytes of the proxier's iptables RestoreAll, as written
//   kube-ipvs0.addrs  the addresses the proxier bound to kube-ipvs0 (read back from the kernel),
//                     sorted, address/prefix per line

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
	ipsettest "k8s.io/kubernetes/pkg/proxy/ipvs/ipset/testing"
	utilipvs "k8s.io/kubernetes/pkg/proxy/ipvs/util"
	ipvstest "k8s.io/kubernetes/pkg/proxy/ipvs/util/testing"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
)

// ipvsFake records ConfigureTimeouts, which FakeIPVS accepts and forgets.
type ipvsFake struct {
	*ipvstest.FakeIPVS
	timeouts []time.Duration
}

func (f *ipvsFake) ConfigureTimeouts(tcp, tcpFin, udp time.Duration) error {
	f.timeouts = []time.Duration{tcp, tcpFin, udp}
	return f.FakeIPVS.ConfigureTimeouts(tcp, tcpFin, udp)
}

// ipsetTee keeps the state in FakeIPSet and creates (flushes, destroys) each set in the kernel too.
type ipsetTee struct {
	*ipsettest.FakeIPSet
	real    utilipset.Interface
	realErr error
}

func (t *ipsetTee) CreateSet(set *utilipset.IPSet, ignoreExistErr bool) error {
	if err := t.real.CreateSet(set, ignoreExistErr); err != nil && t.realErr == nil {
		t.realErr = fmt.Errorf("kernel ipset create %s: %w", set.Name, err)
	}
	return t.FakeIPSet.CreateSet(set, ignoreExistErr)
}

func (t *ipsetTee) DestroySet(name string) error {
	_ = t.real.DestroySet(name)
	return t.FakeIPSet.DestroySet(name)
}

// kube-proxy's ipsetInfo order (pkg/proxy/ipvs/proxier.go), IPv4 names.
var ipsetOrder = []string{
	"KUBE-LOOP-BACK", "KUBE-CLUSTER-IP", "KUBE-EXTERNAL-IP", "KUBE-EXTERNAL-IP-LOCAL",
	"KUBE-LOAD-BALANCER", "KUBE-LOAD-BALANCER-FW", "KUBE-LOAD-BALANCER-LOCAL",
	"KUBE-LOAD-BALANCER-SOURCE-IP", "KUBE-LOAD-BALANCER-SOURCE-CIDR", "KUBE-NODE-PORT-TCP",
	"KUBE-NODE-PORT-LOCAL-TCP", "KUBE-NODE-PORT-UDP", "KUBE-NODE-PORT-LOCAL-UDP",
	"KUBE-NODE-PORT-SCTP-HASH", "KUBE-NODE-PORT-LOCAL-SCTP-HASH", "KUBE-HEALTH-CHECK-NODE-PORT",
	"KUBE-IPVS-IPS",
}

func ipsetName(name string, ipv6 bool) string {
	if !ipv6 {
		return name
	}
	// pkg/proxy/ipvs/ipset.go NewIPSet: "KUBE-" -> "KUBE-6-", at most 31 characters.
	n := strings.Replace(name, "KUBE-", "KUBE-6-", 1)
	if len(n) > 31 {
		n = n[:31]
	}
	return n
}

func runIPVS(env *proxierEnv, o *options, c *cluster, mirrored []*discoveryv1.EndpointSlice, facts *nodeFactsT, protocol utiliptables.Protocol) (int, error) {
	ipt := &captureIPT{Interface: utiliptables.New(protocol), randomFully: o.randomFully}
	env.ipt = ipt
	fipvs := &ipvsFake{FakeIPVS: ipvstest.NewFake()}
	fipset := &ipsetTee{FakeIPSet: ipsettest.NewFake(ipsetVersion), real: utilipset.New()}
	p, err := newIPVSProxier(env, fipvs, fipset)
	if err != nil {
		return exitInternal, fmt.Errorf("NewProxier: %w", err)
	}
	syncErr := feedAndSync(p, c, mirrored, facts, func() int { return len(ipt.restores) })
	if len(ipt.restores) == 0 {
		return exitInternal, fmt.Errorf("the proxier wrote no iptables rules (sync: %v)", syncErr)
	}
	ipv6 := env.family == corev1.IPv6Protocol
	setsText, err := renderIPSets(fipset.FakeIPSet, ipv6)
	if err != nil {
		return exitInternal, err
	}
	addrs, err := kubeIPVS0Addrs(ipv6)
	if err != nil {
		return exitInternal, err
	}
	files := map[string]string{
		"ipvs.rules":       renderIPVS(fipvs),
		"ipset.rules":      setsText,
		"iptables.rules":   string(ipt.restores[0]),
		"kube-ipvs0.addrs": addrs,
	}
	if !o.raw {
		files["iptables.rules"] = normalizeIPVSIPTables(files["iptables.rules"], c.services)
	}
	for _, name := range []string{"ipvs.rules", "ipset.rules", "iptables.rules", "kube-ipvs0.addrs"} {
		if err := writeOut(o.outDir, name, files[name]); err != nil {
			return exitInternal, err
		}
	}
	code := exitOK
	if fipset.realErr != nil {
		fmt.Fprintf(os.Stderr, "oracle: %v\n", fipset.realErr)
		code = exitKernel
	}
	// The kernel's verdict on the printed ipset state (the sets exist already: -exist).
	cmd := exec.Command("ipset", "restore")
	cmd.Stdin = strings.NewReader(setsText)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "oracle: the kernel refused ipset.rules: %v: %s\n", err, bytes.TrimSpace(out))
		code = exitKernel
	}
	if rerr := ipt.restoreErrs[0]; rerr != nil {
		fmt.Fprintf(os.Stderr, "oracle: the kernel refused kube-proxy's iptables-restore input: %v\n", rerr)
		code = exitKernel
	}
	for _, n := range ipt.notes {
		fmt.Fprintf(os.Stderr, "oracle: note: %s\n", n)
	}
	if syncErr != nil && code == exitOK {
		fmt.Fprintf(os.Stderr, "oracle: sync: %v\n", syncErr)
	}
	return code, nil
}

// ipsetVersion: any version at or above kube-proxy's MinIPSetCheckVersion.
const ipsetVersion = "7.17"

func renderIPSets(f *ipsettest.FakeIPSet, ipv6 bool) (string, error) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, base := range ipsetOrder {
		name := ipsetName(base, ipv6)
		set, ok := f.Sets[name]
		if !ok {
			return "", fmt.Errorf("ipset %s was not created by the proxier", name)
		}
		seen[name] = true
		opts := ""
		if set.SetType == utilipset.BitmapPort {
			opts = "range " + set.PortRange
		} else {
			opts = fmt.Sprintf("family %s hashsize %d maxelem %d", set.HashFamily, set.HashSize, set.MaxElem)
		}
		fmt.Fprintf(&b, "create %s %s %s -exist\nflush %s\n", name, set.SetType, opts, name)
		entries := f.Entries[name].List()
		sort.Strings(entries)
		for _, e := range entries {
			fmt.Fprintf(&b, "add %s %s\n", name, e)
		}
	}
	for name := range f.Sets {
		if !seen[name] {
			return "", fmt.Errorf("the proxier created ipset %s, which the oracle's list lacks", name)
		}
	}
	return b.String(), nil
}

// ipWords: an address as 32-bit words in network order (one for IPv4, four for IPv6).
func ipWords(ip net.IP) []uint32 {
	if v4 := ip.To4(); v4 != nil {
		return []uint32{uint32(v4[0])<<24 | uint32(v4[1])<<16 | uint32(v4[2])<<8 | uint32(v4[3])}
	}
	ip = ip.To16()
	w := make([]uint32, 4)
	for i := range w {
		w[i] = uint32(ip[4*i])<<24 | uint32(ip[4*i+1])<<16 | uint32(ip[4*i+2])<<8 | uint32(ip[4*i+3])
	}
	return w
}

// libipvs compares addresses as `int r = ntohl(a) - ntohl(b)` per word (it wraps).
func libipvsCmp(a, b net.IP) int {
	A, B := ipWords(a), ipWords(b)
	for i := range A {
		if r := int32(A[i] - B[i]); r != 0 {
			return int(r)
		}
	}
	return 0
}

var protoNum = map[string]int{"TCP": 6, "UDP": 17, "SCTP": 132}
var protoOpt = map[string]string{"TCP": "-t", "UDP": "-u", "SCTP": "--sctp-service"}

func hostPort(ip net.IP, port uint16) string {
	if ip.To4() != nil {
		return fmt.Sprintf("%s:%d", ip, port)
	}
	return fmt.Sprintf("[%s]:%d", ip, port)
}

// ipvsadm's -b names of the scheduler flags (IP_VS_SVC_F_SCHED1/2/3 = 0x08/0x10/0x20).
func schedFlags(sched string, flags utilipvs.ServiceFlags) string {
	var names []string
	prefix := sched
	if sched != "sh" && sched != "mh" {
		prefix = ""
	}
	for _, f := range []struct {
		bit  utilipvs.ServiceFlags
		name string
	}{{0x08, "fallback"}, {0x10, "port"}, {0x20, "flag-3"}} {
		if flags&f.bit != 0 {
			if prefix == "" {
				names = append(names, map[string]string{"fallback": "flag-1", "port": "flag-2", "flag-3": "flag-3"}[f.name])
			} else if f.name == "flag-3" {
				names = append(names, "flag-3")
			} else {
				names = append(names, prefix+"-"+f.name)
			}
		}
	}
	return strings.Join(names, ",")
}

func renderIPVS(f *ipvsFake) string {
	var b strings.Builder
	if f.timeouts != nil {
		fmt.Fprintf(&b, "--set %d %d %d\n", int64(f.timeouts[0].Seconds()), int64(f.timeouts[1].Seconds()), int64(f.timeouts[2].Seconds()))
	}
	type vsEntry struct {
		key ipvstest.ServiceKey
		vs  *utilipvs.VirtualServer
	}
	var list []vsEntry
	for k, vs := range f.Services {
		list = append(list, vsEntry{k, vs})
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i].vs, list[j].vs
		if protoNum[a.Protocol] != protoNum[b.Protocol] {
			return protoNum[a.Protocol] < protoNum[b.Protocol]
		}
		if r := libipvsCmp(a.Address, b.Address); r != 0 {
			return r < 0
		}
		return a.Port < b.Port
	})
	for _, e := range list {
		vs := e.vs
		svc := fmt.Sprintf("%s %s", protoOpt[vs.Protocol], hostPort(vs.Address, vs.Port))
		sched := vs.Scheduler
		fmt.Fprintf(&b, "-A %s -s %s", svc, sched)
		if vs.Flags&utilipvs.FlagPersistent != 0 {
			fmt.Fprintf(&b, " -p %d", vs.Timeout)
		}
		if fl := schedFlags(sched, vs.Flags); fl != "" {
			fmt.Fprintf(&b, " -b %s", fl)
		}
		b.WriteString("\n")
		rss := append([]*utilipvs.RealServer(nil), f.Destinations[e.key]...)
		sort.Slice(rss, func(i, j int) bool {
			if r := libipvsCmp(rss[i].Address, rss[j].Address); r != 0 {
				return r < 0
			}
			return rss[i].Port < rss[j].Port
		})
		for _, rs := range rss {
			fmt.Fprintf(&b, "-a %s -r %s -m -w %d\n", svc, hostPort(rs.Address, rs.Port), rs.Weight)
		}
	}
	return b.String()
}

// kubeIPVS0Addrs reads back what the proxier bound to kube-ipvs0, numerically sorted.
func kubeIPVS0Addrs(ipv6 bool) (string, error) {
	ifc, err := net.InterfaceByName("kube-ipvs0")
	if err != nil {
		return "", err
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", err
	}
	var ips []net.IP
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		if (ipn.IP.To4() == nil) != ipv6 {
			continue
		}
		ips = append(ips, ipn.IP)
	}
	sort.Slice(ips, func(i, j int) bool { return bytes.Compare(ips[i].To16(), ips[j].To16()) < 0 })
	var b strings.Builder
	for _, ip := range ips {
		if ip.To4() != nil {
			fmt.Fprintf(&b, "%s/32\n", ip)
		} else {
			fmt.Fprintf(&b, "%s/128\n", ip)
		}
	}
	return b.String(), nil
}
