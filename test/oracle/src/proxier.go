package main

// compile: kube-proxy's real proxier, one sync, in a throwaway network namespace.
//
// The oracle re-executes itself in a new network namespace (CLONE_NEWNET; it disappears with the
// process, nothing to clean up) and there:
//   - brings lo up and creates a veth `kpc-node` (up) carrying the node's addresses (--node-ip,
//     else the Node's InternalIP then ExternalIP addresses; kpc's "interface addresses"), with
//     IPv6 address generation off so no link-local address appears; this kernel has no dummy
//     interfaces, hence a veth;
//   - in ipvs mode also a veth named `kube-ipvs0` (down, as kube-proxy leaves its dummy), so the
//     proxier's real netlink handle (NewNetLinkHandle) finds the device and binds the service
//     addresses to it in the kernel;
//   - runs the real pkg/util/iptables runner (iptables-restore, nf_tables backend) behind a
//     wrapper that records the bytes of every RestoreAll and answers HasRandomFully from
//     --[no-]masquerade-random-fully; the kernel's verdict on the restore is kept (exit 4 if
//     it refused).
//
// Fakes are used only where this kernel or an offline run cannot serve:
//   - sysctl: component-helpers' fake (nf_conntrack_tcp_be_liberal = --conntrack-tcp-be-liberal,
//     standing for kube-proxy's conntrack setup, which sets it from the same config field);
//   - IPVS: pkg/proxy/ipvs/util/testing FakeIPVS (no ip_vs module here);
//   - ipset: pkg/proxy/ipvs/ipset/testing FakeIPSet holds the state that is printed; every set
//     it is asked to create is also created in the namespace's kernel (so the proxier's
//     `-m set` rules can load), and after the sync the printed ipset.rules is loaded with
//     `ipset restore` to confirm the kernel takes it;
//   - events: client-go's FakeRecorder; no healthz server.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/events"
	sysctltesting "k8s.io/component-helpers/node/util/sysctl/testing"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	nodeutil "k8s.io/kubernetes/pkg/util/node"
	netutils "k8s.io/utils/net"
)

const netnsEnv = "KPC_ORACLE_IN_NETNS"

// proxierHandle is what both proxiers offer the oracle: the event handlers and one sync.
type proxierHandle interface {
	OnServiceAdd(*corev1.Service)
	OnServiceSynced()
	OnEndpointSlicesSynced()
	OnTopologyChange(map[string]string)
	KpcOracleSyncProxyRules() error
}

type captureIPT struct {
	utiliptables.Interface
	randomFully bool
	restores    [][]byte
	restoreErrs []error
	notes       []string
}

func (c *captureIPT) RestoreAll(data []byte, flush utiliptables.FlushFlag, counters utiliptables.RestoreCountersFlag) error {
	c.restores = append(c.restores, append([]byte(nil), data...))
	err := c.Interface.RestoreAll(data, flush, counters)
	if err != nil && strings.Contains(err.Error(), "Extension ipvs") {
		// This kernel has no IPVS, so iptables' `-m ipvs` match cannot load (ipvs mode's
		// KUBE-IPVS-OUT-FILTER rules). The kernel then checks everything else: the same input
		// without those rules.
		var kept [][]byte
		for _, line := range bytes.Split(data, []byte("\n")) {
			if !bytes.Contains(line, []byte(" -m ipvs ")) {
				kept = append(kept, line)
			}
		}
		c.notes = append(c.notes, "the kernel has no ipvs match: the -m ipvs rules were not loaded, the rest was")
		err = c.Interface.RestoreAll(bytes.Join(kept, []byte("\n")), flush, counters)
	}
	c.restoreErrs = append(c.restoreErrs, err)
	return err
}

func (c *captureIPT) HasRandomFully() bool { return c.randomFully }

// reexecInNetns runs this very command again in a new network namespace.
func reexecInNetns(args []string) (int, error) {
	self, err := os.Executable()
	if err != nil {
		return exitInternal, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return exitInternal, fmt.Errorf("cannot start in a new network namespace (root needed): %w", err)
	}
	return exitOK, nil
}

func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func writeProc(path, value string) error { return os.WriteFile(path, []byte(value), 0o644) }

// setupNetns prepares the namespace this process runs in.
func setupNetns(ifaceIPs []net.IP, ipvs bool) error {
	for _, p := range []string{"/proc/sys/net/ipv6/conf/all/addr_gen_mode", "/proc/sys/net/ipv6/conf/default/addr_gen_mode"} {
		_ = writeProc(p, "1")
	}
	if err := sh("ip", "link", "set", "lo", "up"); err != nil {
		return err
	}
	if err := sh("ip", "link", "add", "kpc-node", "type", "veth", "peer", "name", "kpc-node-peer"); err != nil {
		return err
	}
	_ = writeProc("/proc/sys/net/ipv6/conf/kpc-node/addr_gen_mode", "1")
	for _, ip := range ifaceIPs {
		if ip.To4() != nil {
			if err := sh("ip", "addr", "add", ip.String()+"/32", "dev", "kpc-node"); err != nil {
				return err
			}
		} else if err := sh("ip", "addr", "add", ip.String()+"/128", "dev", "kpc-node", "nodad"); err != nil {
			return err
		}
	}
	if err := sh("ip", "link", "set", "kpc-node", "up"); err != nil {
		return err
	}
	if ipvs {
		if err := sh("ip", "link", "add", "kube-ipvs0", "type", "veth", "peer", "name", "kpc-ipvs0-peer"); err != nil {
			return err
		}
		_ = writeProc("/proc/sys/net/ipv6/conf/kube-ipvs0/addr_gen_mode", "1")
	}
	return nil
}

// nodeFacts: the node's name, its Node object, kube-proxy's node IPs per family and the
// addresses its interfaces carry.
type nodeFactsT struct {
	name      string
	node      *corev1.Node
	nodeIPs   map[corev1.IPFamily]net.IP
	primary   corev1.IPFamily
	ifaceIPs  []net.IP
	podCIDRs  []string
	topoLabel map[string]string
}

func nodeFacts(o *options, c *cluster) (*nodeFactsT, error) {
	f := &nodeFactsT{name: o.cfg.HostnameOverride}
	if f.name == "" {
		// kpc: without a hostname, the only Node of the input (kube-proxy would use os.Hostname).
		switch len(c.nodes) {
		case 1:
			f.name = c.nodes[0].Name
		case 0:
			return nil, usagef("which node? pass --hostname-override NAME")
		default:
			return nil, usagef("which node? the input has %d Nodes; pass --hostname-override NAME", len(c.nodes))
		}
	}
	for _, n := range c.nodes {
		if n.Name == f.name {
			f.node = n
		}
	}
	addrNode := f.node
	if len(o.nodeIPs) > 0 {
		// kpc: --node-ip addresses stand for the Node's addresses.
		addrNode = &corev1.Node{}
		for _, s := range o.nodeIPs {
			ip := netutils.ParseIPSloppy(s)
			if ip == nil {
				return nil, usagef("--node-ip: %q is not an IP address", s)
			}
			f.ifaceIPs = append(f.ifaceIPs, ip)
			addrNode.Status.Addresses = append(addrNode.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: s})
		}
	} else if f.node != nil {
		for _, t := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeExternalIP} {
			for _, a := range f.node.Status.Addresses {
				if a.Type == t {
					if ip := netutils.ParseIPSloppy(a.Address); ip != nil {
						f.ifaceIPs = append(f.ifaceIPs, ip)
					}
				}
			}
		}
	}
	var raw []net.IP
	if addrNode != nil {
		// pkg/proxy/node.go getNodeInfo.
		raw, _ = nodeutil.GetNodeHostIPs(addrNode)
	}
	f.primary, f.nodeIPs = detectNodeIPs(raw, o.cfg.BindAddress)
	if f.node != nil {
		f.podCIDRs = f.node.Spec.PodCIDRs
		// pkg/proxy/config NodeTopologyConfig handleNodeEvent: only the zone label.
		f.topoLabel = map[string]string{}
		if z, ok := f.node.Labels[corev1.LabelTopologyZone]; ok {
			f.topoLabel[corev1.LabelTopologyZone] = z
		}
	}
	return f, nil
}

// detectNodeIPs: cmd/kube-proxy/app/server.go detectNodeIPs (unexported there), transcribed.
func detectNodeIPs(rawNodeIPs []net.IP, bindAddress string) (corev1.IPFamily, map[corev1.IPFamily]net.IP) {
	primaryFamily := corev1.IPv4Protocol
	nodeIPs := map[corev1.IPFamily]net.IP{
		corev1.IPv4Protocol: net.IPv4(127, 0, 0, 1),
		corev1.IPv6Protocol: net.IPv6loopback,
	}
	if len(rawNodeIPs) > 0 {
		if !netutils.IsIPv4(rawNodeIPs[0]) {
			primaryFamily = corev1.IPv6Protocol
		}
		nodeIPs[primaryFamily] = rawNodeIPs[0]
		if len(rawNodeIPs) > 1 {
			family := corev1.IPv4Protocol
			if !netutils.IsIPv4(rawNodeIPs[1]) {
				family = corev1.IPv6Protocol
			}
			nodeIPs[family] = rawNodeIPs[1]
		}
	}
	bindIP := netutils.ParseIPSloppy(bindAddress)
	if bindIP != nil && !bindIP.IsUnspecified() {
		if netutils.IsIPv4(bindIP) {
			primaryFamily = corev1.IPv4Protocol
		} else {
			primaryFamily = corev1.IPv6Protocol
		}
		nodeIPs[primaryFamily] = bindIP
	}
	return primaryFamily, nodeIPs
}

// resolvePrimaryNodePortAddresses: cmd/kube-proxy/app/server.go newProxyServer, transcribed.
func resolvePrimaryNodePortAddresses(cfg *kubeproxyconfig.KubeProxyConfiguration, nodeIPs map[corev1.IPFamily]net.IP) {
	if len(cfg.NodePortAddresses) == 1 && cfg.NodePortAddresses[0] == kubeproxyconfig.NodePortAddressesPrimary {
		var nodePortAddresses []string
		if nodeIP := nodeIPs[corev1.IPv4Protocol]; nodeIP != nil && !nodeIP.IsLoopback() {
			nodePortAddresses = append(nodePortAddresses, fmt.Sprintf("%s/32", nodeIP.String()))
		}
		if nodeIP := nodeIPs[corev1.IPv6Protocol]; nodeIP != nil && !nodeIP.IsLoopback() {
			nodePortAddresses = append(nodePortAddresses, fmt.Sprintf("%s/128", nodeIP.String()))
		}
		cfg.NodePortAddresses = nodePortAddresses
	}
}

// getLocalDetectors: cmd/kube-proxy/app/server_linux.go (unexported there), transcribed.
func getLocalDetectors(cfg *kubeproxyconfig.KubeProxyConfiguration, nodePodCIDRs []string) map[corev1.IPFamily]proxyutil.LocalTrafficDetector {
	localDetectors := map[corev1.IPFamily]proxyutil.LocalTrafficDetector{
		corev1.IPv4Protocol: proxyutil.NewNoOpLocalDetector(),
		corev1.IPv6Protocol: proxyutil.NewNoOpLocalDetector(),
	}
	switch cfg.DetectLocalMode {
	case kubeproxyconfig.LocalModeClusterCIDR:
		for family, cidrs := range proxyutil.MapCIDRsByIPFamily(cfg.DetectLocal.ClusterCIDRs) {
			localDetectors[family] = proxyutil.NewDetectLocalByCIDR(cidrs[0].String())
		}
	case kubeproxyconfig.LocalModeNodeCIDR:
		for family, cidrs := range proxyutil.MapCIDRsByIPFamily(nodePodCIDRs) {
			localDetectors[family] = proxyutil.NewDetectLocalByCIDR(cidrs[0].String())
		}
	case kubeproxyconfig.LocalModeBridgeInterface:
		d := proxyutil.NewDetectLocalByBridgeInterface(cfg.DetectLocal.BridgeInterface)
		localDetectors[corev1.IPv4Protocol] = d
		localDetectors[corev1.IPv6Protocol] = d
	case kubeproxyconfig.LocalModeInterfaceNamePrefix:
		d := proxyutil.NewDetectLocalByInterfaceNamePrefix(cfg.DetectLocal.InterfaceNamePrefix)
		localDetectors[corev1.IPv4Protocol] = d
		localDetectors[corev1.IPv6Protocol] = d
	}
	return localDetectors
}

func runCompile(args []string) (int, error) {
	o, err := parseCompileFlags(args)
	if err != nil {
		return exitBadInput, err
	}
	c, err := loadCluster(o.files, o.namespace)
	if err != nil {
		return exitBadInput, err
	}
	if err := applyGatesAndValidate(o.cfg); err != nil {
		return exitBadInput, err
	}
	mirrored, err := mirrorEndpoints(c)
	if err != nil {
		return exitInternal, err
	}
	facts, err := nodeFacts(o, c)
	if err != nil {
		return exitBadInput, err
	}
	mode := o.cfg.Mode
	if mode != kubeproxyconfig.ProxyModeIPTables && mode != kubeproxyconfig.ProxyModeIPVS && mode != kubeproxyconfig.ProxyModeNFTables {
		return exitBadInput, usagef("--proxy-mode: %q is not supported", mode)
	}
	if mode == kubeproxyconfig.ProxyModeIPVS && o.outDir == "" {
		return exitBadInput, usagef("ipvs mode: pass -o DIR (the bundle)")
	}
	if os.Getenv(netnsEnv) != "1" {
		return reexecInNetns(append([]string{"compile"}, args...))
	}
	if err := setupNetns(facts.ifaceIPs, mode == kubeproxyconfig.ProxyModeIPVS); err != nil {
		return exitInternal, err
	}
	// Pods: the EndpointSlice controller's slices for the Services kpc derives them for
	// (--endpoints-from), handed to the proxier like the mirrored ones.
	derived, kept, err := derivedForCompile(c, o.endpointsFrom)
	if err != nil {
		return exitInternal, err
	}
	c.slices = kept
	mirrored = append(mirrored, derived...)
	expandNodePortAddresses(o.cfg, facts.nodeIPs) // per release (compat/)

	family := corev1.IPv4Protocol
	protocol := utiliptables.ProtocolIPv4
	if o.ipFamily == "ipv6" {
		family, protocol = corev1.IPv6Protocol, utiliptables.ProtocolIPv6
	}
	detector := getLocalDetectors(o.cfg, facts.podCIDRs)[family]
	sysctl := sysctltesting.NewFake()
	if o.cfg.Linux.Conntrack.TCPBeLiberal {
		sysctl.Settings["net/netfilter/nf_conntrack_tcp_be_liberal"] = 1
	}
	recorder := events.NewFakeRecorder(1000)
	ctx := context.Background()
	env := &proxierEnv{
		ctx: ctx, cfg: o.cfg, family: family, sysctl: sysctl, detector: detector,
		nodeName: facts.name, nodeIP: facts.nodeIPs[family], recorder: recorder,
	}

	switch mode {
	case kubeproxyconfig.ProxyModeIPTables:
		ipt := &captureIPT{Interface: utiliptables.New(protocol), randomFully: o.randomFully}
		env.ipt = ipt
		p, err := newIPTablesProxier(env)
		if err != nil {
			return exitInternal, fmt.Errorf("NewProxier: %w", err)
		}
		if !o.nfacct {
			p.KpcOracleDisableNFAcct()
		}
		syncErr := feedAndSync(p, c, mirrored, facts, func() int { return len(ipt.restores) })
		if len(ipt.restores) == 0 {
			return exitInternal, fmt.Errorf("the proxier wrote nothing (sync: %v)", syncErr)
		}
		debugRestores(ipt)
		text, err := string(ipt.restores[0]), error(nil)
		if !o.raw {
			text, err = normalizeIPTables(text)
		}
		if err != nil {
			return exitInternal, err
		}
		if err := writeOut(o.outDir, "", text); err != nil {
			return exitInternal, err
		}
		if rerr := ipt.restoreErrs[0]; rerr != nil {
			fmt.Fprintf(os.Stderr, "oracle: the kernel refused kube-proxy's iptables-restore input: %v\n", rerr)
			return exitKernel, nil
		}
		if syncErr != nil {
			fmt.Fprintf(os.Stderr, "oracle: sync: %v\n", syncErr)
		}
		return exitOK, nil
	case kubeproxyconfig.ProxyModeIPVS:
		return runIPVS(env, o, c, mirrored, facts, protocol)
	default:
		return runNFTables(env, o, c, mirrored, facts)
	}
}

type sliceHandler interface {
	OnEndpointSliceAdd(*discoveryv1.EndpointSlice)
}

type proxierEnv struct {
	ctx      context.Context
	cfg      *kubeproxyconfig.KubeProxyConfiguration
	family   corev1.IPFamily
	ipt      utiliptables.Interface
	sysctl   *sysctltesting.Fake
	detector proxyutil.LocalTrafficDetector
	nodeName string
	nodeIP   net.IP
	recorder events.EventRecorder
}

// feedAndSync gives the proxier the cluster through its public event handlers, as kube-proxy's
// informers would on start, then runs one sync.
func feedAndSync(p interface {
	proxierHandle
	sliceHandler
}, c *cluster, mirrored []*discoveryv1.EndpointSlice, facts *nodeFactsT, restores func() int) error {
	for _, s := range c.services {
		p.OnServiceAdd(s)
	}
	for _, s := range c.slices {
		p.OnEndpointSliceAdd(s)
	}
	for _, s := range mirrored {
		p.OnEndpointSliceAdd(s)
	}
	if facts.topoLabel != nil {
		p.OnTopologyChange(facts.topoLabel)
	}
	// OnServiceSynced and OnEndpointSlicesSynced each call syncProxyRules unconditionally
	// ("called once per lifetime"); the second one, once both are synced, is kube-proxy's first
	// full sync, and that is what the oracle prints.
	p.OnServiceSynced()
	p.OnEndpointSlicesSynced()
	if restores() == 0 {
		return p.KpcOracleSyncProxyRules()
	}
	return nil
}

// writeOut prints text (no dir) or writes dir/name.
func writeOut(dir, name, text string) error {
	if dir == "" || name == "" {
		_, err := os.Stdout.WriteString(text)
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
}

func debugRestores(ipt *captureIPT) {
	if os.Getenv("KPC_ORACLE_DEBUG") == "" {
		return
	}
	for i, r := range ipt.restores {
		fmt.Fprintf(os.Stderr, "--- restore %d (err %v)\n%s", i, ipt.restoreErrs[i], r)
	}
}
