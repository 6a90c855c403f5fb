#!/bin/bash
# kernel-seg6local-filter.sh: which nftables hook stops tenant packets to a kernel seg6local SID
# (docs/security.md). seg6local routes redirect the packet at route lookup, before the input and
# forward hooks (unless net.netfilter.nf_hooks_lwtunnel=1): only prerouting (or netdev ingress, or an
# ip -6 rule) sees it. Namespaces kxA - kxR (End.DX4 SID fc00:1::b) - kxB; needs python3-scapy, nftables.
set -e
for n in kxA kxR kxB; do ip netns del $n 2>/dev/null || true; ip netns add $n; done
ip link add a0 netns kxA type veth peer name r0 netns kxR
ip link add r1 netns kxR type veth peer name b0 netns kxB
A="ip -n kxA"; R="ip -n kxR"; B="ip -n kxB"
for x in "$A link set lo up" "$A link set a0 up" "$R link set lo up" "$R link set r0 up" "$R link set r1 up" "$B link set lo up" "$B link set b0 up"; do $x; done
$A -6 addr add fc00:9::2/64 dev a0 nodad; $R -6 addr add fc00:9::1/64 dev r0 nodad
$R addr add 198.18.9.1/24 dev r1; $B addr add 198.18.9.2/24 dev b0
ip netns exec kxR sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv4.ip_forward=1
$R -6 route add fc00:1::b encap seg6local action End.DX4 nh4 198.18.9.2 dev r1
sleep 2
MAC=$(ip netns exec kxR cat /sys/class/net/r0/address)
send() { ip netns exec kxA /usr/bin/python3 -c "
from scapy.all import *
sendp(Ether(dst='$MAC')/IPv6(src='fc00:9::2',dst='fc00:1::b',nh=4)/IP(src='198.18.7.7',dst='198.18.9.2')/UDP(sport=1,dport=9), iface='a0', count=3, verbose=0)"; }
rx() { ip netns exec kxB nstat -az IpInReceives | awk '/IpInReceives/{print $2}'; }
try() { b=$(rx); send; sleep 0.5; a=$(rx); echo "$1: delivered $((a-b))/3"; }
try "no filter"
ip netns exec kxR nft add table inet g
ip netns exec kxR nft add chain inet g in '{ type filter hook input priority 0; }'
ip netns exec kxR nft add chain inet g fw '{ type filter hook forward priority 0; }'
ip netns exec kxR nft add rule inet g in iifname r0 ip6 daddr fc00:1::/48 counter drop
ip netns exec kxR nft add rule inet g fw iifname r0 ip6 daddr fc00:1::/48 counter drop
try "input+forward rules"
ip netns exec kxR nft add chain inet g pre '{ type filter hook prerouting priority -300; }'
ip netns exec kxR nft add rule inet g pre iifname r0 ip6 daddr fc00:1::/48 counter drop
try "prerouting rule"
for n in kxA kxR kxB; do ip netns del $n; done
