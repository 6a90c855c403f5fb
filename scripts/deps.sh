#!/usr/bin/env bash
# deps.sh: installs what building and testing seg6x needs, only when something is missing.
# Usage: scripts/deps.sh [fixtures|bench]   (fixtures: + scapy to regenerate packet fixtures;
#                                          bench: + matplotlib for the benchmark plots)
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have clang || need+=(clang)
have llvm-strip || need+=(llvm)
[ -f /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev)
[ -f /usr/include/linux/bpf.h ] || need+=(linux-libc-dev)
[ -d /usr/include/x86_64-linux-gnu/asm ] || [ "$(uname -m)" != x86_64 ] || need+=(linux-libc-dev)
have ip || need+=(iproute2)
have ethtool || need+=(ethtool)
have ping || need+=(iputils-ping)
have iperf3 || need+=(iperf3)
have sysctl || need+=(procps)
# BGP route reflectors of the lab and its tests (tools/lab/rr.go): FRR (zebra, bgpd, vtysh) and gobgpd
# (gobgpd and the gobgp CLI); only started in lab namespaces, never configured on the host.
[ -x /usr/lib/frr/bgpd ] && [ -x /usr/lib/frr/zebra ] && have vtysh || need+=(frr)
have gobgpd && have gobgp || need+=(gobgpd)
# tshark reads back the pcapng files internal/pcapng writes (its tests check the decoded fields).
have tshark || need+=(tshark)
# ExaBGP 5, the BGP peer of test/interop that shares no code with GoBGP: from PyPI into a venv of its
# own, where test/interop/exabgp.go looks for it. Debian's python3 makes a venv only with python3-venv.
exabgp_venv=/opt/seg6x-test/exabgp
exabgp_ok() {
	local v
	v=$("$exabgp_venv/bin/exabgp" version 2>/dev/null) && [[ "$v" == "ExaBGP : 5."* ]]
}
if ! exabgp_ok; then
	[ -x /usr/bin/python3 ] || need+=(python3)
	/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
fi
if [ "${1:-}" = fixtures ]; then
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || need+=(python3-scapy)
fi
if [ "${1:-}" = bench ]; then
	/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
fi

if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: missing ${need[*]}; run as root (or: sudo apt-get install ${need[*]})" >&2
		exit 1
	fi
	echo "deps.sh: installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# wireshark-common asks whether non-root users may capture: no (no setuid dumpcap).
	if [[ " ${need[*]} " == *" tshark "* ]]; then
		echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
	fi
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! exabgp_ok; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: ExaBGP 5 is missing in $exabgp_venv; run as root" >&2
		exit 1
	fi
	echo "deps.sh: installing ExaBGP 5 (PyPI) into $exabgp_venv"
	rm -rf "$exabgp_venv"
	/usr/bin/python3 -m venv "$exabgp_venv"
	"$exabgp_venv/bin/pip" install -q --disable-pip-version-check 'exabgp>=5,<6'
	exabgp_ok || { echo "deps.sh: ExaBGP 5 did not install into $exabgp_venv" >&2; exit 1; }
fi

if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "deps.sh: Go is not installed (need Go >= 1.24 on PATH or in /usr/local/go)" >&2
	exit 1
fi
