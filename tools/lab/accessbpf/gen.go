// Package accessbpf holds the lab's 802.1Q access-port program (tools/bpf/access.bpf.c: a tc program on a
// lab host's veth that pushes and pops its VLAN tag and counts what it refuses), compiled by bpf2go.
package accessbpf

// gen.go: the bpf2go directive; the generated files (access_bpfel.*) sit beside it.

//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" Access ../../bpf/access.bpf.c -- -I../../../bpf -O2 -g -Wall -Werror
