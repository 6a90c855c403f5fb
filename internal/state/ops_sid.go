package state

import "github.com/seg6x/seg6x/internal/model"

// ops_sid.go: operations on local SIDs.

func (s *Store) applySID(c *change, op Op) error {
	sd := *op.SID
	obj := model.SIDObj(&sd)
	old, had := s.rt.sids[sd.SID]
	if err := exists(op.Kind, had, obj); err != nil {
		return err
	}
	if had {
		if err := model.Owned(op.Origin, old.Origin, obj); err != nil {
			return err
		}
	}
	sd.Origin = op.Origin
	if _, ok := c.sids[sd.SID]; !ok {
		c.sids[sd.SID] = sidBefore{had: had, sid: old}
	}
	if op.Kind == model.OpDelete {
		s.unbind(c, old)
		setEntry(c, s.rt.sids, sd.SID, model.SID{}, true)
		c.note(op.Kind, true, model.SIDObj(&old))
		return nil
	}
	// The tenant reference is checked at the end of the commit (the tenant may come later in it).
	if err := model.Collect(func(add func(error)) { model.ValidateSID(&sd, nil, add) }); err != nil {
		return err
	}
	sd.ID = old.ID
	if !had {
		id, err := s.rt.sidIDs.alloc()
		if err != nil {
			return model.FieldErr(obj, "", "%v", err)
		}
		sd.ID = id
		c.onUndo(func() { s.rt.sidIDs.release(id, false) })
	}
	sd.Policy, sd.Bind, sd.PluginSlot = 0, 0, 0
	if model.BehaviorNamed(sd.Action).Needs == model.ParamPlugin { // its plugin's slot, its settings encoded
		var was *model.SID
		if had {
			was = &old
		}
		if err := s.bindPlugin(c, &sd, was); err != nil {
			return err
		}
	}
	if b := model.BehaviorNamed(sd.Action); b.Needs == model.ParamSegs { // a binding SID holds its policy
		p, err := s.acquire(c, bindingPolicy(&sd, b))
		if err != nil {
			return err
		}
		sd.Policy = p.id
	}
	if had {
		s.unbind(c, old)
	}
	if had && model.Same(old, sd) {
		return nil
	}
	setEntry(c, s.rt.sids, sd.SID, sd, false)
	c.note(op.Kind, had, obj)
	return nil
}

// unbind drops the reference binding SID sd (if it is one) holds on its policy.
func (s *Store) unbind(c *change, sd model.SID) {
	if p := s.rt.polByID[sd.Policy]; sd.Policy != 0 && p != nil {
		s.unref(c, p)
	}
}
