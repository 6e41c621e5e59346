package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"

	"github.com/shardstore/shardstore/internal/drive"
)

// Config documents are small, whole documents the server keeps beside its
// data (the identity store is one): each is written to every drive's
// index under TableSystem ("config/NAME") with a sequence number, and an
// update counts only once a majority of all drives holds it, like a
// bucket record. Reading picks the newest version that at least half of
// the drives (rounded up) hold: every older version has fewer copies
// than that once a later write succeeded, so a read never goes back
// behind an acknowledged write. A write that failed (reached fewer than
// a majority) is indeterminate, as a failed write to any store is: with
// exactly half the drives it is read back, with fewer it is not. The
// read repairs the online drives that lack the version it picked. This
// is driveState's half of config documents; a cluster's consensus group
// keeps them instead (raftState), without copies on the drives.

// configKey is a config document's key in TableSystem.
func configKey(name string) string { return "config/" + name }

// configEnvelope is a stored config document:
// magic "SSC1", seq (8 bytes), crc32c of the data (4 bytes), data.
const configMagic = "SSC1"

func encodeConfig(seq uint64, data []byte) []byte {
	out := make([]byte, 0, 16+len(data))
	out = append(out, configMagic...)
	out = binary.BigEndian.AppendUint64(out, seq)
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(data, crcTable))
	return append(out, data...)
}

func decodeConfig(v []byte) (seq uint64, data []byte, ok bool) {
	if len(v) < 16 || string(v[:4]) != configMagic {
		return 0, nil, false
	}
	seq = binary.BigEndian.Uint64(v[4:12])
	data = v[16:]
	if crc32.Checksum(data, crcTable) != binary.BigEndian.Uint32(v[12:16]) {
		return 0, nil, false
	}
	return seq, data, true
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrNoConfig is returned by ReadConfig for a document never written.
var ErrNoConfig = errors.New("config document not found")

// configCopy is one drive's copy of a document.
type configCopy struct {
	seq  uint64
	data []byte
}

// readConfigCopies reads every drive's copy of a document; a drive
// without one, or with a damaged one, has ok false.
func (s driveState) readConfigCopies(ctx context.Context, name string) ([]configCopy, []bool, []error) {
	drives := s.e.allDrives()
	copies := make([]configCopy, len(drives))
	have := make([]bool, len(drives))
	errs := forEachDrive(drives, func(i int, d drive.Drive) error {
		v, err := d.Get(ctx, drive.TableSystem, configKey(name))
		if errors.Is(err, drive.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if seq, data, ok := decodeConfig(v); ok {
			copies[i], have[i] = configCopy{seq, data}, true
		}
		return nil
	})
	return copies, have, errs
}

// ReadConfig returns a config document with its version (ErrNoConfig
// for one never written).
func (e *Engine) ReadConfig(ctx context.Context, name string) ([]byte, uint64, error) {
	return e.shared.readConfig(ctx, name)
}

// readConfig returns the newest version of a config document that at
// least half of all drives hold, with its sequence number, and rewrites
// it to online drives holding an older or no copy. ErrNoConfig means no
// drive holds one; ErrReadQuorum means copies exist but no version has
// enough of them (too many drives offline).
func (s driveState) readConfig(ctx context.Context, name string) ([]byte, uint64, error) {
	s.e.configMu.Lock()
	defer s.e.configMu.Unlock()
	data, seq, _, err := s.readConfigLocked(ctx, name)
	return data, seq, err
}

// readConfigLocked is readConfig under configMu; newest is the highest
// sequence number any drive holds (a failed write's leftovers included),
// which the next write must exceed.
func (s driveState) readConfigLocked(ctx context.Context, name string) (data []byte, seq, newest uint64, err error) {
	e := s.e
	copies, have, errs := s.readConfigCopies(ctx, name)
	// More copies than a failed write can leave of any version older
	// than the last acknowledged one (n - write quorum).
	n := len(copies)
	quorum := n - e.bucketQuorum() + 1
	var best *configCopy
	any := false
	for i := range copies {
		if !have[i] {
			continue
		}
		any = true
		newest = max(newest, copies[i].seq)
		n := 0
		for j := range copies {
			if have[j] && copies[j].seq == copies[i].seq && bytes.Equal(copies[j].data, copies[i].data) {
				n++
			}
		}
		if n >= quorum && (best == nil || copies[i].seq > best.seq) {
			best = &copies[i]
		}
	}
	if best == nil {
		if !any && countNil(errs) >= e.bucketQuorum() {
			return nil, 0, 0, ErrNoConfig
		}
		return nil, 0, newest, fmt.Errorf("config %s: %w: no version is held by %d drives", name, ErrReadQuorum, quorum)
	}
	// Repair the online drives that missed the chosen version; a failure
	// here changes nothing the caller sees.
	drives := e.allDrives()
	var stale []drive.Drive
	for i, d := range drives {
		if errs[i] == nil && (!have[i] || copies[i].seq != best.seq) {
			stale = append(stale, d)
		}
	}
	if len(stale) > 0 {
		v := encodeConfig(best.seq, best.data)
		forEachDrive(stale, func(_ int, d drive.Drive) error { return sysPut(ctx, d, configKey(name), v) })
	}
	return best.data, best.seq, newest, nil
}

// WriteConfig replaces a config document if its current sequence number
// is prev (0: not written yet), so two writers cannot lose each other's
// update; it returns the new sequence number. ErrConfigConflict reports
// a document changed since prev was read.
func (e *Engine) WriteConfig(ctx context.Context, name string, prev uint64, data []byte) (uint64, error) {
	return e.shared.writeConfig(ctx, name, prev, data)
}

// writeConfig on the drives tells the other nodes even when it fails:
// a failed write may have reached some drives.
func (s driveState) writeConfig(ctx context.Context, name string, prev uint64, data []byte) (uint64, error) {
	e := s.e
	e.configMu.Lock()
	defer e.configMu.Unlock()
	if e.clustered() {
		// The other nodes re-read the document after the lock is given
		// back (deferred calls run last first): a node re-reading it may
		// be waiting for that lock to write it.
		defer e.changed("config", name)
		// The compare-and-set must hold across nodes too.
		unlock, err := e.locks.LockWait(ctx, lockName("", "config/"+name))
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	_, cur, newest, err := s.readConfigLocked(ctx, name)
	switch {
	case errors.Is(err, ErrNoConfig):
		cur = 0
	case err != nil:
		return 0, err
	}
	if cur != prev {
		return 0, fmt.Errorf("config %s: %w (have version %d, expected %d)", name, ErrConfigConflict, cur, prev)
	}
	// The new number must exceed every copy on any drive, including a
	// failed write's leftovers on a minority, so that it wins over them.
	next := max(cur, newest) + 1
	v := encodeConfig(next, data)
	errs := forEachDrive(e.allDrives(), func(_ int, d drive.Drive) error { return sysPut(ctx, d, configKey(name), v) })
	if ok := countNil(errs); ok < e.bucketQuorum() {
		return 0, quorumError("config "+name, errs, ok, e.bucketQuorum())
	}
	return next, nil
}

// ErrConfigConflict is returned by WriteConfig when the document changed
// since the caller read it.
var ErrConfigConflict = errors.New("config document changed concurrently")

// healConfigs restores the drives' copies of config documents: heal runs
// and drive refills call it with the bucket records.
func (e *Engine) healConfigs(ctx context.Context) { e.shared.healConfigs(ctx) }

// healConfigs reads every config document any drive holds, which
// rewrites it to the online drives that lack its current version (a
// replaced drive, one that was offline during a write), so copies are
// restored without waiting for the next read.
func (s driveState) healConfigs(ctx context.Context) {
	for name := range s.configNames(ctx) {
		if _, _, err := s.readConfig(ctx, name); err != nil && s.e.log != nil {
			s.e.log.Warn("cannot heal config document", "name", name, "err", err)
		}
	}
}

// configNames lists the config documents any drive holds a copy of.
func (s driveState) configNames(ctx context.Context) map[string]bool {
	names := map[string]bool{}
	var mu sync.Mutex
	forEachDrive(s.e.allDrives(), func(_ int, d drive.Drive) error {
		ents, err := d.Scan(ctx, drive.TableSystem, drive.ScanQuery{Prefix: "config/", KeysOnly: true})
		if err != nil {
			return err
		}
		mu.Lock()
		for _, ent := range ents {
			names[strings.TrimPrefix(ent.Key, "config/")] = true
		}
		mu.Unlock()
		return nil
	})
	return names
}
