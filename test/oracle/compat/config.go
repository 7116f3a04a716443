package main

// Release-specific glue for kube-proxy v1.37: the proxier constructors take the
// KubeProxyConfiguration (cmd/kube-proxy/app/server_linux.go createProxier, single-stack branch).

import (
	"k8s.io/kubernetes/pkg/proxy/iptables"
	"k8s.io/kubernetes/pkg/proxy/ipvs"
	utilipset "k8s.io/kubernetes/pkg/proxy/ipvs/ipset"
	utilipvs "k8s.io/kubernetes/pkg/proxy/ipvs/util"
	"k8s.io/kubernetes/pkg/proxy/nftables"
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
