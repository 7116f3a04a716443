package main

// Release-specific glue for kube-proxy v1.37: the proxier constructors take the
// KubeProxyConfiguration (cmd/kube-proxy/app/server_linux.go createProxier, single-stack branch).

import (
	"fmt"
	"net"

	v1 "k8s.io/api/core/v1"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/kubernetes/pkg/proxy/iptables"
	"k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
	utilipvs "k8s.io/kubernetes/pkg/proxy/ipvs/util"
	"k8s.io/kubernetes/pkg/proxy/nftables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
)

func newIPTablesProxier(e *proxierEnv) (*iptables.Proxier, error) {
	return iptables.NewProxier(e.ctx, e.cfg, e.family, e.ipt, e.sysctl, e.detector,
		e.nodeName, e.nodeIP, e.recorder, nil, false)
}

func newIPVSProxier(e *proxierEnv, ipvsIf utilipvs.Interface, ipsetIf utilipset.Interface) (*ipvs.Proxier, error) {
	return ipvs.NewProxier(e.ctx, e.cfg, e.family, e.ipt, ipvsIf, ipsetIf, e.sysctl, e.detector,
		e.nodeName, e.nodeIP, e.recorder, nil, false)
}

func newNFTablesProxier(e *proxierEnv) (*nftables.Proxier, error) {
	return nftables.NewProxier(e.ctx, e.cfg, e.family, e.detector, e.nodeName, e.nodeIP, e.recorder, nil, false)
}

// expandNodePortAddresses: v1.37 cmd/kube-proxy/app/server.go newProxyServer calls
// expandNodePortAddressKeywords (unexported there), transcribed: `primary` → the node IPs
// (/32, /128; a loopback node IP skipped), `localhost` → both loopback CIDRs, `all` → both
// zero CIDRs, anything else kept; any mix of them.
func expandNodePortAddresses(cfg *kubeproxyconfig.KubeProxyConfiguration, nodeIPs map[v1.IPFamily]net.IP) {
	var expanded []string
	for _, addr := range cfg.NodePortAddresses {
		switch addr {
		case kubeproxyconfig.NodePortAddressesPrimary:
			if ip := nodeIPs[v1.IPv4Protocol]; ip != nil && !ip.IsLoopback() {
				expanded = append(expanded, fmt.Sprintf("%s/32", ip.String()))
			}
			if ip := nodeIPs[v1.IPv6Protocol]; ip != nil && !ip.IsLoopback() {
				expanded = append(expanded, fmt.Sprintf("%s/128", ip.String()))
			}
		case kubeproxyconfig.NodePortAddressesLocalhost:
			expanded = append(expanded, "127.0.0.0/8", "::1/128")
		case kubeproxyconfig.NodePortAddressesAll:
			expanded = append(expanded, proxyutil.IPv4ZeroCIDR, proxyutil.IPv6ZeroCIDR)
		default:
			expanded = append(expanded, addr)
		}
	}
	cfg.NodePortAddresses = expanded
}
