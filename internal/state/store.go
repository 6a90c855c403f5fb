package state

// store.go: the running state of one seg6x instance (a directory holding state.json, a lock and a
// bpffs with the pinned maps and links) and Apply, the only function that changes it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seg6x/seg6x/internal/dataplane"
	"golang.org/x/sys/unix"
)

// DefaultDir is the state directory used when none is given.
const DefaultDir = "/run/seg6x"

// Store is an open, locked instance.
type Store struct {
	Dir  string
	Env  Env
	Maps *dataplane.Seg6xMaps
	lock *os.File
	cur  State
}

// Open locks instance dir (waiting for other seg6x commands), loads its state and opens its maps.
func Open(dir string, env Env) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		lf.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	st := &Store{Dir: dir, Env: env, lock: lf}
	if err := st.loadState(); err != nil {
		st.Close()
		return nil, err
	}
	m, err := dataplane.OpenMaps(dir)
	if err != nil {
		st.Close()
		return nil, err
	}
	st.Maps = m
	return st, nil
}

// Close releases the maps and the lock.
func (s *Store) Close() {
	if s.Maps != nil {
		s.Maps.Close()
	}
	if s.lock != nil {
		s.lock.Close()
	}
}

func (s *Store) statePath() string { return filepath.Join(s.Dir, "state.json") }

func (s *Store) loadState() error {
	b, err := os.ReadFile(s.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &s.cur); err != nil {
		return fmt.Errorf("%s is corrupt: %w", s.statePath(), err)
	}
	return nil
}

func (s *Store) saveState(st *State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.statePath())
}

// Current returns a copy of the running state.
func (s *Store) Current() State { return clone(&s.cur) }

func clone(st *State) State {
	var c State
	b, _ := json.Marshal(st)
	_ = json.Unmarshal(b, &c)
	if c.Interfaces == nil {
		c.Interfaces = []Interface{}
	}
	if c.Tenants == nil {
		c.Tenants = []Tenant{}
	}
	if c.Routes == nil {
		c.Routes = []Route{}
	}
	if c.SIDs == nil {
		c.SIDs = []SID{}
	}
	return c
}

// Plan validates and resolves desired against the running state and returns what Apply would change.
func (s *Store) Plan(desired State) (*Diff, State, error) {
	next := clone(&desired)
	if err := Validate(&next); err != nil {
		return nil, next, err
	}
	if err := resolve(&next, s.Env); err != nil {
		return nil, next, err
	}
	if err := assignIDs(&s.cur, &next); err != nil {
		return nil, next, err
	}
	return diffObjects(&s.cur, &next), next, nil
}

// Apply makes desired the running state: validate everything, write the map differences, and on any
// failure undo what was written, so the data plane is either fully old or fully new.
func (s *Store) Apply(desired State) (*Diff, error) {
	d, next, err := s.Plan(desired)
	if err != nil {
		return nil, err
	}
	if d.Empty() {
		return d, nil
	}
	oldIm, err := BuildImage(&s.cur)
	if err != nil {
		return nil, fmt.Errorf("running state: %w", err)
	}
	newIm, err := BuildImage(&next)
	if err != nil {
		return nil, err
	}
	tx := &txn{}
	if err := s.writeImage(tx, &next, oldIm, newIm); err != nil {
		if uerr := tx.rollback(); uerr != nil {
			return nil, fmt.Errorf("%w (and rolling back failed: %v)", err, uerr)
		}
		return nil, err
	}
	if err := s.saveState(&next); err != nil {
		if uerr := tx.rollback(); uerr != nil {
			return nil, fmt.Errorf("saving state: %w (and rolling back failed: %v)", err, uerr)
		}
		return nil, fmt.Errorf("saving state: %w", err)
	}
	s.cur = next
	return d, nil
}
