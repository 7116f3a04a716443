package main

import (
	"encoding/json"
	"os"
	"sort"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
)

// The gates kube-proxy's binary knows: pkg/features registers Kubernetes' own (and the
// client-go and zpages ones) in its init; cmd/kube-proxy/app/server.go's init adds the metrics
// and logging gates, as here.
func init() {
	utilruntime.Must(metricsfeatures.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

type gateSpec struct {
	Name          string   `json:"name"`
	Default       bool     `json:"default"`
	LockToDefault bool     `json:"lockToDefault"`
	PreRelease    string   `json:"preRelease"`
	DependsOn     []string `json:"dependsOn,omitempty"`
}

// runGates prints every known gate as this release's kube-proxy sees it (the spec at the
// binary's own version), sorted by name: the data kpc's src/releases/feature-gates.ts holds.
func runGates() error {
	gate := utilfeature.DefaultMutableFeatureGate
	known := gate.GetAll()
	var deps map[featuregate.Feature][]featuregate.Feature
	// Dependencies between gates exist from component-base v0.35 on.
	if d, ok := any(gate).(interface {
		Dependencies() map[featuregate.Feature][]featuregate.Feature
	}); ok {
		deps = d.Dependencies()
	}
	out := make([]gateSpec, 0, len(known))
	// GetAll leaves out gates not yet available at this version (PreAlpha); SetFromMap still
	// knows them, and refuses to set them.
	for name := range gate.GetAllVersioned() {
		if _, ok := known[name]; !ok {
			out = append(out, gateSpec{Name: string(name), PreRelease: string(featuregate.PreAlpha)})
		}
	}
	for name, spec := range known {
		g := gateSpec{Name: string(name), Default: spec.Default, LockToDefault: spec.LockToDefault, PreRelease: string(spec.PreRelease)}
		for _, d := range deps[name] {
			g.DependsOn = append(g.DependsOn, string(d))
		}
		sort.Strings(g.DependsOn)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
