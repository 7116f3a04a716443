package main

// EndpointSlices from Pods: what the cluster's EndpointSlice controller makes of the input.
// The real controller (k8s.io/kubernetes/pkg/controller/endpointslice NewController, with its
// k8s.io/endpointslice reconciler, default 100 endpoints per slice) runs against client-go's
// fake clientset and informers holding the input's Services, Pods, Nodes and EndpointSlices;
// what it creates is printed (endpointslices) or handed to the proxier (compile with Pods).
//
//	kpc-oracle-vX endpointslices -f LIST.json [-n NS]
//
// prints a `kind: List` JSON of the slices the controller manages for the input's Services,
// sorted by namespace, Service, address type, ports and first address (the controller's own
// order of creation is its workers' and Go maps').
//
// What the fake clientset does not do is done as the API server would: names, UIDs and
// generations of the slices written (fake_apiserver.go), and
//   - the storage round trip of an empty map: a Service's `selector: {}` is stored as no
//     selector (protobuf drops an empty map), so the controller never sees an empty selector.
//
// Done when every Service the controller reconciles (a selector, not ExternalName, not being
// deleted) has a slice for each of its address types (the reconciler always writes at least a
// placeholder) and the output has not changed for 0.3 s; 20 s at most, then exit 3. That is a
// wait condition only: what is printed is what the controller made.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/controller/endpointslice"
	utilnet "k8s.io/utils/net"
)

const endpointSliceControllerName = "endpointslice-controller.k8s.io"

// reconciled says whether the EndpointSlice controller writes slices for a Service
// (syncService: not ExternalName, a selector; finalize: not pending deletion).
func reconciled(s *corev1.Service) bool {
	return s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.Selector != nil && s.DeletionTimestamp == nil
}

// addressTypesOf is getAddressTypesForService (k8s.io/endpointslice utils.go), transcribed for
// the wait condition only.
func addressTypesOf(s *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range s.Spec.IPFamilies {
		if f == corev1.IPv4Protocol {
			out = append(out, discoveryv1.AddressTypeIPv4)
		}
		if f == corev1.IPv6Protocol {
			out = append(out, discoveryv1.AddressTypeIPv6)
		}
	}
	if len(out) > 0 {
		return out
	}
	if s.Spec.ClusterIP != "" && s.Spec.ClusterIP != corev1.ClusterIPNone {
		if utilnet.IsIPv6String(s.Spec.ClusterIP) {
			return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6}
		}
		return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	return []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}
}

// storedService is the Service as the controller reads it back from the API server.
func storedService(s *corev1.Service) *corev1.Service {
	s = s.DeepCopy()
	if s.Spec.Selector != nil && len(s.Spec.Selector) == 0 {
		s.Spec.Selector = nil
	}
	return s
}

// runEndpointSliceController runs the controller on the cluster and returns the slices it
// manages for the given Services (all reconciled Services when only is nil).
func runEndpointSliceController(c *cluster, only map[string]bool) ([]*discoveryv1.EndpointSlice, error) {
	var objs []runtime.Object
	services := map[string]*corev1.Service{}
	for _, s := range c.services {
		st := storedService(s)
		services[st.Namespace+"/"+st.Name] = st
		objs = append(objs, st)
	}
	for _, p := range c.pods {
		objs = append(objs, p.DeepCopy())
	}
	for _, n := range c.nodes {
		objs = append(objs, n.DeepCopy())
	}
	for _, s := range c.slices {
		objs = append(objs, s.DeepCopy())
	}
	client := fake.NewSimpleClientset(objs...)
	actLikeAPIServerForEndpointSlices(client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl := endpointslice.NewController(ctx,
		factory.Core().V1().Pods(), factory.Core().V1().Services(), factory.Core().V1().Nodes(),
		factory.Discovery().V1().EndpointSlices(), 100, client, 0)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go ctrl.Run(ctx, 1)

	waiting := map[string]bool{}
	for key, s := range services {
		if !reconciled(s) || (only != nil && !only[key]) {
			continue
		}
		for _, at := range addressTypesOf(s) {
			waiting[key+"/"+string(at)] = true
		}
	}
	// A topology-mode Service's first sync may run before the controller's topology worker has
	// read the Nodes (both start once the informers have synced), and then it writes no hints
	// and is not queued again when the Nodes arrive. Once the output is stable, each such
	// Service is updated once (an annotation of the oracle's), as any later change to it would:
	// its next sync sees every Node, as a running controller's does.
	var poke []*corev1.Service
	for key, s := range services {
		if reconciled(s) && (only == nil || only[key]) && topologyHintsEnabled(s.Annotations) {
			poke = append(poke, s)
		}
	}
	var last string
	stableSince := time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		list, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var result []*discoveryv1.EndpointSlice
		seen := map[string]bool{}
		for i := range list.Items {
			s := &list.Items[i]
			key := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
			if s.Labels[discoveryv1.LabelManagedBy] != endpointSliceControllerName || (only != nil && !only[key]) {
				continue
			}
			seen[key+"/"+string(s.AddressType)] = true
			result = append(result, s.DeepCopy())
		}
		sortSlices(result)
		sigBytes, _ := json.Marshal(result)
		sig := string(sigBytes)
		if sig != last {
			last, stableSince = sig, time.Now()
			continue
		}
		complete := true
		for k := range waiting {
			if !seen[k] {
				complete = false
			}
		}
		if complete && time.Since(stableSince) > 300*time.Millisecond {
			if len(poke) == 0 {
				return result, nil
			}
			for _, svc := range poke {
				updated := svc.DeepCopy()
				if updated.Annotations == nil {
					updated.Annotations = map[string]string{}
				}
				updated.Annotations["kpc-oracle.test/resync"] = "1"
				if _, err := client.CoreV1().Services(svc.Namespace).Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
					return nil, err
				}
			}
			poke = nil
			last, stableSince = "", time.Now()
		}
	}
	return nil, fmt.Errorf("the EndpointSlice controller did not write every Service's slices in 20 s")
}

// topologyHintsEnabled is hintsEnabled (k8s.io/endpointslice utils.go), transcribed for the
// resync above.
func topologyHintsEnabled(annotations map[string]string) bool {
	val, ok := annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	if !ok {
		val, ok = annotations[corev1.AnnotationTopologyMode]
		if !ok {
			return false
		}
	}
	return val == "Auto" || val == "auto"
}

func sliceSortKey(s *discoveryv1.EndpointSlice) string {
	ports, _ := json.Marshal(s.Ports)
	first := ""
	if len(s.Endpoints) > 0 && len(s.Endpoints[0].Addresses) > 0 {
		first = s.Endpoints[0].Addresses[0]
	}
	return strings.Join([]string{s.Namespace, s.Labels[discoveryv1.LabelServiceName], string(s.AddressType), string(ports), first, s.Name}, "\x00")
}

func sortSlices(slices []*discoveryv1.EndpointSlice) {
	for _, s := range slices {
		sort.SliceStable(s.Endpoints, func(i, j int) bool {
			return endpointSortKey(&s.Endpoints[i]) < endpointSortKey(&s.Endpoints[j])
		})
	}
	sort.SliceStable(slices, func(i, j int) bool { return sliceSortKey(slices[i]) < sliceSortKey(slices[j]) })
}

func endpointSortKey(e *discoveryv1.Endpoint) string {
	name := ""
	if e.TargetRef != nil {
		name = e.TargetRef.Namespace + "/" + e.TargetRef.Name
	}
	return strings.Join(e.Addresses, ",") + "\x00" + name
}

func runEndpointSlices(args []string) (int, error) {
	o, err := parseValidateFlags(args)
	if err != nil {
		return exitBadInput, err
	}
	c, err := loadCluster(o.files, o.namespace)
	if err != nil {
		return exitBadInput, err
	}
	// From scratch, as kpc derives: the input's own slices are not the controller's to adopt.
	fresh := *c
	fresh.slices = nil
	slices, err := runEndpointSliceController(&fresh, nil)
	if err != nil {
		return exitInternal, err
	}
	items := make([]*discoveryv1.EndpointSlice, 0, len(slices))
	for _, s := range slices {
		s.APIVersion, s.Kind = "discovery.k8s.io/v1", "EndpointSlice"
		// Bookkeeping of the fake clientset and the controller's clock, not content.
		s.ResourceVersion, s.UID, s.Generation = "", "", 0
		delete(s.Annotations, corev1.EndpointsLastChangeTriggerTime)
		if len(s.Annotations) == 0 {
			s.Annotations = nil
		}
		items = append(items, s)
	}
	out, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		return exitInternal, err
	}
	if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
		return exitInternal, err
	}
	return exitOK, nil
}

// derivedForCompile is kpc's --endpoints-from for compile: the controller's slices for the
// selector Services kpc derives (auto: those with no EndpointSlice in the input whose namespace
// has Pods in the input; pods: every one, replacing the input's controller-managed slices;
// slices: none). Returns the derived slices and the input slices that stay.
func derivedForCompile(c *cluster, mode string) ([]*discoveryv1.EndpointSlice, []*discoveryv1.EndpointSlice, error) {
	if mode == "slices" || len(c.pods) == 0 && mode == "auto" {
		return nil, c.slices, nil
	}
	withSlices := map[string]bool{}
	for _, s := range c.slices {
		withSlices[s.Namespace+"/"+s.Labels[discoveryv1.LabelServiceName]] = true
	}
	podNamespaces := map[string]bool{}
	for _, p := range c.pods {
		podNamespaces[p.Namespace] = true
	}
	only := map[string]bool{}
	for _, s := range c.services {
		st := storedService(s)
		key := st.Namespace + "/" + st.Name
		if !reconciled(st) {
			continue
		}
		if mode == "pods" || (!withSlices[key] && podNamespaces[st.Namespace]) {
			only[key] = true
		}
	}
	var kept []*discoveryv1.EndpointSlice
	for _, s := range c.slices {
		key := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
		if only[key] && s.Labels[discoveryv1.LabelManagedBy] == endpointSliceControllerName {
			continue
		}
		kept = append(kept, s)
	}
	if len(only) == 0 {
		return nil, kept, nil
	}
	// The input's own slices are not given to the controller here: kpc derives as if the
	// controller started afresh (the content is the same either way).
	fresh := *c
	fresh.slices = nil
	derived, err := runEndpointSliceController(&fresh, only)
	return derived, kept, err
}
