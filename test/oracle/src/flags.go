package main

// The command line: kpc's compile flags, bound to kube-proxy's own configuration types.
//
// The effective KubeProxyConfiguration is built the way kube-proxy builds it, with kpc's one
// documented difference (flags override --config; a real kube-proxy given --config ignores
// most flags, cli.md):
//  1. --config FILE is decoded by kube-proxy's own codec (proxyconfigscheme.Codecs, which
//     applies the v1alpha1 defaults, SetDefaults_KubeProxyConfiguration, and converts to the
//     internal type); without --config, the defaulted empty v1alpha1 object is converted, as
//     cmd/kube-proxy/app newKubeProxyConfiguration does.
//  2. The flags given are applied on top, bound to the same fields as
//     cmd/kube-proxy/app/options.go AddFlags binds them (same pflag value types).
//  3. platformApplyDefaults (mode iptables, detect-local ClusterCIDR; nftables: nodePortAddresses
//     primary) and processHostnameOverrideFlag (trim, lower-case), as in options.go Complete.
//  4. Feature gates set with utilfeature.DefaultMutableFeatureGate.SetFromMap, and
//     pkg/proxy/apis/config/validation Validate.

import (
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/kube-proxy/config/v1alpha1"
	kubeproxyconfig "k8s.io/kubernetes/pkg/proxy/apis/config"
	proxyconfigscheme "k8s.io/kubernetes/pkg/proxy/apis/config/scheme"
	kubeproxyconfigv1alpha1 "k8s.io/kubernetes/pkg/proxy/apis/config/v1alpha1"
	"k8s.io/kubernetes/pkg/proxy/apis/config/validation"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"
)

// options are the oracle's own settings: what kpc takes as host facts rather than config.
type options struct {
	// kpc's --endpoints-from: auto, pods or slices (endpointslices.go derivedForCompile).
	endpointsFrom string
	files         []string
	namespace     string
	configFile    string
	outDir        string
	ipFamily      string
	nodeIPs       []string
	// kpc: "iptables supports --random-fully" (default yes), "the nfacct counters exist" (default no).
	randomFully bool
	nfacct      bool
	nftOutput   string
	// kpc's --service-cluster-ip-range: the API server's flag, which makes the cluster's default
	// ServiceCIDR ("kubernetes"); the nftables proxier gets its CIDRs as it gets a ServiceCIDR's.
	serviceClusterIPRange []string
	// raw: print the restore bytes as kube-proxy passed them (Go map order between Services),
	// not in kpc's normal form.
	raw bool
	cfg *kubeproxyconfig.KubeProxyConfiguration
}

// kpc's bool flags take `--flag`, `--flag=bool` and `--flag bool`; pflag only the first two,
// so a following bool word is joined to its flag first.
var boolFlags = map[string]bool{
	"--masquerade-all": true, "--iptables-localhost-nodeports": true, "--ipvs-strict-arp": true,
	"--conntrack-tcp-be-liberal": true, "--masquerade-random-fully": true, "--nfacct": true,
	"-R": false, "--recursive": false,
}

func isBoolWord(s string) bool {
	switch s {
	case "1", "t", "T", "true", "TRUE", "True", "0", "f", "F", "false", "FALSE", "False":
		return true
	}
	return false
}

func joinBoolArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if takes, ok := boolFlags[a]; ok && takes && i+1 < len(args) && isBoolWord(args[i+1]) {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func defaultConfig() (*kubeproxyconfig.KubeProxyConfiguration, error) {
	versioned := &v1alpha1.KubeProxyConfiguration{}
	proxyconfigscheme.Scheme.Default(versioned)
	internal, err := proxyconfigscheme.Scheme.ConvertToVersion(versioned, kubeproxyconfig.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	return internal.(*kubeproxyconfig.KubeProxyConfiguration), nil
}

func loadConfigFile(path string) (*kubeproxyconfig.KubeProxyConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--config: %v", err)
	}
	obj, gvk, err := proxyconfigscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		if !runtime.IsStrictDecodingError(err) {
			return nil, usagef("--config: failed to decode: %v", err)
		}
		// kube-proxy falls back to a lenient decoder for v1alpha1 (options.go loadConfig).
		lenient := runtime.NewScheme()
		_ = kubeproxyconfig.AddToScheme(lenient)
		_ = v1alpha1AddToScheme(lenient)
		codecs := lenientCodecs(lenient)
		obj, gvk, err = codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			return nil, usagef("--config: failed lenient decoding: %v", err)
		}
	}
	cfg, ok := obj.(*kubeproxyconfig.KubeProxyConfiguration)
	if !ok {
		return nil, usagef("--config: got unexpected config type: %v", gvk)
	}
	return cfg, nil
}

// parseCompileFlags turns kpc's compile argv into the oracle's options.
func parseCompileFlags(args []string) (*options, error) {
	args = joinBoolArgs(args)
	// --config first: the flags are applied on top of it.
	o := &options{namespace: "default", ipFamily: "ipv4", randomFully: true, nftOutput: "transaction", endpointsFrom: "auto"}
	pre := pflag.NewFlagSet("pre", pflag.ContinueOnError)
	pre.ParseErrorsWhitelist.UnknownFlags = true
	pre.SetOutput(devNull{})
	pre.StringVar(&o.configFile, "config", "", "")
	pre.BoolP("help", "h", false, "")
	_ = pre.Parse(args)
	var err error
	if o.configFile != "" {
		o.cfg, err = loadConfigFile(o.configFile)
	} else {
		o.cfg, err = defaultConfig()
	}
	if err != nil {
		return nil, err
	}
	cfg := o.cfg

	fs := pflag.NewFlagSet("compile", pflag.ContinueOnError)
	fs.SetOutput(devNull{})
	var (
		hostnameOverride, clusterCIDRs, configFile     string
		noRandomFully, noNFAcct, recursive, standalone bool
		ipValidation, nodePortRange                    string
	)
	fs.StringArrayVarP(&o.files, "filename", "f", nil, "")
	fs.BoolVarP(&recursive, "recursive", "R", false, "")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "")
	fs.StringVar(&o.endpointsFrom, "endpoints-from", "auto", "")
	fs.StringVar(&configFile, "config", "", "")
	fs.StringVarP(&o.outDir, "output", "o", "", "")
	fs.StringVar(&o.ipFamily, "ip-family", "ipv4", "")
	fs.StringArrayVar(&o.nodeIPs, "node-ip", nil, "")
	fs.BoolVar(&o.randomFully, "masquerade-random-fully", true, "")
	fs.BoolVar(&noRandomFully, "no-masquerade-random-fully", false, "")
	fs.BoolVar(&o.nfacct, "nfacct", false, "")
	fs.BoolVar(&noNFAcct, "no-nfacct", false, "")
	fs.StringVar(&o.nftOutput, "nft-output", "transaction", "")
	fs.BoolVar(&o.raw, "raw", false, "")
	// kpc's input and output-shaping flags that change nothing kube-proxy programs.
	var allowEmpty, quiet bool
	var maxInputSize string
	fs.BoolVar(&allowEmpty, "allow-empty", false, "")
	fs.BoolVarP(&quiet, "quiet", "q", false, "")
	fs.StringVar(&maxInputSize, "max-input-size", "", "")
	// The cases written for later releases name their release for kpc (issue 15); the oracle
	// is one release and refuses another.
	var kubeProxyVersion string
	fs.StringVar(&kubeProxyVersion, "kube-proxy-version", "", "")
	fs.BoolVar(&standalone, "standalone", false, "")
	fs.StringVar(&ipValidation, "ip-validation", "legacy", "")
	fs.StringVar(&nodePortRange, "service-node-port-range", "30000-32767", "")
	fs.StringSliceVar(&o.serviceClusterIPRange, "service-cluster-ip-range", nil, "")

	// Bound as cmd/kube-proxy/app/options.go AddFlags binds them.
	fs.StringVar(&hostnameOverride, "hostname-override", "", "")
	fs.Var(&cfg.Mode, "proxy-mode", "")
	fs.StringVar(&clusterCIDRs, "cluster-cidr", "", "")
	fs.Var(&cfg.DetectLocalMode, "detect-local-mode", "")
	fs.StringVar(&cfg.DetectLocal.BridgeInterface, "pod-bridge-interface", cfg.DetectLocal.BridgeInterface, "")
	fs.StringVar(&cfg.DetectLocal.InterfaceNamePrefix, "pod-interface-name-prefix", cfg.DetectLocal.InterfaceNamePrefix, "")
	fs.BoolVar(&cfg.Linux.MasqueradeAll, "masquerade-all", cfg.Linux.MasqueradeAll, "")
	if cfg.IPTables.MasqueradeBit == nil {
		cfg.IPTables.MasqueradeBit = ptr.To[int32](14)
	}
	fs.Int32Var(cfg.IPTables.MasqueradeBit, "iptables-masquerade-bit", *cfg.IPTables.MasqueradeBit, "")
	if cfg.IPTables.LocalhostNodePorts == nil {
		cfg.IPTables.LocalhostNodePorts = ptr.To(true)
	}
	fs.BoolVar(cfg.IPTables.LocalhostNodePorts, "iptables-localhost-nodeports", *cfg.IPTables.LocalhostNodePorts, "")
	fs.StringSliceVar(&cfg.NodePortAddresses, "nodeport-addresses", cfg.NodePortAddresses, "")
	fs.StringVar(&cfg.IPVS.Scheduler, "ipvs-scheduler", cfg.IPVS.Scheduler, "")
	fs.StringSliceVar(&cfg.IPVS.ExcludeCIDRs, "ipvs-exclude-cidrs", cfg.IPVS.ExcludeCIDRs, "")
	fs.BoolVar(&cfg.IPVS.StrictARP, "ipvs-strict-arp", cfg.IPVS.StrictARP, "")
	fs.DurationVar(&cfg.IPVS.TCPTimeout.Duration, "ipvs-tcp-timeout", cfg.IPVS.TCPTimeout.Duration, "")
	fs.DurationVar(&cfg.IPVS.TCPFinTimeout.Duration, "ipvs-tcpfin-timeout", cfg.IPVS.TCPFinTimeout.Duration, "")
	fs.DurationVar(&cfg.IPVS.UDPTimeout.Duration, "ipvs-udp-timeout", cfg.IPVS.UDPTimeout.Duration, "")
	fs.BoolVar(&cfg.Linux.Conntrack.TCPBeLiberal, "conntrack-tcp-be-liberal", cfg.Linux.Conntrack.TCPBeLiberal, "")
	// kube-proxy's --feature-gates replaces the map (cliflag.MapStringBool); kpc merges the
	// flag's gates over the config's, so they are parsed apart and merged below.
	flagGates := map[string]bool{}
	fs.Var(cliflag.NewMapStringBool(&flagGates), "feature-gates", "")

	if err := fs.Parse(args); err != nil {
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments: %v", fs.Args())
	}
	if o.endpointsFrom != "auto" && o.endpointsFrom != "pods" && o.endpointsFrom != "slices" {
		return nil, usagef("--endpoints-from: %q is not auto, pods or slices", o.endpointsFrom)
	}
	if kubeProxyVersion != "" && !strings.HasPrefix(strings.TrimPrefix(kubeVersion(), "v"), strings.TrimPrefix(kubeProxyVersion, "v")+".") {
		return nil, usagef("--kube-proxy-version %s: this oracle is kube-proxy %s", kubeProxyVersion, kubeVersion())
	}
	if standalone {
		return nil, usagef("--standalone: the oracle prints what kube-proxy passes to iptables-restore only")
	}
	if noRandomFully {
		o.randomFully = false
	}
	if noNFAcct {
		o.nfacct = false
	}
	if o.ipFamily != "ipv4" && o.ipFamily != "ipv6" {
		return nil, usagef("--ip-family: %q is not ipv4 or ipv6", o.ipFamily)
	}
	for _, c := range o.serviceClusterIPRange {
		if _, _, err := netutils.ParseCIDRSloppy(strings.TrimSpace(c)); err != nil {
			return nil, usagef("--service-cluster-ip-range: %q is not a CIDR", c)
		}
	}
	if fs.Changed("cluster-cidr") {
		cfg.DetectLocal.ClusterCIDRs = strings.Split(clusterCIDRs, ",")
	}
	if fs.Changed("feature-gates") {
		if cfg.FeatureGates == nil {
			cfg.FeatureGates = map[string]bool{}
		}
		for k, v := range flagGates {
			cfg.FeatureGates[k] = v
		}
	}
	// options.go Complete: platformApplyDefaults, processHostnameOverrideFlag.
	if cfg.Mode == "" {
		cfg.Mode = kubeproxyconfig.ProxyModeIPTables
	}
	if cfg.Mode == kubeproxyconfig.ProxyModeNFTables && len(cfg.NodePortAddresses) == 0 {
		cfg.NodePortAddresses = []string{kubeproxyconfig.NodePortAddressesPrimary}
	}
	if cfg.DetectLocalMode == "" {
		cfg.DetectLocalMode = kubeproxyconfig.LocalModeClusterCIDR
	}
	if fs.Changed("hostname-override") {
		h := strings.TrimSpace(hostnameOverride)
		if h == "" {
			return nil, usagef("empty hostname-override is invalid")
		}
		cfg.HostnameOverride = strings.ToLower(h)
	} else if cfg.HostnameOverride != "" {
		// nodeutil.GetHostname trims and lower-cases the config's value too.
		cfg.HostnameOverride = strings.ToLower(strings.TrimSpace(cfg.HostnameOverride))
	}
	if len(o.files) == 0 {
		return nil, usagef("no input: pass -f LIST.json")
	}
	return o, nil
}

// applyGatesAndValidate: options.go Complete's SetFromMap and Validate. It runs after the input
// was validated, so the API server's checks see the API server's default gates, not
// kube-proxy's --feature-gates.
func applyGatesAndValidate(cfg *kubeproxyconfig.KubeProxyConfiguration) error {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
		return usagef("--feature-gates: %v", err)
	}
	if errs := validation.Validate(cfg); len(errs) != 0 {
		return usagef("invalid KubeProxyConfiguration: %v", errs.ToAggregate())
	}
	return nil
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

// parseValidateFlags takes -f, -n and ignores kpc's other flags (validation does not depend on them).
func parseValidateFlags(args []string) (*options, error) {
	o := &options{namespace: "default"}
	fs := pflag.NewFlagSet("validate", pflag.ContinueOnError)
	fs.SetOutput(devNull{})
	fs.ParseErrorsWhitelist.UnknownFlags = true
	fs.StringArrayVarP(&o.files, "filename", "f", nil, "")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "")
	fs.BoolP("recursive", "R", false, "")
	if err := fs.Parse(joinBoolArgs(args)); err != nil {
		return nil, usagef("%v", err)
	}
	if len(o.files) == 0 {
		return nil, usagef("no input: pass -f LIST.json")
	}
	return o, nil
}

func v1alpha1AddToScheme(s *runtime.Scheme) error { return kubeproxyconfigv1alpha1.AddToScheme(s) }

func lenientCodecs(s *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(s, serializer.DisableStrict)
}
