package state

// policyrefs.go: the SR policies routes and binding SIDs share: what one is and its key, found or
// made for a request, counted by reference, released when the last user goes.

import (
	"net/netip"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

// policy is one prebuilt outer header, shared by every route with the same segment list, source,
// mode, hop limit and inner family. Its id indexes the policies and policy_stats maps.
type policy struct {
	id       uint32
	key      string
	inner6   bool
	mode     string
	segs     []netip.Addr
	src      netip.Addr // as configured (invalid: the kernel's choice, usedSrc)
	usedSrc  netip.Addr
	hopLimit uint8
	refs     int
	// group: a named policy's group for one inner family (id carries GroupFlag), which routes point
	// at; not in the policy tables (policies.go).
	group *namedRT
}

// passPolicy is what a pass route points at: id 0, which the data plane treats as "no encap: hand
// the packet to the kernel". It is not in the policy tables and holds no references.
var passPolicy = &policy{id: 0, key: "pass", mode: model.ModePass}

// policyKey identifies an encapsulation in runtime.policies: binary (only compared, never shown),
// so it can never equal the text keys of passPolicy or of a group (groupKey).
func policyKey(inner6 bool, mode string, segs []netip.Addr, src netip.Addr, hop uint8) string {
	return string(appendPolicyKey(nil, inner6, mode, segs, src, hop))
}

// boolInt is 1 for true, 0 for false (a family or flag as an index or key byte).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// appendPolicyKey appends policyKey's bytes to b (a lookup with them needs no string made).
func appendPolicyKey(b []byte, inner6 bool, mode string, segs []netip.Addr, src netip.Addr, hop uint8) []byte {
	b = append(b, byte(boolInt(inner6)), hop, byte(len(mode)))
	b = appendKeyAddr(append(b, mode...), src)
	for _, a := range segs {
		b = appendKeyAddr(b, a)
	}
	return b
}

// appendKeyAddr appends a length byte, then address a (none when invalid; a zone after it).
func appendKeyAddr(b []byte, a netip.Addr) []byte {
	n := len(b)
	b, _ = a.AppendBinary(append(b, 0))
	b[n] = byte(len(b) - n - 1)
	return b
}

// policyReq is what an SR policy is made of: a route's segment list, or a binding SID's.
type policyReq struct {
	inner6   bool
	mode     string
	segs     []netip.Addr
	src      netip.Addr
	hopLimit uint8
	named    string // a named policy (policies.go): its group for the inner family, instead of the above
	obj      string // the route or SID asking, for errors
}

// routePolicy is the policy request of route r (validated), named obj (model.RouteObj) in errors.
func routePolicy(r *model.Route, obj string) policyReq {
	if r.Policy != "" {
		return policyReq{inner6: r.Prefix.Addr().Is6(), named: r.Policy, obj: obj}
	}
	return policyReq{inner6: r.Prefix.Addr().Is6(), mode: r.Mode, segs: r.Segs, src: r.Src, hopLimit: r.HopLimit, obj: obj}
}

// bindingPolicy is the policy request of binding SID sd (validated): the inner packet is the IPv6
// packet that arrived; the outer hop limit comes from it per packet (the policy's is a default,
// so that a route with the same list shares the policy).
func bindingPolicy(sd *model.SID, b *model.Behavior) policyReq {
	return policyReq{inner6: true, mode: b.PolicyMode, segs: sd.Segs, src: sd.Src, hopLimit: model.DefaultHopLimit, obj: model.SIDObj(sd)}
}

// acquire finds or creates the policy q asks for and takes a reference on it.
func (s *Store) acquire(c *change, q policyReq) (*policy, error) {
	if q.mode == model.ModePass {
		return passPolicy, nil
	}
	if q.named != "" {
		n := s.rt.named[q.named]
		if n == nil {
			return nil, model.FieldErr(q.obj, "policy", "unknown policy %q", q.named)
		}
		g := n.groups[boolInt(q.inner6)]
		c.ref(g, 1)
		return g, nil
	}
	var buf [128]byte
	kb := appendPolicyKey(buf[:0], q.inner6, q.mode, q.segs, q.src, q.hopLimit)
	p := c.lastPol // routes in bulk come in runs of one segment list: the last answer first
	if p == nil || p.key != string(kb) {
		p = s.rt.policies[string(kb)]
	}
	if p == nil {
		key := string(kb)
		used := q.src
		if !used.IsValid() {
			src, err := s.Env.SourceFor(q.segs[0])
			if err != nil {
				return nil, model.FieldErr(q.obj, "src", "%v", err)
			}
			used = src
		}
		id, err := s.rt.polIDs.alloc()
		if err != nil {
			return nil, model.FieldErr(q.obj, "", "%v", err)
		}
		p = &policy{id: id, key: key, inner6: q.inner6, mode: q.mode, segs: slices.Clone(q.segs),
			src: q.src, usedSrc: used, hopLimit: q.hopLimit}
		s.rt.policies[key] = p
		s.rt.polByID[id] = p
		c.newPols = append(c.newPols, p)
		c.onUndo(func() {
			delete(s.rt.policies, key)
			delete(s.rt.polByID, id)
			s.rt.polIDs.release(id, false)
		})
	}
	c.ref(p, 1)
	c.lastPol = p
	return p, nil
}

func (s *Store) unref(c *change, p *policy) {
	if p == passPolicy {
		return
	}
	c.ref(p, -1)
}
