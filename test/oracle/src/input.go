package main

// Input: a `kind: List` JSON of Services, EndpointSlices, Endpoints, Nodes, Pods and ServiceCIDRs
// (networking.k8s.io/v1; read by the nftables proxier only), read as the API
// server would store them: decoded into the real k8s.io/api types, defaulted with the
// generated SetObjectDefaults_* (registered by pkg/apis/core/install and
// pkg/apis/discovery/install), converted to the internal types (where validation runs and
// where e.g. Node spec.podCIDR/podCIDRs are reconciled) and back to v1, which is what a
// client such as kube-proxy then reads.

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/discovery"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	discoveryvalidation "k8s.io/kubernetes/pkg/apis/discovery/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
)

type inputError struct{ msgs []string }

func (e inputError) Error() string { return fmt.Sprintf("%d problem(s) in the input", len(e.msgs)) }

// object is one item of the list, as stored (v1, defaulted) and as validated (internal).
type object struct {
	index     int
	kind      string
	namespace string
	name      string
	stored    runtime.Object
	errs      field.ErrorList
	decodeErr error
}

type cluster struct {
	services  []*corev1.Service
	slices    []*discoveryv1.EndpointSlice
	endpoints []*corev1.Endpoints
	nodes     []*corev1.Node
	pods      []*corev1.Pod
	// ServiceCIDRs: kube-proxy's ServiceCIDR informer (cmd/kube-proxy/app/server.go, with
	// MultiCIDRServiceAllocator, GA) hands the union of their spec.cidrs to the proxier.
	serviceCIDRs []*networkingv1.ServiceCIDR
	skipped      []string
}

func readList(files []string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, usagef("-f %s: %v", f, err)
		}
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, usagef("-f %s: not JSON: %v", f, err)
		}
		if list.Kind != "List" && list.Kind != "" && list.Items == nil {
			items = append(items, json.RawMessage(data))
			continue
		}
		items = append(items, list.Items...)
	}
	return items, nil
}

// decodeObjects decodes, defaults and validates every item.
func decodeObjects(items []json.RawMessage, namespace string) []*object {
	deser := legacyscheme.Codecs.UniversalDeserializer()
	out := make([]*object, 0, len(items))
	for i, raw := range items {
		o := &object{index: i}
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(raw, &meta)
		o.kind, o.name, o.namespace = meta.Kind, meta.Metadata.Name, meta.Metadata.Namespace
		switch o.kind {
		case "Service", "EndpointSlice", "Endpoints", "Node", "Pod", "ServiceCIDR":
		default:
			out = append(out, o)
			continue
		}
		obj, _, err := deser.Decode(raw, nil, nil)
		if err != nil {
			o.decodeErr = err
			out = append(out, o)
			continue
		}
		legacyscheme.Scheme.Default(obj)
		var internal runtime.Object
		switch v := obj.(type) {
		case *corev1.Service:
			if v.Namespace == "" {
				v.Namespace = namespace
			}
			internal = &core.Service{}
		case *corev1.Endpoints:
			if v.Namespace == "" {
				v.Namespace = namespace
			}
			internal = &core.Endpoints{}
		case *discoveryv1.EndpointSlice:
			if v.Namespace == "" {
				v.Namespace = namespace
			}
			internal = &discovery.EndpointSlice{}
		case *corev1.Node:
			internal = &core.Node{}
		case *networkingv1.ServiceCIDR:
			internal = &networking.ServiceCIDR{}
		case *corev1.Pod:
			if v.Namespace == "" {
				v.Namespace = namespace
			}
			internal = &core.Pod{}
		default:
			o.decodeErr = fmt.Errorf("unexpected type %T (apiVersion?)", obj)
			out = append(out, o)
			continue
		}
		if err := legacyscheme.Scheme.Convert(obj, internal, nil); err != nil {
			o.decodeErr = err
			out = append(out, o)
			continue
		}
		switch v := internal.(type) {
		case *core.Service:
			// The registry's BeginCreate runs before the strategy's Validate and, when it
			// fails, is the whole answer (apiserver generic registry Store.Create).
			if o.errs = registryPrepareServiceCreate(v); len(o.errs) == 0 {
				o.errs = dropAllocatedRequired(corevalidation.ValidateServiceCreate(v))
			}
			// A create drops the status (svcStrategy.PrepareForCreate); a Service read back
			// with one got it through the status subresource: ValidateServiceStatusUpdate.
			if len(o.errs) == 0 && !reflect.DeepEqual(v.Status, core.ServiceStatus{}) {
				updated := v.DeepCopy()
				if updated.ResourceVersion == "" {
					updated.ResourceVersion = "1" // the stored object's; an update must name one
				}
				created := updated.DeepCopy()
				created.Status = core.ServiceStatus{}
				o.errs = corevalidation.ValidateServiceStatusUpdate(updated, created)
			}
			o.stored = &corev1.Service{}
		case *core.Endpoints:
			o.errs = corevalidation.ValidateEndpointsCreate(v)
			o.stored = &corev1.Endpoints{}
		case *discovery.EndpointSlice:
			o.errs = discoveryvalidation.ValidateEndpointSliceCreate(v)
			o.stored = &discoveryv1.EndpointSlice{}
		case *core.Node:
			o.errs = corevalidation.ValidateNode(v)
			o.stored = &corev1.Node{}
		case *networking.ServiceCIDR:
			o.errs = networkingvalidation.ValidateServiceCIDR(v)
			o.stored = &networkingv1.ServiceCIDR{}
		case *core.Pod:
			// podStrategy.Validate; a Pod read back with a status got it through the status
			// subresource (podStatusStrategy.ValidateUpdate), against the created Pod whose
			// status PrepareForCreate reset (the QoS class is computed then; kept here).
			opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&v.Spec, nil, &v.ObjectMeta, nil)
			opts.ResourceIsPod = true
			if o.errs = corevalidation.ValidatePodCreate(v, opts); len(o.errs) == 0 && !reflect.DeepEqual(v.Status, core.PodStatus{}) {
				updated := v.DeepCopy()
				if updated.ResourceVersion == "" {
					updated.ResourceVersion = "1"
				}
				created := updated.DeepCopy()
				created.Status = core.PodStatus{Phase: core.PodPending, QOSClass: updated.Status.QOSClass}
				sopts := podutil.GetValidationOptionsFromPodSpecAndMeta(&updated.Spec, &created.Spec, &updated.ObjectMeta, &created.ObjectMeta)
				sopts.ResourceIsPod = true
				o.errs = corevalidation.ValidatePodStatusUpdate(updated, created, sopts)
			}
			o.stored = &corev1.Pod{}
		}
		if err := legacyscheme.Scheme.Convert(internal, o.stored, nil); err != nil {
			o.decodeErr = err
		}
		out = append(out, o)
	}
	return out
}

func describe(o *object) string {
	if o.namespace != "" {
		return fmt.Sprintf("%s %s/%s", o.kind, o.namespace, o.name)
	}
	return fmt.Sprintf("%s %s", o.kind, o.name)
}

// loadCluster reads the input for compile: every object must be valid, as kpc requires.
func loadCluster(files []string, namespace string) (*cluster, error) {
	items, err := readList(files)
	if err != nil {
		return nil, err
	}
	c := &cluster{}
	var msgs []string
	for _, o := range decodeObjects(items, namespace) {
		if o.decodeErr != nil {
			msgs = append(msgs, fmt.Sprintf("item %d: %s: %v", o.index, describe(o), o.decodeErr))
			continue
		}
		for _, e := range o.errs {
			msgs = append(msgs, fmt.Sprintf("item %d: %s: %s", o.index, describe(o), e.Error()))
		}
		if len(o.errs) > 0 {
			continue
		}
		switch v := o.stored.(type) {
		case *corev1.Service:
			c.services = append(c.services, v)
		case *corev1.Endpoints:
			c.endpoints = append(c.endpoints, v)
		case *discoveryv1.EndpointSlice:
			c.slices = append(c.slices, v)
		case *corev1.Node:
			c.nodes = append(c.nodes, v)
		case *corev1.Pod:
			c.pods = append(c.pods, v)
		case *networkingv1.ServiceCIDR:
			c.serviceCIDRs = append(c.serviceCIDRs, v)
		case nil:
			c.skipped = append(c.skipped, describe(o))
		}
	}
	if len(msgs) > 0 {
		return nil, inputError{msgs}
	}
	sort.SliceStable(c.services, func(i, j int) bool {
		return c.services[i].Namespace+"/"+c.services[i].Name < c.services[j].Namespace+"/"+c.services[j].Name
	})
	return c, nil
}

// runValidate prints one JSON line per object: its verdict and the API server's messages.
func runValidate(args []string) (int, error) {
	o, err := parseValidateFlags(args)
	if err != nil {
		return exitBadInput, err
	}
	items, err := readList(o.files)
	if err != nil {
		return exitBadInput, err
	}
	type fieldErr struct {
		Field    string `json:"field"`
		Type     string `json:"type"`
		BadValue string `json:"badValue,omitempty"`
		Detail   string `json:"detail,omitempty"`
		Error    string `json:"error"`
	}
	type verdict struct {
		Index     int        `json:"index"`
		Kind      string     `json:"kind"`
		Namespace string     `json:"namespace,omitempty"`
		Name      string     `json:"name"`
		Valid     bool       `json:"valid"`
		Skipped   bool       `json:"skipped,omitempty"`
		Decode    string     `json:"decodeError,omitempty"`
		Errors    []fieldErr `json:"errors"`
	}
	enc := json.NewEncoder(os.Stdout)
	code := exitOK
	for _, obj := range decodeObjects(items, o.namespace) {
		v := verdict{Index: obj.index, Kind: obj.kind, Namespace: obj.namespace, Name: obj.name, Errors: []fieldErr{}}
		if obj.stored == nil && obj.decodeErr == nil {
			v.Skipped, v.Valid = true, true
		} else if obj.decodeErr != nil {
			v.Decode = obj.decodeErr.Error()
		} else {
			v.Valid = len(obj.errs) == 0
			if m, ok := obj.stored.(interface{ GetNamespace() string }); ok {
				v.Namespace = m.GetNamespace()
			}
			for _, e := range obj.errs {
				fe := fieldErr{Field: e.Field, Type: string(e.Type), Detail: e.Detail, Error: e.Error()}
				if e.BadValue != nil {
					fe.BadValue = fmt.Sprintf("%v", e.BadValue)
				}
				v.Errors = append(v.Errors, fe)
			}
		}
		if !v.Valid {
			code = exitBadInput
		}
		if err := enc.Encode(v); err != nil {
			return exitInternal, err
		}
	}
	return code, nil
}
