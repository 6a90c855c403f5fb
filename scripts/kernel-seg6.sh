#!/bin/bash
# kernel-seg6.sh: what the kernel does on its own with packets to its seg6local SIDs (docs/security.md,
# "What the kernel still does on its own"). Namespaces kxA (sender) - kxR (router with seg6local
# routes) - kxB (IPv4 host); scapy (python3-scapy) sends 3 packets per case, kxB's IpInReceives
# says whether the inner IPv4 packet arrived. Run as root; it removes its namespaces at the end.
#   kernel-seg6.sh [enabled]  what seg6_enabled gates, per case (SEG6_ALL=1: all.seg6_enabled follows
#                             the ingress device's value)
#   kernel-seg6.sh filter     which nftables hook stops packets to a SID: input/forward or prerouting
set -e
mode=${1:-enabled}
for n in kxA kxR kxB; do ip netns del $n 2>/dev/null || true; ip netns add $n; done
ip link add a0 netns kxA type veth peer name r0 netns kxR
ip link add r1 netns kxR type veth peer name b0 netns kxB
A="ip -n kxA"; R="ip -n kxR"; B="ip -n kxB"
for x in "$A link set lo up" "$A link set a0 up" "$R link set lo up" "$R link set r0 up" "$R link set r1 up" "$B link set lo up" "$B link set b0 up"; do $x; done
$A -6 addr add fc00:9::2/64 dev a0 nodad; $A -6 route add fc00:1::/48 via fc00:9::1
$R -6 addr add fc00:9::1/64 dev r0 nodad; $R -6 addr add fc00:1::1/128 dev lo
$R addr add 198.18.9.1/24 dev r1; $B addr add 198.18.9.2/24 dev b0; $B route add default via 198.18.9.1
ip netns exec kxR sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv4.ip_forward=1
$R -6 route add fc00:1::b encap seg6local action End.DX4 nh4 198.18.9.2 dev r1
$R -6 route add fc00:1::e encap seg6local action End dev r0
sleep 2
send() { # $1 = scapy expression of the IPv6 packet
  ip netns exec kxA /usr/bin/python3 -c "
from scapy.all import *
p = Ether(dst=get_if_hwaddr('a0'))/$1/IP(src='198.18.7.7',dst='198.18.9.2')/UDP(sport=1,dport=9)/Raw(b'KX')
p[Ether].dst = '$(ip netns exec kxR cat /sys/class/net/r0/address)'
sendp(p, iface='a0', count=3, verbose=0)"
}
rx() { ip netns exec kxB nstat -az IpInReceives | awk '/IpInReceives/{print $2}'; }
if [ "$mode" = filter ]; then
  dx4="IPv6(src='fc00:9::2',dst='fc00:1::b',nh=4)"
  try() { b=$(rx); send "$dx4"; sleep 0.5; a=$(rx); echo "$1: delivered $((a-b))/3"; }
  nft() { ip netns exec kxR nft "$@"; }
  try "no filter"
  nft add table inet g
  nft add chain inet g in '{ type filter hook input priority 0; }'
  nft add chain inet g fw '{ type filter hook forward priority 0; }'
  nft add rule inet g in iifname r0 ip6 daddr fc00:1::/48 counter drop
  nft add rule inet g fw iifname r0 ip6 daddr fc00:1::/48 counter drop
  try "input and forward rules"
  nft add chain inet g pre '{ type filter hook prerouting priority -300; }'
  nft add rule inet g pre iifname r0 ip6 daddr fc00:1::/48 counter drop
  try "prerouting rule"
fi
[ "$mode" = enabled ] && for en in 0 1; do
  all=0; [ "${SEG6_ALL:-0}" = 1 ] && all=$en
  ip netns exec kxR sysctl -qw net.ipv6.conf.r0.seg6_enabled=$en net.ipv6.conf.all.seg6_enabled=$all
  for c in \
    "dx4-no-srh|IPv6(src='fc00:9::2',dst='fc00:1::b',nh=4)" \
    "dx4-srh-sl0|IPv6(src='fc00:9::2',dst='fc00:1::b')/IPv6ExtHdrSegmentRouting(addresses=['fc00:1::b'],segleft=0,nh=4)" \
    "end-srh-sl1-to-dx4|IPv6(src='fc00:9::2',dst='fc00:1::e')/IPv6ExtHdrSegmentRouting(addresses=['fc00:1::b','fc00:1::e'],segleft=1,nh=4)" \
    "local-addr-srh-sl1-to-dx4|IPv6(src='fc00:9::2',dst='fc00:1::1')/IPv6ExtHdrSegmentRouting(addresses=['fc00:1::b','fc00:1::1'],segleft=1,nh=4)" ; do
    name=${c%%|*}; pkt=${c#*|}
    b=$(rx); send "$pkt"; sleep 0.5; a=$(rx)
    echo "seg6_enabled r0=$en all=$all $name: delivered $((a-b))/3"
  done
done
for n in kxA kxR kxB; do ip netns del $n; done
