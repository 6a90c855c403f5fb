package state

// ops_policy.go: operations on named SR policies: the encap policies of their lists found or made, their
// groups' slots refilled, and what each was before the commit (for undo and the group writes).

import (
	"fmt"

	"github.com/seg6x/seg6x/internal/model"
)

type namedBefore struct {
	had     bool
	p       model.Policy
	gids    [2]uint32 // its groups' ids (without GroupFlag)
	buckets [2][model.GroupBuckets]uint32
}

// touchNamed records named policy name as it was before change c.
func (c *change) touchNamed(r *runtime, name string) {
	if _, ok := c.named[name]; ok {
		return
	}
	b := namedBefore{}
	if n := r.named[name]; n != nil {
		b.had, b.p = true, model.ClonePolicy(&n.Policy)
		b.buckets = [2][model.GroupBuckets]uint32{n.buckets(0), n.buckets(1)}
		b.gids = [2]uint32{n.groups[0].id &^ model.GroupFlag, n.groups[1].id &^ model.GroupFlag}
	}
	c.named[name] = b
}

// acquireLists takes a reference on the encap policy of every list of p, for both inner families.
func (s *Store) acquireLists(c *change, p *model.Policy) ([2][]*policy, error) {
	var out [2][]*policy
	for fam := range 2 {
		for i, l := range p.Lists {
			m, err := s.acquire(c, policyReq{inner6: fam == 1, mode: p.Mode, segs: l.Segs, src: p.Src, hopLimit: p.HopLimit,
				obj: fmt.Sprintf("%s lists[%d]", model.PolicyObj(p.Name), i)})
			if err != nil {
				return out, err
			}
			out[fam] = append(out[fam], m)
		}
	}
	return out, nil
}

func (s *Store) applyPolicy(c *change, op Op) error {
	np := model.ClonePolicy(op.Policy)
	obj := model.PolicyObj(np.Name)
	cur := s.rt.named[np.Name]
	if err := exists(op.Kind, cur != nil, obj); err != nil {
		return err
	}
	if cur != nil {
		if err := model.Owned(op.Origin, cur.Origin, obj); err != nil {
			return err
		}
	}
	np.Origin = op.Origin
	if op.Kind != model.OpDelete {
		if err := model.Collect(func(add func(error)) { model.ValidateNamedPolicy(&np, add) }); err != nil {
			return err
		}
		if cur != nil && model.Same(cur.Policy, np) {
			return nil
		}
	}
	c.touchNamed(s.rt, np.Name)
	if op.Kind == model.OpDelete {
		if n := cur.groups[0].refs + cur.groups[1].refs; n > 0 {
			return model.FieldErr(obj, "", "%d routes still use it", n)
		}
		for fam := range 2 {
			for _, m := range cur.members[fam] {
				s.unref(c, m)
			}
			delete(s.rt.groupByID, cur.groups[fam].id)
		}
		delete(s.rt.named, np.Name)
		c.onUndo(func() {
			s.rt.named[cur.Name] = cur
			for fam := range 2 {
				s.rt.groupByID[cur.groups[fam].id] = cur.groups[fam]
			}
		})
		c.note(op.Kind, true, obj)
		return nil
	}
	members, err := s.acquireLists(c, &np)
	if err != nil {
		return err
	}
	if cur == nil {
		n := &namedRT{Policy: np, members: members}
		for fam := range 2 {
			gid, err := s.rt.groupIDs.alloc()
			if err != nil {
				return model.FieldErr(obj, "", "%v", err)
			}
			c.onUndo(func() { s.rt.groupIDs.release(gid, false) })
			g := &policy{id: model.GroupFlag | gid, key: groupKey(np.Name, fam), inner6: fam == 1, group: n}
			n.groups[fam] = g
			s.rt.groupByID[g.id] = g
			c.onUndo(func() { delete(s.rt.groupByID, g.id) })
		}
		s.rt.named[np.Name] = n
		c.onUndo(func() { delete(s.rt.named, np.Name) })
		c.note(op.Kind, false, obj)
		return nil
	}
	for fam := range 2 {
		for _, m := range cur.members[fam] {
			s.unref(c, m)
		}
	}
	old, oldMembers := cur.Policy, cur.members
	cur.Policy, cur.members = np, members
	c.onUndo(func() { cur.Policy, cur.members = old, oldMembers })
	c.note(op.Kind, true, obj)
	return nil
}
