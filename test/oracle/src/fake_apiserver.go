package main

// What the API server does to an EndpointSlice write that client-go's fake clientset does not,
// for the controllers the oracle runs (the EndpointSlice controller, endpointslices.go; the
// mirroring controller, mirror.go):
//   - metadata.generateName: a created slice is named generateName + a counter (the API server
//     appends 5 random characters; nothing compares names);
//   - metadata.uid and generation: a created slice gets a UID (rest.BeforeCreate) and
//     generation 1 (the EndpointSlice strategy's PrepareForCreate); an update raises the
//     generation (PrepareForUpdate; as the controller's own tests do, reconciler_test.go
//     newClientset, every update counts). Both controllers' EndpointSliceTracker keys slices by
//     UID and compares generations: without them it cannot tell that its informer has not yet
//     seen the slices it just wrote, and a second sync in that window writes them again.

import (
	"fmt"
	"sync/atomic"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func actLikeAPIServerForEndpointSlices(client *fake.Clientset) {
	var counter atomic.Int64
	client.PrependReactor("create", "endpointslices", func(action k8stesting.Action) (bool, runtime.Object, error) {
		slice, ok := action.(k8stesting.CreateAction).GetObject().(*discoveryv1.EndpointSlice)
		if !ok {
			return false, nil, nil
		}
		n := counter.Add(1)
		if slice.Name == "" && slice.GenerateName != "" {
			slice.Name = fmt.Sprintf("%s%05d", slice.GenerateName, n)
		}
		if slice.UID == "" {
			slice.UID = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", n))
		}
		slice.Generation = 1
		return false, nil, nil
	})
	client.PrependReactor("update", "endpointslices", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if slice, ok := action.(k8stesting.UpdateAction).GetObject().(*discoveryv1.EndpointSlice); ok {
			slice.Generation++
		}
		return false, nil, nil
	})
}
