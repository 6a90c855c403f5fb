package state

// ops_vxlan.go: operations on the kernel's VXLAN objects (the kernel mirror's only), and reading them
// back.

import (
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
)

type vxlanBefore struct {
	had bool
	v   model.VXLAN
}

// applyVXLAN adds, replaces or deletes one VXLAN object (the kernel mirror's only).
func (s *Store) applyVXLAN(c *change, op Op) error {
	v := model.CloneVXLAN(*op.VXLAN)
	obj := model.VXLANObj(&v)
	old, had := s.rt.vxlans[v.Dev]
	if err := exists(op.Kind, had, obj); err != nil {
		return err
	}
	if op.Origin != model.OriginKernel {
		if !op.Origin.Known() {
			return model.FieldErr(obj, "", "unknown origin %q", string(op.Origin))
		}
		return model.FieldErr(obj, "", "VXLAN devices are the kernel's configuration (ip link, bridge fdb, FRR): "+
			"seg6x daemon --mirror-kernel follows them")
	}
	if _, ok := c.vxlans[v.Dev]; !ok {
		c.vxlans[v.Dev] = vxlanBefore{had: had, v: old}
	}
	if op.Kind == model.OpDelete {
		setEntry(c, s.rt.vxlans, v.Dev, model.VXLAN{}, true)
		c.note(op.Kind, had, obj)
		return nil
	}
	v.Origin = op.Origin
	model.NormalizeVXLAN(&v)
	if err := model.Collect(func(add func(error)) { model.ValidateVXLAN(&v, add) }); err != nil {
		return err
	}
	if had && model.SameVXLAN(old, v) {
		return nil
	}
	setEntry(c, s.rt.vxlans, v.Dev, v, false)
	c.note(op.Kind, had, obj)
	return nil
}

// VXLANs returns the VXLAN objects, sorted by device.
func (s *Store) VXLANs() []model.VXLAN { return s.rt.vxlanList() }

func (r *runtime) vxlanList() []model.VXLAN {
	out := make([]model.VXLAN, 0, len(r.vxlans))
	for _, v := range r.vxlans {
		out = append(out, model.CloneVXLAN(v))
	}
	slices.SortFunc(out, func(a, b model.VXLAN) int { return strings.Compare(a.Dev, b.Dev) })
	return out
}
