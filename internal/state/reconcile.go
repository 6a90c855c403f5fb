package state

// reconcile.go: makes the data plane hold exactly the running state, without flushing: what is right
// stays, what is missing is written, what nobody owns (a commit cut short by a crash, interfaces no
// longer configured) is removed, and every interface gets the program of this binary. A daemon runs
// it at start (adopting what an earlier process left) and after an upgrade.

// Reconcile writes the running state into the data plane and attaches the program to every interface.
func (s *Store) Reconcile() (*ReconcileReport, error) {
	return s.dp.Reconcile(s.rt.image(), s.ProgramOptions())
}

// Image is everything the data plane should hold for the running state.
func (s *Store) Image() *Image { return s.rt.image() }
