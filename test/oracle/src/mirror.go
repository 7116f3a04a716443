package main

// Legacy Endpoints: what the cluster turns them into. The real EndpointSlice mirroring
// controller (pkg/controller/endpointslicemirroring, with its default 1000 endpoints per
// subset) runs against client-go's fake clientset holding the input's Services, Endpoints and
// EndpointSlices; the slices it creates are handed to kube-proxy like the others. What the fake
// clientset does not do (names from generateName, UIDs, generations) is done as the API server
// would (fake_apiserver.go): without UIDs the controller's tracker could not see that its
// informer is behind its own writes.

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/controller/endpointslicemirroring"
)

func mirrorEndpoints(c *cluster) ([]*discoveryv1.EndpointSlice, error) {
	if len(c.endpoints) == 0 {
		return nil, nil
	}
	var objs []runtime.Object
	for _, s := range c.services {
		objs = append(objs, s.DeepCopy())
	}
	for _, e := range c.endpoints {
		objs = append(objs, e.DeepCopy())
	}
	for _, s := range c.slices {
		objs = append(objs, s.DeepCopy())
	}
	client := fake.NewSimpleClientset(objs...)
	actLikeAPIServerForEndpointSlices(client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl := endpointslicemirroring.NewController(ctx,
		factory.Core().V1().Endpoints(), factory.Discovery().V1().EndpointSlices(), factory.Core().V1().Services(),
		1000, client, 0)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go ctrl.Run(ctx, 1)

	// Done when every Endpoints object the controller will mirror has slices and the output has
	// not changed for a while (the wait condition only; what is printed is what the controller
	// made). Mirrored: the Service exists without a selector, no skip-mirror label, no
	// leader-election annotation, at least one address (controller and utils.go).
	waiting := map[string]bool{}
	services := map[string]*corev1.Service{}
	for _, s := range c.services {
		services[s.Namespace+"/"+s.Name] = s
	}
	for _, e := range c.endpoints {
		key := e.Namespace + "/" + e.Name
		svc := services[key]
		addrs := 0
		for _, ss := range e.Subsets {
			addrs += len(ss.Addresses) + len(ss.NotReadyAddresses)
		}
		_, leader := e.Annotations["control-plane.alpha.kubernetes.io/leader"]
		if svc != nil && len(svc.Spec.Selector) == 0 && e.Labels["endpointslice.kubernetes.io/skip-mirror"] != "true" && !leader && addrs > 0 {
			waiting[key] = true
		}
	}
	given := map[string]bool{}
	for _, s := range c.slices {
		given[s.Namespace+"/"+s.Name] = true
	}
	var last string
	stableSince := time.Now()
	deadline := time.Now().Add(20 * time.Second)
	var result []*discoveryv1.EndpointSlice
	for time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		list, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		result = result[:0]
		sig := ""
		seen := map[string]bool{}
		for i := range list.Items {
			s := &list.Items[i]
			if given[s.Namespace+"/"+s.Name] {
				continue
			}
			seen[s.Namespace+"/"+s.Labels[discoveryv1.LabelServiceName]] = true
			result = append(result, s.DeepCopy())
			sig += fmt.Sprintf("%s/%s@%s;", s.Namespace, s.Name, s.ResourceVersion)
			for _, ep := range s.Endpoints {
				sig += fmt.Sprint(ep.Addresses, ",")
			}
		}
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
			return result, nil
		}
	}
	return nil, fmt.Errorf("the EndpointSlice mirroring controller did not mirror every Endpoints object in 20 s")
}
