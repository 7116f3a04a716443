package main

import "runtime/debug"

// kubeVersion: the k8s.io/kubernetes module this binary was built from.
func kubeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return d.Version
			}
		}
	}
	return "unknown"
}
