// Package gsoprobe holds a lab tc observer (tools/bpf/gsoprobe.bpf.c) that counts what skbs look like to
// GSO/GRO at one hook (aggregates, gso_size/segs/type, skb->encapsulation, tunnel GSO bits), compiled
// by bpf2go, and a small API to attach it with tcx and read its counters.
package gsoprobe

// gen.go: the bpf2go directive; the generated files (gsoprobe_bpfel.*) sit beside it.

//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" -type probe_stats Gsoprobe ../../bpf/gsoprobe.bpf.c -- -I../../../bpf -O2 -g -Wall -Werror
