// Package rigbpf holds the benchmark rig's BPF objects, compiled by bpf2go: Baseline
// (tools/bpf/baseline.bpf.c: a bare MAC-swap redirect and XDP_PASS), Bench (tools/bpf/bench.bpf.c: the live-frames
// generator and the counting sink), Seg6xFibDirect (bpf/seg6x.bpf.c built with FIB_MAIN_DIRECT,
// timed next to the product program by `seg6x-bench micro`) and the plugins micro times (PluginNop:
// tools/bpf/plugin_nop.c; PluginTtlgate and PluginFirewall: the shipped plugins/ttlgate.c and
// plugins/firewall.c). No product package imports it.
package rigbpf

// gen.go: the bpf2go directives; the generated files (baseline_*, bench_*, seg6xfibdirect_*, plugin*_*)
// sit beside it.

//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" -type bare_route Baseline ../../bpf/baseline.bpf.c -- -I../../../bpf -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" -type sink_pattern -type sink_count -type loop_conf -type loop_classes -type frame_tpl -type gen_state Bench ../../bpf/bench.bpf.c -- -I../../../bpf -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" Seg6xFibDirect ../../../bpf/seg6x.bpf.c -- -I../../../bpf -O2 -g -Wall -Werror -DFIB_MAIN_DIRECT
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" PluginNop ../../bpf/plugin_nop.c -- -I../../../bpf/sdk -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" PluginTtlgate ../../../plugins/ttlgate.c -- -I../../../bpf/sdk -O2 -g -Wall -Werror
//go:generate go tool bpf2go -tags linux -target bpfel -cc clang -no-strip -cflags "$BPF_CFLAGS" PluginFirewall ../../../plugins/firewall.c -- -I../../../bpf/sdk -O2 -g -Wall -Werror
