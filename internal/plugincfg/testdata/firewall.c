// SPDX-License-Identifier: GPL-2.0
/* firewall.c: a plugin configuration for clang_test.go: rules of prefixes, ports and an enum, a
 * policy, a tenant, an address and a MAC. types_test.go builds the same struct by hand. */
#include <seg6x/seg6x_plugin.h>

#define REQUIRED __attribute__((btf_decl_tag("seg6x:required")))

enum action { allow = 0, deny = 1 };

struct rule {
	seg6x_prefix4_t src SEG6X_HELP("source prefix");
	seg6x_prefix4_t dst;
	seg6x_port_t dport_lo;
	seg6x_port_t dport_hi;
	__u8 proto;
	enum action action;
};

struct seg6x_plugin_config {
	__u8 min_ttl SEG6X_HELP("drop below this TTL") REQUIRED;
	__u32 count;
	struct rule rules[4] SEG6X_HELP("firewall rules, first match");
	enum action dflt;
	seg6x_policy_t via;
	seg6x_tenant_t tenant;
	seg6x_ipv6_t nh;
	seg6x_mac_t mac;
};
_Static_assert(sizeof(struct seg6x_plugin_config) == 156, "the layout types_test.go builds");

SEG6X_PLUGIN(firewall)
{
	return cfg->dflt == deny ? SEG6X_DROP : SEG6X_PASS;
}

char _license[] SEC("license") = "GPL";
