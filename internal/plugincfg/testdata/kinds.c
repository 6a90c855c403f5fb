// SPDX-License-Identifier: GPL-2.0
/* kinds.c: a plugin configuration for clang_test.go with the kinds firewall.c leaves out: bool,
 * signed and 64-bit integers, an IPv4 address and an IPv6 prefix, a byte array, a negative enum, an
 * anonymous struct, an array of arrays, qualifiers. types_test.go builds the same struct by hand. */
#include <seg6x/seg6x_plugin.h>

enum mode { mode_low = -2, mode_off = 0, mode_high = 7 };

struct seg6x_plugin_config {
	_Bool on;
	__s8 s8;
	__s16 s16;
	__s32 s32;
	__s64 s64;
	__u64 u64;
	__u16 u16;
	seg6x_port_t port;
	seg6x_ipv4_t gw;
	seg6x_prefix6_t net6;
	__u8 key[3];
	enum mode mode;
	struct {
		__u8 a;
		__u8 b;
	};
	__u16 grid[2][3];
	const volatile __u32 cv;
	seg6x_tenant_t t2;
};
_Static_assert(sizeof(struct seg6x_plugin_config) == 88, "the layout types_test.go builds");

SEG6X_PLUGIN(kinds)
{
	return cfg->on ? SEG6X_DROP : SEG6X_PASS;
}

char _license[] SEC("license") = "GPL";
