package state

// ops_node.go: operations on the node's own objects: options, the SR domain, interfaces.

import (
	"fmt"
	"slices"

	"github.com/seg6x/seg6x/internal/model"
)

func (s *Store) applyOptions(c *change, op Op) error {
	if op.Kind != model.OpReplace {
		return model.FieldErr("options", "", "options can only be replaced")
	}
	o := *op.Options
	if err := model.Collect(func(add func(error)) { model.ValidateOptions(&o, add) }); err != nil {
		return err
	}
	old := s.rt.opts
	if c.optsBefore == nil {
		c.optsBefore = &old
	}
	if o != old {
		c.note(model.OpReplace, true, fmt.Sprintf("options (nexthop_cache_ms %d -> %d)", old.NextHopCacheMs, o.NextHopCacheMs))
	}
	s.rt.opts = o
	c.onUndo(func() { s.rt.opts = old })
	return nil
}

func (s *Store) applyDomain(c *change, op Op) error {
	if op.Kind != model.OpReplace {
		return model.FieldErr("domain", "", "the domain can only be replaced (give empty lists to clear it)")
	}
	d := cloneDomain(*op.Domain)
	if err := model.Collect(func(add func(error)) { model.ValidateDomain(&d, add) }); err != nil {
		return err
	}
	old := s.rt.domain
	if c.domainBefore == nil {
		b := cloneDomain(old)
		c.domainBefore = &b
	}
	if slices.Equal(d.Locators, old.Locators) && slices.Equal(d.Sources, old.Sources) {
		return nil
	}
	c.note(model.OpReplace, true, fmt.Sprintf("domain (%d locators, %d sources)", len(d.Locators), len(d.Sources)))
	s.rt.domain = d
	c.onUndo(func() { s.rt.domain = old })
	return nil
}

func (s *Store) applyInterface(c *change, op Op) error {
	it := *op.Interface
	obj := fmt.Sprintf("interface %q", it.Name)
	old, had := s.rt.ifaces[it.Name]
	if err := exists(op.Kind, had, obj); err != nil {
		return err
	}
	if _, ok := c.ifaces[it.Name]; !ok {
		c.ifaces[it.Name] = ifaceBefore{had: had, it: old}
	}
	if op.Kind == model.OpDelete {
		setEntry(c, s.rt.ifaces, it.Name, model.Interface{}, true)
		c.note(op.Kind, had, obj)
		return nil
	}
	if err := model.Collect(func(add func(error)) { model.ValidateInterface(&it, add) }); err != nil {
		return err
	}
	idx, err := s.Env.Ifindex(it.Name)
	if err != nil {
		return model.FieldErr(obj, "name", "%v", err)
	}
	it.Ifindex = idx
	if had && old == it {
		return nil
	}
	setEntry(c, s.rt.ifaces, it.Name, it, false)
	c.note(op.Kind, had, obj)
	return nil
}
