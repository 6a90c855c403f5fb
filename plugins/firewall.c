// SPDX-License-Identifier: GPL-2.0
/* firewall.c: a stateless firewall on a SID (docs/plugins.md, "The shipped firewall"). At the last
 * segment it matches the inner IPv4 / IPv6 packet against up to 12 rules, in order: the first rule
 * that matches decides, and `dflt` decides for a packet no rule matches. A denied packet is dropped
 * (reason denied); an allowed one goes on as `then` says: End.DT46 into the SID's tenant table (dt46,
 * the default), End (end) or to the kernel (pass). Before the last segment it acts as End, reading
 * nothing. An inner packet that is not IP, whose headers are cut short, or with more than 4 IPv6
 * extension headers is dropped as not_ip. Counter i counts the packets rule i decided, dflt the rest.
 *
 * A rule matches when every condition it sets holds (an unset one matches any packet):
 *   family 4 or 6; proto; tenant (the SID is that tenant's); src4 / dst4 (a prefix other than /0 matches
 *   IPv4 packets only), src6 / dst6 (IPv6 only); sport / dport ranges lo..hi: hi 0 means lo alone,
 *   both 0 any port. A port condition matches TCP and UDP packets only, and not a later fragment
 *   (it has no ports). An action or dflt other than allow denies.
 *   seg6x plugin load firewall firewall.o
 *   seg6x sid add fc00:1::f action plugin firewall tenant blue \
 *           rules=1 rule.0.proto=6 rule.0.dport_lo=22 rule.0.action=deny */
#include <stdbool.h>
#include <seg6x/seg6x_plugin.h>

#define FW_RULES 12
#define FW_EXT_HEADERS 4 /* IPv6 extension headers walked to find the upper-layer protocol */

enum fw_action { allow = 0, deny = 1 };
enum fw_then { dt46 = 0, end = 1, pass = 2 };

struct fw_rule {
	__u8 family SEG6X_HELP("4 or 6: the inner packet's IP version (0: both)");
	__u8 proto SEG6X_HELP("the inner protocol: 6 tcp, 17 udp, 1 icmp, 58 icmpv6 (0: any)");
	enum fw_action action SEG6X_HELP("what a packet this rule matches gets");
	seg6x_prefix4_t src4 SEG6X_HELP("IPv4 source prefix (/0: any; else IPv4 packets only)");
	seg6x_prefix4_t dst4 SEG6X_HELP("IPv4 destination prefix (/0: any; else IPv4 packets only)");
	seg6x_prefix6_t src6 SEG6X_HELP("IPv6 source prefix (::/0: any; else IPv6 packets only)");
	seg6x_prefix6_t dst6 SEG6X_HELP("IPv6 destination prefix (::/0: any; else IPv6 packets only)");
	seg6x_port_t sport_lo SEG6X_HELP("TCP/UDP source ports from (hi 0: this one alone; both 0: any)");
	seg6x_port_t sport_hi SEG6X_HELP("TCP/UDP source ports to");
	seg6x_port_t dport_lo SEG6X_HELP("TCP/UDP destination ports from (hi 0: this one alone; both 0: any)");
	seg6x_port_t dport_hi SEG6X_HELP("TCP/UDP destination ports to");
	seg6x_tenant_t tenant SEG6X_HELP("only on a SID of this tenant (unset: any)");
};

struct seg6x_plugin_config {
	__u8 rules SEG6X_HELP("how many rules are in use: rule.0 .. rule.(rules-1), at most 12");
	enum fw_action dflt SEG6X_HELP("what a packet no rule matches gets");
	enum fw_then then SEG6X_HELP("what an allowed packet does: dt46 (End.DT46, the default), end, pass");
	struct fw_rule rule[FW_RULES] SEG6X_HELP("the rules, in order: the first that matches decides");
};

enum seg6x_plugin_reason { denied = 1, not_ip = 2 };
SEG6X_EXPORT_REASONS;

/* counter i: the packets rule i decided; dflt: those no rule matched */
// clang-format off
enum seg6x_plugin_counter { rule0, rule1, rule2, rule3, rule4, rule5, rule6, rule7, rule8, rule9, rule10, rule11,
			    dflt };
// clang-format on
SEG6X_COUNTERS(FW_RULES + 1);
SEG6X_EXPORT_COUNTERS;

/* What the rules look at in the inner packet. */
struct fw_pkt {
	__u8 family;	       /* 4 or 6 */
	__u8 proto;	       /* the upper-layer protocol */
	bool ports;	       /* sport and dport were read (TCP or UDP, not a later fragment) */
	__u16 sport, dport;    /* host order */
	__u8 src[16], dst[16]; /* IPv4: the first 4 bytes */
};

/* The ports of a TCP or UDP header at off. 0: read (or none to read), else the header is cut short. */
static __always_inline int fw_read_ports(const struct seg6x_pkt *pkt, __u32 off, struct fw_pkt *p)
{
	__be16 ports[2];

	if (p->proto != 6 && p->proto != 17)
		return 0;
	if (seg6x_load(pkt, off, ports, sizeof(ports)))
		return -1;
	p->sport = bpf_ntohs(ports[0]);
	p->dport = bpf_ntohs(ports[1]);
	p->ports = true;
	return 0;
}

static __always_inline int fw_read4(const struct seg6x_pkt *pkt, __u32 off, struct fw_pkt *p)
{
	__u8 h[20];

	if (seg6x_load(pkt, off, h, sizeof(h)) || (h[0] >> 4) != 4 || (h[0] & 0xF) < 5)
		return -1;
	p->family = 4;
	p->proto = h[9];
	__builtin_memcpy(p->src, &h[12], 4);
	__builtin_memcpy(p->dst, &h[16], 4);
	if ((h[6] & 0x1F) || h[7]) /* a later fragment: no ports */
		return 0;
	return fw_read_ports(pkt, off + (h[0] & 0xF) * 4, p);
}

static __always_inline bool fw_ext_header(__u8 nh)
{
	return nh == 0 || nh == 43 || nh == 60 || nh == 44; /* hop-by-hop, routing, dest options, fragment */
}

static __always_inline int fw_read6(const struct seg6x_pkt *pkt, __u32 off, struct fw_pkt *p)
{
	bool later = false;
	__u8 h[40], nh;

	if (seg6x_load(pkt, off, h, sizeof(h)) || (h[0] >> 4) != 6)
		return -1;
	p->family = 6;
	__builtin_memcpy(p->src, &h[8], 16);
	__builtin_memcpy(p->dst, &h[24], 16);
	nh = h[6];
	off += 40;
	for (int i = 0; i < FW_EXT_HEADERS && fw_ext_header(nh); i++) {
		__u8 e[4]; /* next header, length, and a fragment header's offset */

		if (seg6x_load(pkt, off, e, sizeof(e)))
			return -1;
		if (nh == 44) {
			later = later || e[2] || (e[3] & 0xF8);
			off += 8;
		} else {
			off += (e[1] + 1) * 8;
		}
		nh = e[0];
	}
	if (fw_ext_header(nh))
		return -1;
	p->proto = nh;
	return later ? 0 : fw_read_ports(pkt, off, p);
}

/* addr (n bytes) is in the prefix pfx/len. */
static __always_inline bool fw_in_prefix(const __u8 *addr, const __u8 *pfx, __u8 len, int n)
{
	for (int i = 0; i < n; i++) {
		int bits = (int)len - 8 * i;
		__u8 mask = bits >= 8 ? 0xFF : bits <= 0 ? 0 : (__u8)(0xFF << (8 - bits));

		if ((addr[i] ^ pfx[i]) & mask)
			return false;
	}
	return true;
}

/* port is in lo..hi (network order; hi 0: lo alone; both 0: any, also a packet without ports). */
static __always_inline bool fw_in_ports(const struct fw_pkt *p, __u16 port, seg6x_port_t lo, seg6x_port_t hi)
{
	__u16 from = bpf_ntohs(lo), to = bpf_ntohs(hi);

	if (!from && !to)
		return true;
	return p->ports && port >= from && port <= (to ? to : from);
}

static __always_inline bool fw_match(const struct fw_rule *r, const struct fw_pkt *p, __u32 table)
{
	if ((r->family && r->family != p->family) || (r->proto && r->proto != p->proto) ||
	    (r->tenant && r->tenant != table))
		return false;
	if ((r->src4.len || r->dst4.len) &&
	    (p->family != 4 || !fw_in_prefix(p->src, (const __u8 *)&r->src4.addr, r->src4.len, 4) ||
	     !fw_in_prefix(p->dst, (const __u8 *)&r->dst4.addr, r->dst4.len, 4)))
		return false;
	if ((r->src6.len || r->dst6.len) && (p->family != 6 || !fw_in_prefix(p->src, r->src6.addr, r->src6.len, 16) ||
					     !fw_in_prefix(p->dst, r->dst6.addr, r->dst6.len, 16)))
		return false;
	return fw_in_ports(p, p->sport, r->sport_lo, r->sport_hi) && fw_in_ports(p, p->dport, r->dport_lo, r->dport_hi);
}

/* The verdict for a packet action decided. */
static __always_inline int fw_verdict(struct seg6x_plugin_ctx *pc, const struct seg6x_plugin_config *cfg,
				      enum fw_action action)
{
	if (action != allow)
		return seg6x_drop(pc, denied);
	switch (cfg->then) {
	case dt46:
		return SEG6X_DT46;
	case end:
		return SEG6X_END;
	case pass:
		return SEG6X_PASS;
	}
	return SEG6X_ABORT; /* a `then` this firewall does not know */
}

SEG6X_PLUGIN(firewall)
{
	struct fw_pkt p = {};
	int err = -1;

	if (pc->sl != 0 && pc->sl != 0xFF)
		return SEG6X_END;
	if (pc->inner_proto == 4)
		err = fw_read4(pkt, pc->inner_off, &p);
	else if (pc->inner_proto == 41)
		err = fw_read6(pkt, pc->inner_off, &p);
	if (err)
		return seg6x_drop(pc, not_ip);
	for (int i = 0; i < FW_RULES && i < cfg->rules; i++) {
		if (fw_match(&cfg->rule[i], &p, pc->table)) {
			seg6x_count(pc, i);
			return fw_verdict(pc, cfg, cfg->rule[i].action);
		}
	}
	seg6x_count(pc, dflt);
	return fw_verdict(pc, cfg, cfg->dflt);
}

char _license[] SEC("license") = "GPL";
