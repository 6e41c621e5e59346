package drive

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Guest returns the sync of a file in dir that belongs to no drive (a
// notification queue's segment, written beside the drives): while two
// or more drives' indexes share dir's filesystem, a call waits for a
// syncfs of that filesystem that started after it, the one the drives'
// commits group-commit on, instead of running own (the file's
// fdatasync), so the file's writes ride the same journal commit and
// flush as the concurrent PUTs' index commits. Otherwise (a drive alone
// on its filesystem, no drive there, a kernel whose syncfs hides
// errors, a nil SharedSync) it runs own. A guest never counts as a
// member: it does not switch a lone drive to syncfs.
//
// Durability is as the drives': syncfs writes back every dirty page of
// the filesystem, the guest's file included, and a failed syncfs falls
// back to own. The group is looked up at every call, so a guest made
// before the drives opened, or outliving them, is safe.
func (s *SharedSync) Guest(dir string) (func(own func() error) error, error) {
	plain := func(own func() error) error { return own() }
	if s == nil || !s.enabled {
		return plain, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return plain, fmt.Errorf("stat %s: %w", dir, err)
	}
	dev := st.Dev
	return func(own func() error) error {
		s.mu.Lock()
		g := s.byDev[dev]
		s.mu.Unlock()
		if g == nil {
			return own()
		}
		// sync checks the members under g.mu: after the last drive
		// left (its fd closed) it runs own.
		return g.sync(own)
	}, nil
}
