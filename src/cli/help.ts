/** The help texts more than one command shows. */

export const EXAMPLES = `
Examples:
  # The rules kube-proxy would write on node-a, from a directory of manifests
  kpc compile -f manifests/ -R --hostname-override node-a --cluster-cidr 10.244.0.0/16

  # From a live cluster's objects, into a file (written atomically)
  kubectl get svc,endpointslices,nodes -A -o yaml | kpc compile -f - --hostname-override node-a -o rules.txt

  # A self-contained ruleset for a fresh network namespace
  kpc compile -f manifests/ --standalone --hostname-override node-a | ip netns exec lab iptables-restore

  # Only what changed since the rules a node has now, for iptables-restore --noflush
  iptables-save > node.txt
  kpc compile -f manifests/ --hostname-override node-a --previous node.txt | iptables-restore --noflush

  # What changed, per Service port (exit 1 when something did)
  kpc diff -f manifests/ --hostname-override node-a --previous node.txt

  # Check manifests the way the API server would
  kpc validate -f manifests/ -R
`;

/** How --previous / --golden work in ipvs mode (compile, diff and check help). */
export const IPVS_INCREMENTAL_HELP = `
IPVS mode (--proxy-mode ipvs) with --previous PATH (diff, compile) or --golden PATH (check):
  PATH is a bundle directory (kpc compile -o DIR: ipvs.rules, ipset.rules, iptables.rules,
  kube-ipvs0.addrs), the apply.sh kpc prints without -o, or a node's state captured as
    ipvsadm-save -n > DIR/ipvs.rules; ipset save > DIR/ipset.rules
    iptables-save > DIR/iptables.rules; ip -o addr show dev kube-ipvs0 > DIR/kube-ipvs0.addrs
  compile --previous writes a DELTA bundle (-o DIR2, or apply.sh with the parts inline):
    ipvs.rules        only -A/-E/-D (virtual) and -a/-e/-d (real server) lines, for ipvsadm -R
    ipset.rules       create/add/del (-exist) and destroy lines, for ipset restore
    iptables.rules    the changed IPVS-mode chains, whole, for iptables-restore --noflush
    kube-ipvs0.addrs  the full wanted address list; apply.sh adds and removes the difference
    apply.sh          applies them in a safe order (new things first, removals last)
  A removed TCP real server is quiesced (-e ... -w 0: no new connections, existing ones
  drain), and deleted by the next delta computed from a state that has it at weight 0 (the
  node's dumps), as kube-proxy's graceful termination deletes it once its connections are
  gone; --ipvs-removed-real-servers delete removes it at once. UDP and SCTP real servers are
  deleted at once, as kube-proxy does. --full writes every wanted server, set entry, chain and
  address, plus the deletions.
`;
