// kpc-oracle: kube-proxy's own code, built per release, as a test oracle for kpc.
//
//	kpc-oracle-vX compile [kpc compile flags] -f LIST.json [--config FILE] [-o DIR]
//	kpc-oracle-vX validate -f LIST.json
//	kpc-oracle-vX gates
//	kpc-oracle-vX endpointslices -f LIST.json
//	kpc-oracle-vX nft-load [--family ip|ip6] FILE
//	kpc-oracle-vX version
//
// compile runs the release's real iptables/ipvs proxier (see proxier.go) on the objects of a
// `kind: List` JSON and prints what kube-proxy programs on its first full sync, in kpc's output
// form. validate runs the API server's validation on each object. endpointslices runs the
// EndpointSlice controller on the input's Services, Pods and Nodes and prints the slices it
// writes (endpointslices.go). nft-load loads an nft text into a throwaway network namespace
// and prints the table read back (nftables.go; the runner reads kpc's output with it). See
// test/oracle/README.md.
//
// Exit codes follow kpc's: 0 ok, 2 bad input or usage, 3 internal error; 4 = the kernel refused
// what the proxier wrote (the output is still printed).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/klog/v2"
)

const (
	exitOK       = 0
	exitBadInput = 2
	exitInternal = 3
	exitKernel   = 4
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if os.Getenv("KPC_ORACLE_DEBUG") == "" {
		// kube-proxy's info logs; KPC_ORACLE_DEBUG=1 keeps them (and prints every restore).
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: kpc-oracle compile|validate|endpointslices|nft-load|gates|version [flags]")
		return exitBadInput
	}
	var err error
	code := exitOK
	switch args[0] {
	case "version":
		fmt.Printf("kpc-oracle kube-proxy %s\n", kubeVersion())
		return exitOK
	case "gates":
		err = runGates()
	case "compile":
		code, err = runCompile(args[1:])
	case "validate":
		code, err = runValidate(args[1:])
	case "endpointslices":
		code, err = runEndpointSlices(args[1:])
	case "nft-load":
		code, err = runNFTLoad(args[1:])
	default:
		err = usagef("unknown command %q (compile, validate, endpointslices, nft-load, gates, version)", args[0])
	}
	if err != nil {
		var ue usageError
		var ie inputError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(os.Stderr, "error: %s\n", ue.msg)
			return exitBadInput
		case errors.As(err, &ie):
			for _, m := range ie.msgs {
				fmt.Fprintf(os.Stderr, "%s\n", m)
			}
			fmt.Fprintf(os.Stderr, "error: %d problem(s) in the input\n", len(ie.msgs))
			return exitBadInput
		default:
			fmt.Fprintf(os.Stderr, "internal error: %v\n", err)
			return exitInternal
		}
	}
	return code
}
