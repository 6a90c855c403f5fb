package state

// ops_plugin.go: operations on plugins (operators' functions, internal/pluginobj), and the plugin part
// of a SID of action plugin: which program slot its plugin is in, and its settings encoded for that
// plugin (internal/plugincfg) into a configuration slot (bind) of its own. A plugin replaced by another
// object goes into a new slot, and every SID running it moves there with its settings encoded again
// into a new bind: a packet sees the old function with the old configuration or the new with the new.

import (
	"bytes"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seg6x/seg6x/internal/model"
	"github.com/seg6x/seg6x/internal/plugincfg"
	"github.com/seg6x/seg6x/internal/pluginobj"
)

// pluginRT is a loaded plugin: the object read and checked, its configuration's layout, its slot.
type pluginRT struct {
	model.Plugin
	slot   uint32
	obj    *pluginobj.Object
	schema *plugincfg.Schema
}

type pluginBefore struct {
	had bool
	p   *pluginRT
}

// readPlugin checks plugin p's object and reads its configuration's layout.
func readPlugin(p model.Plugin) (*pluginRT, error) {
	obj := model.PluginObj(&p)
	o, err := pluginobj.Read(p.Object)
	if err != nil {
		return nil, model.FieldErr(obj, "file", "%v", err)
	}
	sc, err := plugincfg.NewSchema(o.Config)
	if err != nil {
		return nil, model.FieldErr(obj, "file", "struct seg6x_plugin_config: %v", err)
	}
	p.Digest = o.Digest
	return &pluginRT{Plugin: p, obj: o, schema: sc}, nil
}

// applyPlugin loads, replaces or removes a plugin. A plugin still run by a SID cannot be removed
// (finish checks it, once every operation of the commit is in).
func (s *Store) applyPlugin(c *change, op Op) error {
	p := *op.Plugin
	obj := model.PluginObj(&p)
	old := s.rt.plugins[p.Name]
	if err := exists(op.Kind, old != nil, obj); err != nil {
		return err
	}
	if op.Origin != model.OriginConfig {
		if !op.Origin.Known() {
			return model.FieldErr(obj, "", "unknown origin %q", string(op.Origin))
		}
		return model.FieldErr(obj, "", "plugins are loaded through the API or the config file only, not by %s", op.Origin)
	}
	if _, ok := c.plugins[p.Name]; !ok {
		c.plugins[p.Name] = pluginBefore{had: old != nil, p: old}
	}
	if op.Kind == model.OpDelete {
		setEntry(c, s.rt.plugins, p.Name, nil, true)
		c.note(op.Kind, true, obj)
		return nil
	}
	if err := model.Collect(func(add func(error)) { model.ValidatePlugin(&p, add) }); err != nil {
		return err
	}
	pr, err := readPlugin(p)
	if err != nil {
		return err
	}
	if old != nil && old.Digest == pr.Digest { // the same object: nothing to load
		if old.File != pr.File {
			keep := *old
			keep.File = pr.File
			setEntry(c, s.rt.plugins, p.Name, &keep, false)
			c.note(op.Kind, true, obj)
		}
		return nil
	}
	if err := s.keepObject(pr); err != nil {
		return model.FieldErr(obj, "file", "%v", err)
	}
	slot, err := s.rt.pluginSlots.alloc()
	if err != nil {
		return model.FieldErr(obj, "", "%v (seg6x plugin unload one first)", err)
	}
	c.onUndo(func() { s.rt.pluginSlots.release(slot, false) })
	pr.slot = slot
	setEntry(c, s.rt.plugins, p.Name, pr, false)
	c.note(op.Kind, old != nil, obj)
	return nil // its SIDs move to it at the end of the commit (rebindMoved), with the settings they have then
}

// rebindMoved moves the SIDs of plugins commit c loaded anew to their plugin's new slot, their settings
// encoded for its layout, unless an operation after the load already did.
func (s *Store) rebindMoved(c *change, add func(error)) {
	for _, name := range slices.Sorted(maps.Keys(c.plugins)) {
		pr := s.rt.plugins[name]
		if pr == nil {
			continue
		}
		for _, addr := range s.pluginUsers(name) {
			sd := s.rt.sids[addr]
			if sd.PluginSlot == pr.slot {
				continue
			}
			if _, ok := c.sids[addr]; !ok {
				c.sids[addr] = sidBefore{had: true, sid: sd}
			}
			if err := s.bindPlugin(c, &sd, nil); err != nil {
				add(err)
				continue
			}
			setEntry(c, s.rt.sids, addr, sd, false)
		}
	}
}

// pluginUsers are the SIDs that run plugin name, in address order.
func (s *Store) pluginUsers(name string) []netip.Addr {
	var out []netip.Addr
	for addr, sd := range s.rt.sids {
		if sd.Plugin == name && model.BehaviorNamed(sd.Action).Needs == model.ParamPlugin {
			out = append(out, addr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

// bindPlugin gives plugin SID sd its plugin's slot and its settings encoded into a bind: the one it
// had (old, when the plugin and the bytes are the same) or a new one.
func (s *Store) bindPlugin(c *change, sd *model.SID, old *model.SID) error {
	obj := model.SIDObj(sd)
	pr := s.rt.plugins[sd.Plugin]
	if pr == nil {
		return model.FieldErr(obj, "plugin", "no plugin %q is loaded (seg6x plugin load %s FILE)", sd.Plugin, sd.Plugin)
	}
	b, names, err := s.rt.encodeSettings(pr, sd.Config)
	if err != nil {
		return model.FieldErr(obj, "config", "%s: %v", sd.Plugin, err)
	}
	if len(names.policies) > pluginobj.Policies {
		return model.FieldErr(obj, "config", "%s: %d policies; a plugin SID may name at most %d", sd.Plugin, len(names.policies), pluginobj.Policies)
	}
	sd.PluginSlot = pr.slot
	if old != nil && old.Bind != 0 && old.PluginSlot == pr.slot && bytes.Equal(s.rt.pluginCfg[old.Bind], b) &&
		slices.Equal(s.rt.pluginPolicies[old.Bind], names.policies) {
		sd.Bind = old.Bind
		return nil
	}
	bind, err := s.rt.pluginBinds.alloc()
	if err != nil {
		return model.FieldErr(obj, "", "%v", err)
	}
	c.onUndo(func() { s.rt.pluginBinds.release(bind, false) })
	c.newBinds = append(c.newBinds, bind)
	setEntry(c, s.rt.pluginCfg, bind, b, false)
	setEntry(c, s.rt.pluginPolicies, bind, names.policies, false)
	sd.Bind = bind
	return nil
}

// encodeSettings encodes a plugin SID's settings (cfg) for plugin pr, and says which named policies
// they name.
func (r *runtime) encodeSettings(pr *pluginRT, cfg map[string]string) ([]byte, *storeNames, error) {
	settings := make([]plugincfg.Setting, 0, len(cfg))
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		settings = append(settings, plugincfg.Setting{Key: k, Value: cfg[k]})
	}
	names := &storeNames{rt: r}
	b, err := pr.schema.Encode(settings, names)
	return b, names, err
}

// storeNames resolves the names a plugin's configuration may hold: seg6x_tenant_t a tenant's table,
// seg6x_policy_t a named policy of one segment list (the id of its list for an IPv6 packet: what
// End.B6.Encaps puts a packet into), each one kept in policies.
type storeNames struct {
	rt       *runtime
	policies []pluginPolicy
}

// pluginPolicy is a named policy a plugin SID's settings name, and the policy id it stood for.
type pluginPolicy struct {
	Name string
	ID   uint32
}

func (n *storeNames) Tenant(name string) (uint32, error) {
	t := n.rt.tenants[name]
	if t == nil {
		return 0, fmt.Errorf("no tenant %q", name)
	}
	if t.Table == 0 {
		return 0, fmt.Errorf("tenant %q has no table", name)
	}
	return t.Table, nil
}

func (n *storeNames) Policy(name string) (uint32, error) {
	p := n.rt.named[name]
	switch {
	case p == nil:
		return 0, fmt.Errorf("no policy %q (seg6x policy)", name)
	case len(p.members[1]) != 1:
		return 0, fmt.Errorf("policy %q has %d segment lists; a plugin encapsulates into a policy of one", name, len(p.members[1]))
	}
	id := p.members[1][0].id
	if !slices.Contains(n.policies, pluginPolicy{name, id}) {
		n.policies = append(n.policies, pluginPolicy{name, id})
	}
	return id, nil
}

func (n *storeNames) TenantName(table uint32) string {
	for name, t := range n.rt.tenants {
		if t.Table == table {
			return name
		}
	}
	return fmt.Sprint(table)
}

func (n *storeNames) PolicyName(id uint32) string {
	for name, p := range n.rt.named {
		if len(p.members[1]) == 1 && p.members[1][0].id == id {
			return name
		}
	}
	return fmt.Sprint(id)
}

// rebindPolicyUsers gives the plugin SIDs whose settings name a named policy commit c changed their
// settings encoded again (the policy's id may have changed: a new bind), and reports those that
// name one it removed.
func (s *Store) rebindPolicyUsers(c *change, add func(error)) {
	if len(c.named) == 0 {
		return
	}
	for _, addr := range slices.SortedFunc(maps.Keys(s.rt.sids), netip.Addr.Compare) {
		sd := s.rt.sids[addr]
		if sd.Bind == 0 {
			continue
		}
		touched := false
		for _, pp := range s.rt.pluginPolicies[sd.Bind] {
			if _, ok := c.named[pp.Name]; ok {
				touched = true
				if s.rt.named[pp.Name] == nil {
					add(model.FieldErr(model.PolicyObj(pp.Name), "", "plugin SID %s names it in its settings", addr))
				}
			}
		}
		if !touched {
			continue
		}
		if _, ok := c.sids[addr]; !ok {
			c.sids[addr] = sidBefore{had: true, sid: sd}
		}
		if err := s.bindPlugin(c, &sd, &sd); err != nil {
			add(err)
			continue
		}
		setEntry(c, s.rt.sids, addr, sd, false)
	}
}

// keepObject saves a plugin's object in the state directory (by digest), where a restart reads it.
func (s *Store) keepObject(pr *pluginRT) error {
	dir := filepath.Join(s.Dir, "plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, pr.Digest+".o")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pr.Object, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// loadObject reads a saved plugin object back.
func (s *Store) loadObject(digest string) ([]byte, error) {
	if strings.ContainsAny(digest, "/.") || digest == "" {
		return nil, fmt.Errorf("bad plugin digest %q", digest)
	}
	return os.ReadFile(filepath.Join(s.Dir, "plugins", digest+".o"))
}

// checkPluginUsers reports plugins commit c removed that a SID still runs.
func (s *Store) checkPluginUsers(c *change, add func(error)) {
	for _, name := range slices.Sorted(maps.Keys(c.plugins)) {
		if s.rt.plugins[name] != nil {
			continue
		}
		if users := s.pluginUsers(name); len(users) > 0 {
			add(model.FieldErr(model.PluginObj(&model.Plugin{Name: name}), "", "SID %s still runs it", users[0]))
		}
	}
}

// Plugins returns the loaded plugins, sorted by name (without their objects).
func (s *Store) Plugins() []PluginInfo {
	var out []PluginInfo
	for _, name := range slices.Sorted(maps.Keys(s.rt.plugins)) {
		pr := s.rt.plugins[name]
		p := pr.Plugin
		p.Object = nil
		out = append(out, PluginInfo{Plugin: p, Slot: pr.slot, SIDs: s.pluginUsers(name), Config: pr.schema.Describe(),
			Reasons: maps.Clone(pr.obj.Reasons), Counters: pr.obj.Counters, CounterNames: maps.Clone(pr.obj.CounterNames)})
	}
	return out
}

// PluginInfo is a loaded plugin as `seg6x show plugins` tells it.
type PluginInfo struct {
	model.Plugin
	Slot    uint32         // its program slot
	SIDs    []netip.Addr   // the SIDs that run it
	Config  string         // its settings: keys, types and help (plugincfg.Schema.Describe)
	Reasons map[int]string // its drop reasons by value
	// Counters is how many counters of its own it keeps per SID, CounterNames their names by index.
	Counters     int
	CounterNames map[int]string
}
