package main

// The Service registry's create steps that run before validation and need no cluster state
// (pkg/registry/core/service/storage: storage.go normalizeClusterIPs and alloc.go
// initIPFamilyFields, both unexported there), transcribed for a create (no old object). What
// needs the cluster (the default family from --service-cluster-ip-range, allocating cluster
// IPs and node ports) is not done: like kpc, the oracle takes the values a cluster assigned.
// A health-check node port the registry would allocate (ETP Local LoadBalancer without one) is
// left 0 and its "Required value" error dropped: kpc accepts such a Service with a warning,
// and kube-proxy then programs no health-check rule for it.

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	netutils "k8s.io/utils/net"
)

func registryPrepareServiceCreate(svc *core.Service) field.ErrorList {
	// normalizeClusterIPs, create.
	if len(svc.Spec.ClusterIP) > 0 && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	// initIPFamilyFields, create.
	if svc.Spec.Type == core.ServiceTypeExternalName {
		return nil
	}
	if svc.Spec.IPFamilyPolicy == nil {
		p := core.IPFamilyPolicySingleStack
		if svc.Spec.ClusterIP == core.ClusterIPNone && len(svc.Spec.Selector) == 0 {
			p = core.IPFamilyPolicyRequireDualStack
		}
		svc.Spec.IPFamilyPolicy = &p
	}
	if el := corevalidation.ValidateServiceClusterIPsRelatedFields(svc, nil); len(el) != 0 {
		return el
	}
	el := field.ErrorList{}
	if *svc.Spec.IPFamilyPolicy == core.IPFamilyPolicySingleStack {
		if len(svc.Spec.ClusterIPs) == 2 {
			el = append(el, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
				"must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(svc.Spec.IPFamilies) == 2 {
			el = append(el, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
				"must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == core.ClusterIPNone {
			break
		}
		fam := core.IPv4Protocol
		if netutils.IsIPv6String(ip) {
			fam = core.IPv6Protocol
		}
		if i >= len(svc.Spec.IPFamilies) {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, fam)
		}
	}
	return el
}

// dropAllocatedRequired removes the errors for values the registry allocates.
func dropAllocatedRequired(el field.ErrorList) field.ErrorList {
	out := el[:0]
	for _, e := range el {
		if e.Type == field.ErrorTypeRequired && e.Field == "spec.healthCheckNodePort" {
			continue
		}
		out = append(out, e)
	}
	return out
}
