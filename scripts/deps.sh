#!/usr/bin/env bash
# deps.sh: installs what one use of the tree needs, only when something is missing (Debian, as root).
# Usage: scripts/deps.sh [WHAT...]   (default: build)
#   build     make build / make generate: clang, llvm, libbpf-dev, the kernel's UAPI headers (with this
#             architecture's asm/ directory, /usr/include/<multiarch>), Go
#   unit      make test-unit: tshark (internal/pcapng's test reads its files back), gcc (-race needs
#             cgo), Go; no clang: the BPF objects and their bindings are committed. Needs no root
#             when nothing is missing.
#   lint      make lint: clang-format, Go (staticcheck comes through the Go toolchain: go.mod's tool)
#   demo      make demo*: build, and what the labs run: ip, ethtool, ping, sysctl, FRR and gobgpd
#             (the BGP lab's route reflectors)
#   test      make test: build, unit, demo, iperf3 and ExaBGP 5 (test/interop's peer)
#   bench     make bench: demo, iperf3 (seg6x-bench tcp) and matplotlib (the plots)
#   fixtures  make fixtures: python3 and scapy
set -euo pipefail

[ $# -gt 0 ] || set -- build
build=0 unit=0 lint=0 demo=0 exabgp=0 iperf=0 scapy=0 plots=0
for what in "$@"; do
	case "$what" in
	build) build=1 ;;
	unit) unit=1 ;;
	lint) lint=1 ;;
	demo) build=1 demo=1 ;;
	test) build=1 unit=1 demo=1 iperf=1 exabgp=1 ;;
	bench) build=1 demo=1 iperf=1 plots=1 ;;
	fixtures) scapy=1 ;;
	*)
		echo "deps.sh: unknown $what (build, unit, lint, demo, test, bench, fixtures)" >&2
		exit 2
		;;
	esac
done

need=()
have() { command -v "$1" >/dev/null 2>&1; }
# The directory of this architecture's kernel headers (asm/...): /usr/include/x86_64-linux-gnu on
# amd64, /usr/include/aarch64-linux-gnu on arm64. The Makefile passes the same to clang (BPF_CFLAGS).
multiarch() {
	dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo "$(uname -m)-linux-gnu"
}
if [ $build = 1 ]; then
	have clang || need+=(clang)
	have llvm-strip || need+=(llvm)
	[ -f /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev)
	[ -f /usr/include/linux/bpf.h ] && [ -d "/usr/include/$(multiarch)/asm" ] || need+=(linux-libc-dev)
fi
if [ $unit = 1 ]; then
	# tshark reads back the pcapng files internal/pcapng writes (its tests check the decoded fields).
	have tshark || need+=(tshark)
	# The race detector needs cgo: gcc and the C library's headers.
	have gcc || need+=(gcc)
	[ -f /usr/include/stdlib.h ] || need+=(libc6-dev)
fi
if [ $lint = 1 ]; then
	have clang-format || need+=(clang-format)
fi
if [ $demo = 1 ]; then
	have ip || need+=(iproute2)
	have ethtool || need+=(ethtool)
	have ping || need+=(iputils-ping)
	have sysctl || need+=(procps)
	# BGP route reflectors of the lab and its tests (tools/lab/rr.go): FRR (zebra, bgpd, vtysh) and
	# gobgpd (gobgpd and the gobgp CLI); only started in lab namespaces, never configured on the host.
	[ -x /usr/lib/frr/bgpd ] && [ -x /usr/lib/frr/zebra ] && have vtysh || need+=(frr)
	have gobgpd && have gobgp || need+=(gobgpd)
fi
if [ $iperf = 1 ]; then
	have iperf3 || need+=(iperf3)
fi
# ExaBGP 5, the BGP peer of test/interop that shares no code with GoBGP: from PyPI into a venv of its
# own, where test/interop/exabgp.go looks for it. Debian's python3 makes a venv only with python3-venv.
exabgp_venv=/opt/seg6x-test/exabgp
exabgp_ok() {
	local v
	v=$("$exabgp_venv/bin/exabgp" version 2>/dev/null) && [[ "$v" == "ExaBGP : 5."* ]]
}
if [ $exabgp = 1 ] && ! exabgp_ok; then
	[ -x /usr/bin/python3 ] || need+=(python3)
	/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
fi
if [ $scapy = 1 ]; then
	[ -x /usr/bin/python3 ] || need+=(python3)
	/usr/bin/python3 -c 'import scapy' 2>/dev/null || need+=(python3-scapy)
fi
if [ $plots = 1 ]; then
	[ -x /usr/bin/python3 ] || need+=(python3)
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
if [ $exabgp = 1 ] && ! exabgp_ok; then
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

if [ $build = 1 ] || [ $unit = 1 ] || [ $lint = 1 ]; then
	if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
		echo "deps.sh: Go is not installed (need the Go of go.mod on PATH or in /usr/local/go)" >&2
		exit 1
	fi
fi
