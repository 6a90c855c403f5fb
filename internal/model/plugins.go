package model

// plugins.go: operators' functions (plugins): BPF objects built against the seg6x plugin SDK, loaded
// under a name and run by SIDs of action plugin. The model holds what identifies one (its name, the
// file it came from, its bytes' digest); the store keeps its bytes and reads its configuration's
// layout (internal/pluginobj, internal/plugincfg).

import (
	"fmt"
	"regexp"
	"strings"
)

// Plugin is one loaded plugin.
type Plugin struct {
	// Name is what SIDs of action plugin call it by: 1 to 32 of a-z, 0-9, _ and -.
	Name string `yaml:"name" json:"name"`
	// File is the plugin's object file (built against the SDK, seg6x_plugin.h), read when the config
	// file is applied; a relative path is the config file's directory's.
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// Digest is the sha256 of the object (hex), set by the store.
	Digest string `yaml:"-" json:"digest,omitempty"`
	// Object is the object's bytes (the API carries them; the store keeps them in its state
	// directory).
	Object []byte `yaml:"-" json:"-"`
}

// PluginObj names a plugin in errors.
func PluginObj(p *Plugin) string { return fmt.Sprintf("plugin %q", p.Name) }

var pluginName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// ValidatePluginName checks a plugin's name.
func ValidatePluginName(p *Plugin, add func(error)) {
	if !pluginName.MatchString(p.Name) {
		add(FieldErr(PluginObj(p), "name", "%q: 1 to 32 of a-z, 0-9, _ and -, starting with a letter", p.Name))
	}
}

// ValidatePlugin checks a plugin's name and that it carries an object.
func ValidatePlugin(p *Plugin, add func(error)) {
	ValidatePluginName(p, add)
	if len(p.Object) == 0 {
		add(FieldErr(PluginObj(p), "file", "no object: load it from its .o file (seg6x plugin load %s FILE)", p.Name))
	}
}

// validatePluginSettings checks the form of a plugin SID's settings (their meaning is the plugin's:
// the store checks them against its configuration struct).
func validatePluginSettings(obj string, cfg map[string]string, add func(error)) {
	for k := range cfg {
		if k == "" || strings.ContainsAny(k, " =\t") {
			add(FieldErr(obj, "config", "%q is not a setting's name", k))
		}
	}
	if len(cfg) > 4096 {
		add(fmt.Errorf("%s: %d settings; at most 4096", obj, len(cfg)))
	}
}
