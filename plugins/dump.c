// SPDX-License-Identifier: GPL-2.0
/* dump.c: the packet-dump function (docs/plugins.md). A copy of the packets that reach the SID (their
 * first snaplen bytes, one in `sample`, those of inner protocol `proto` only when set) goes to a ring
 * that `seg6x capture --plugin dump -w FILE.pcapng` writes out; then the packet goes on as `then`
 * says (End, End.DT46 into the SID's tenant table, or to the kernel). Counts what it dumped and what
 * the ring had no room for.
 *   seg6x plugin load dump dump.o
 *   seg6x sid add fc00:1::e action plugin dump tenant blue then=dt46 snaplen=256 */
#include <seg6x/seg6x_plugin.h>

enum dump_then { end = 0, dt46 = 1, pass = 2 };

struct seg6x_plugin_config {
	__u16 snaplen SEG6X_HELP("bytes of each frame kept, 1 to 1023 (0: 128)");
	__u8 proto SEG6X_HELP("dump only packets whose inner protocol is this, e.g. 6 (0: every packet)");
	enum dump_then then SEG6X_HELP("what follows the copy: end (default), dt46, pass");
	__u32 sample SEG6X_HELP("dump one packet in this many (0 or 1: every one)");
};

enum seg6x_plugin_counter { dumped = 0, ring_full = 1 };
SEG6X_EXPORT_COUNTERS;
SEG6X_COUNTERS(2);
SEG6X_DUMP(1 << 22);

SEG6X_PLUGIN(dump)
{
	int verdict = cfg->then == dt46 ? SEG6X_DT46 : cfg->then == pass ? SEG6X_PASS : SEG6X_END;

	if (cfg->proto && pc->inner_proto != cfg->proto)
		return verdict;
	if (cfg->sample > 1 && bpf_get_prandom_u32() % cfg->sample)
		return verdict;
	if (seg6x_dump(pkt, pc, cfg->snaplen ? cfg->snaplen : 128))
		seg6x_count(pc, ring_full);
	else
		seg6x_count(pc, dumped);
	return verdict;
}

char _license[] SEC("license") = "GPL";
