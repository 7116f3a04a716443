package main

// kpc's iptables output form: the bytes kube-proxy passes to iptables-restore, in the normal
// form of kube-proxy's own test normaliser (pkg/proxy/iptables/proxier_test.go
// sortIPTablesRules, over the public parser pkg/util/iptables/testing ParseIPTablesDump).
// kube-proxy visits Services in Go map order, so only the order between Services in the
// top-level chains is its own choice; kpc fixes it by (namespace/name, port name), which is
// upstream's orderByCommentServiceName ("namespace/name", the comment up to the first space
// or colon) with the port name as the tie-break (upstream leaves ports of one Service in map
// order), applied to every chain into which several Services write: KUBE-NODEPORTS and
// KUBE-SERVICES (as upstream), and also filter KUBE-EXTERNAL-SERVICES and KUBE-PROXY-FIREWALL.

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"
)

// serviceKey: ("namespace/name", "port name") from a rule comment "ns/name:port ..." or "ns/name ...".
func serviceKey(r *iptablestest.Rule) (string, string, bool) {
	if r.Comment == nil {
		return "", "", false
	}
	v := r.Comment.Value
	if i := strings.IndexByte(v, ' '); i != -1 {
		v = v[:i]
	}
	name, port := v, ""
	if i := strings.IndexByte(v, ':'); i != -1 {
		name, port = v[:i], v[i+1:]
	}
	return name, port, true
}

func orderByService(r1, r2 *iptablestest.Rule) bool {
	n1, p1, ok1 := serviceKey(r1)
	n2, p2, ok2 := serviceKey(r2)
	if !ok1 || !ok2 {
		return false
	}
	if n1 != n2 {
		return n1 < n2
	}
	return p1 < p2
}

func normalizeIPTables(data string) (string, error) {
	dump, err := iptablestest.ParseIPTablesDump(data)
	if err != nil {
		return "", err
	}
	sort.Slice(dump.Tables, func(i, j int) bool { return dump.Tables[i].Name < dump.Tables[j].Name })
	for t := range dump.Tables {
		table := &dump.Tables[t]
		sort.Slice(table.Chains, func(i, j int) bool {
			a, b := string(table.Chains[i].Name), string(table.Chains[j].Name)
			switch {
			case a == "KUBE-NODEPORTS":
				return true
			case b == "KUBE-NODEPORTS":
				return false
			case a == "KUBE-SERVICES":
				return true
			case b == "KUBE-SERVICES":
				return false
			case strings.HasPrefix(a, "KUBE-") && !strings.HasPrefix(b, "KUBE-"):
				return true
			case !strings.HasPrefix(a, "KUBE-") && strings.HasPrefix(b, "KUBE-"):
				return false
			default:
				return a < b
			}
		})
	}
	sortChain := func(table utiliptables.Table, name string) {
		chain, _ := dump.GetChain(table, utiliptables.Chain(name))
		if chain == nil {
			return
		}
		sort.SliceStable(chain.Rules, func(i, j int) bool {
			ri, rj := chain.Rules[i], chain.Rules[j]
			if name == "KUBE-SERVICES" && table == utiliptables.TableNAT {
				li := ri.Comment != nil && strings.Contains(ri.Comment.Value, "must be the last rule")
				lj := rj.Comment != nil && strings.Contains(rj.Comment.Value, "must be the last rule")
				if li && lj {
					// One per node IP when nodePortAddresses lists CIDRs; kube-proxy takes the
					// IPs from NodePortAddresses.GetNodeIPs, a map: kpc sorts them as strings.
					return ri.Raw < rj.Raw
				}
				if li {
					return false
				} else if lj {
					return true
				}
			}
			return orderByService(ri, rj)
		})
	}
	for _, name := range []string{"KUBE-NODEPORTS", "KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-PROXY-FIREWALL"} {
		sortChain(utiliptables.TableFilter, name)
	}
	sortChain(utiliptables.TableNAT, "KUBE-NODEPORTS")
	sortChain(utiliptables.TableNAT, "KUBE-SERVICES")
	return dump.String(), nil
}

// normalizeIPVSIPTables: ipvs mode's iptables-restore input is in a fixed order except the
// KUBE-IPVS-OUT-FILTER drops (one per LoadBalancer ingress IP of a Service port with source
// ranges that do not hold a node IP), which kube-proxy writes while visiting svcPortMap in Go
// map order. kpc orders them by Service port (namespace/name, port name), then ingress order;
// the rules carry no comment, so the key is looked up from the input Services by
// (ip, protocol, port).
func normalizeIPVSIPTables(data string, services []*corev1.Service) string {
	type key struct {
		svc, port string
		ingress   int
	}
	keys := map[string]key{}
	for _, s := range services {
		for _, p := range s.Spec.Ports {
			for i, ing := range s.Status.LoadBalancer.Ingress {
				if ing.IP == "" {
					continue
				}
				k := fmt.Sprintf("%s|%s|%d", ing.IP, strings.ToLower(string(p.Protocol)), p.Port)
				if _, dup := keys[k]; !dup {
					keys[k] = key{s.Namespace + "/" + s.Name, p.Name, i}
				}
			}
		}
	}
	lines := strings.Split(data, "\n")
	start := -1
	for i := 0; i <= len(lines); i++ {
		in := i < len(lines) && strings.HasPrefix(lines[i], "-A KUBE-IPVS-OUT-FILTER ")
		if in && start < 0 {
			start = i
		}
		if !in && start >= 0 {
			block := lines[start:i]
			lookup := func(l string) key {
				f := strings.Fields(l)
				var ip, proto, port string
				for j := 0; j+1 < len(f); j++ {
					switch f[j] {
					case "--vaddr":
						ip = f[j+1]
					case "--vproto":
						proto = f[j+1]
					case "--vport":
						port = f[j+1]
					}
				}
				return keys[ip+"|"+proto+"|"+port]
			}
			sort.SliceStable(block, func(a, b int) bool {
				ka, kb := lookup(block[a]), lookup(block[b])
				if ka.svc != kb.svc {
					return ka.svc < kb.svc
				}
				if ka.port != kb.port {
					return ka.port < kb.port
				}
				return ka.ingress < kb.ingress
			})
			start = -1
		}
	}
	return strings.Join(lines, "\n")
}
