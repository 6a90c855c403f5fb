// Package dataplane loads the seg6x XDP programs, pins their maps, and attaches them to interfaces.
// gen.go holds the bpf2go directive of the product program; the generated files (seg6x_bpfel.*) sit
// beside it. The benchmark rig's programs are in internal/benchrig/rigbpf, the lab's in
// internal/lab/accessbpf.
package dataplane

//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -type sid_entry -type encap_policy -type route4_key -type route6_key -type encap_val -type port_key -type port_val -type lpm6_key -type counter -type nh_entry -type nh_key -type slow_meta -type sid_action -type reason -type slow_kind -type port_flags -type port_vlan -type sid_flags -type mss_clamp -type limits Seg6x ../../bpf/seg6x.bpf.c -- -I../../bpf -I/usr/include/x86_64-linux-gnu -O2 -g -Wall -Werror
