// Package dataplane loads the seg6x programs (XDP and tc), pins their maps, and attaches them to
// interfaces. gen.go holds the bpf2go directives of the product programs; the generated files
// (seg6x_bpfel.*, seg6xtc_bpfel.*) sit beside it. The tc object's types are the XDP object's (the same
// headers): only the XDP directive generates them. The tools' programs (sources in tools/bpf/) are
// elsewhere: the benchmark rig's in tools/benchrig/rigbpf, the lab's in tools/lab/accessbpf and
// tools/lab/gsoprobe. Every directive passes $BPF_CFLAGS to clang: `make generate` sets it to
// -I/usr/include/<multiarch>, this architecture's kernel headers (asm/...).
package dataplane

//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" -type sid_entry -type encap_policy -type route4_key -type route6_key -type encap_val -type port_key -type port_val -type lpm6_key -type counter -type nh_entry -type nh_key -type slow_meta -type sid_action -type reason -type slow_kind -type rx_frags_mode -type port_flags -type port_vlan -type sid_flags -type mss_clamp -type limits -type trace_rec -type trace_cfg -type trace_stats -type trace_class -type trace_flags -type trace_filter_flags -type trace_buf -type vx_mac_key -type vx_mac -type vx_dev -type vx_rx_key -type vx_remote_key -type vx_mac_kind -type vx_mac_flags -type vx_dev_flags -type seg6x_plugin_ctx -type plugin_bind -type plugin_outcome -type seg6x_verdict Seg6x ../../bpf/seg6x.bpf.c -- -I../../bpf -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" Seg6xTc ../../bpf/seg6x_tc.bpf.c -- -I../../bpf -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" Seg6xTrace ../../bpf/seg6x_trace.bpf.c -- -I../../bpf -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" Seg6xTcTrace ../../bpf/seg6x_tc_trace.bpf.c -- -I../../bpf -O2 -g -Wall -Werror
