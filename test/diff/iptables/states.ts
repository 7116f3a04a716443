/**
 * Shared inputs of the test/diff/iptables suites: the node flags (the e2e lab's node-a) and another
 * component's rules (a Docker-like set) that deltas must never touch.
 */

import { CLUSTER_CIDR4, CLUSTER_CIDR6, NODE_IP4, NODE_IP6, NODE_NAME } from '../../e2e/topology.js';

/** node-a of the e2e lab, IPv4 (defaults otherwise: --random-fully on, no nfacct). */
export const NODE_ARGS: readonly string[] = ['--hostname-override', NODE_NAME, '--node-ip', NODE_IP4, '--node-ip', NODE_IP6, '--cluster-cidr', `${CLUSTER_CIDR4},${CLUSTER_CIDR6}`];

export const NODE_ARGS_V6: readonly string[] = [...NODE_ARGS, '--ip-family', 'ipv6'];

/**
 * What Docker (and a little of everything else) leaves in a node's tables, as restore text for
 * `iptables-restore --noflush`: user chains in filter and nat with jumps from the built-in
 * chains (PREROUTING, OUTPUT, POSTROUTING, FORWARD), a DNAT for a published port, LOG with a
 * quoted prefix, limit, multiport, and rules in mangle (CONNMARK, MARK) and raw (CT --notrack),
 * tables kpc never writes. Appended after kube-proxy's jumps, as a later-started Docker would.
 * The DOCKER DNAT sends node port 30999 (nothing of kube-proxy's) to pod a3 (10.244.1.13:8080),
 * so traffic tests can show the foreign rules still work.
 */
export const DOCKER_LIKE = `*filter
:DOCKER - [0:0]
:DOCKER-USER - [0:0]
:DOCKER-ISOLATION-STAGE-1 - [0:0]
:DOCKER-ISOLATION-STAGE-2 - [0:0]
-A FORWARD -j DOCKER-USER
-A FORWARD -j DOCKER-ISOLATION-STAGE-1
-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -o docker0 -j DOCKER
-A FORWARD -i docker0 ! -o docker0 -j ACCEPT
-A FORWARD -i docker0 -o docker0 -j ACCEPT
-A DOCKER -d 172.17.0.2/32 ! -i docker0 -o docker0 -p tcp -m tcp --dport 80 -j ACCEPT
-A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2
-A DOCKER-ISOLATION-STAGE-1 -j RETURN
-A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP
-A DOCKER-ISOLATION-STAGE-2 -j RETURN
-A DOCKER-USER -p tcp -m multiport --dports 22,2375:2376 -m limit --limit 5/min -j LOG --log-prefix "docker-user: "
-A DOCKER-USER -j RETURN
COMMIT
*nat
:DOCKER - [0:0]
-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER
-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
-A POSTROUTING -s 172.17.0.2/32 -d 172.17.0.2/32 -p tcp -m tcp --dport 80 -j MASQUERADE
-A DOCKER -i docker0 -j RETURN
-A DOCKER ! -i docker0 -p tcp -m tcp --dport 30999 -j DNAT --to-destination 10.244.1.13:8080
COMMIT
*mangle
-A PREROUTING -m mark --mark 0x1/0x1 -j CONNMARK --save-mark
-A OUTPUT -p udp -m udp --dport 53 -j MARK --set-xmark 0x2/0xffffffff
COMMIT
*raw
-A PREROUTING -p udp -m udp --dport 4789 -j CT --notrack
COMMIT
`;
