package rigbpf

// plugins.go: the plugin objects `seg6x-bench micro` loads (their bytes, as a plugin file is read).

// PluginNopObject is tools/bpf/plugin_nop.c built: it returns the verdict its SID's configuration names.
func PluginNopObject() []byte { return _PluginNopBytes }

// PluginTtlgateObject is the shipped tutorial plugin, plugins/ttlgate.c, built.
func PluginTtlgateObject() []byte { return _PluginTtlgateBytes }

// PluginFirewallObject is the shipped stateless firewall, plugins/firewall.c, built.
func PluginFirewallObject() []byte { return _PluginFirewallBytes }
