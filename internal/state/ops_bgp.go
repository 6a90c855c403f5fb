package state

// ops_bgp.go: the operation on the BGP section (replaced or deleted whole), and reading it back.

import "github.com/seg6x/seg6x/internal/model"

// applyBGP replaces (or, OpDelete, removes) the BGP section.
func (s *Store) applyBGP(c *change, op Op) error {
	if op.Kind == model.OpAdd {
		return model.FieldErr(model.BGPObj(), "", "the bgp section can only be replaced or deleted")
	}
	if op.Kind == model.OpDelete && s.rt.bgp == nil {
		return model.FieldErr(model.BGPObj(), "", "does not exist")
	}
	var nb *model.BGP
	if op.Kind == model.OpReplace {
		nb = model.CloneBGP(op.BGP)
		if err := model.Collect(func(add func(error)) { model.ValidateBGP(nb, add) }); err != nil {
			return err
		}
	}
	old := s.rt.bgp
	if !c.bgpTouched {
		c.bgpTouched, c.bgpBefore = true, old
	}
	if model.Same(old, nb) {
		return nil
	}
	c.note(op.Kind, old != nil, model.BGPObj())
	s.rt.bgp = nb
	c.onUndo(func() { s.rt.bgp = old })
	return nil
}

// BGPConfig returns the BGP section (nil: none).
func (s *Store) BGPConfig() *model.BGP { return model.CloneBGP(s.rt.bgp) }
