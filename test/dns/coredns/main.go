// A CoreDNS with the kubernetes plugin only, for kpc's oracle test (test/dns/coredns/).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func init() {
	dnsserver.Directives = []string{"kubernetes"}
}

func main() {
	coremain.Run()
}
