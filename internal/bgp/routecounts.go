package bgp

// routecounts.go: how many learned routes the speaker holds and what became of them, for the
// daemon's metrics (a read-only view of the importer, cheaper than Report with its routes).

// RouteCounts are the speaker's learned routes by what became of them.
type RouteCounts struct {
	Learned   uint64 // best paths held, one per destination (RD and prefix)
	Installed uint64 // routes installed into tenants (a path imported by two tenants counts twice)
	Refused   uint64 // routes a tenant imports but the state refused (a conflict), and paths unreadable
}

// RouteCounts counts the learned routes (zero before Run).
func (s *Speaker) RouteCounts() RouteCounts {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	var out RouteCounts
	if s.imp == nil {
		return out
	}
	all, bad := s.imp.learned.count()
	out.Learned = uint64(all)
	for _, rs := range s.imp.installed {
		out.Installed += uint64(len(rs))
	}
	for _, m := range s.imp.rejected {
		out.Refused += uint64(len(m))
	}
	out.Refused += uint64(bad)
	return out
}
