package main

// Release-specific glue for kube-proxy v1.34-v1.36: the proxier constructors take the knobs
// one by one (cmd/kube-proxy/app/server_linux.go createProxier, single-stack branch).

import (
	"net"

	v1 "k8s.io/api/core/v1"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	"k8s.io/kubernetes/pkg/proxy/iptables"
	"k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
	utilipvs "k8s.io/kubernetes/pkg/proxy/ipvs/util"
	"k8s.io/kubernetes/pkg/proxy/nftables"
)

func newIPTablesProxier(e *proxierEnv) (*iptables.Proxier, error) {
	c := e.cfg
	return iptables.NewProxier(e.ctx, e.family, e.ipt, e.sysctl,
		c.SyncPeriod.Duration, c.MinSyncPeriod.Duration, c.Linux.MasqueradeAll,
		*c.IPTables.LocalhostNodePorts, int(*c.IPTables.MasqueradeBit), e.detector,
		e.nodeName, e.nodeIP, e.recorder, nil, c.NodePortAddresses, false)
}

func newIPVSProxier(e *proxierEnv, ipvsIf utilipvs.Interface, ipsetIf utilipset.Interface) (*ipvs.Proxier, error) {
	c := e.cfg
	return ipvs.NewProxier(e.ctx, e.family, e.ipt, ipvsIf, ipsetIf, e.sysctl,
		c.SyncPeriod.Duration, c.MinSyncPeriod.Duration, c.IPVS.ExcludeCIDRs, c.IPVS.StrictARP,
		c.IPVS.TCPTimeout.Duration, c.IPVS.TCPFinTimeout.Duration, c.IPVS.UDPTimeout.Duration,
		c.Linux.MasqueradeAll, int(*c.IPTables.MasqueradeBit), e.detector, e.nodeName, e.nodeIP,
		e.recorder, nil, c.IPVS.Scheduler, c.NodePortAddresses, false)
}

func newNFTablesProxier(e *proxierEnv) (*nftables.Proxier, error) {
	c := e.cfg
	return nftables.NewProxier(e.ctx, e.family, c.SyncPeriod.Duration, c.MinSyncPeriod.Duration,
		c.Linux.MasqueradeAll, int(*c.NFTables.MasqueradeBit), e.detector, e.nodeName, e.nodeIP,
		e.recorder, nil, c.NodePortAddresses, false)
}

// expandNodePortAddresses: v1.34-v1.36 newProxyServer resolves only a lone `primary`.
func expandNodePortAddresses(cfg *kubeproxyconfig.KubeProxyConfiguration, nodeIPs map[v1.IPFamily]net.IP) {
	resolvePrimaryNodePortAddresses(cfg, nodeIPs)
}
