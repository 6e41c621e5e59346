package bench

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/shardstore/shardstore/internal/drive"
)

// switchDrive wraps a drive with an off switch: while off, every call
// fails at once with drive.ErrDriveFaulty, as a pulled or dead drive
// would. The drive bench uses it to read with drives failed without
// touching the engine. Files opened while on keep working; the bench
// only flips the switch between measurements.
type switchDrive struct {
	inner drive.Drive
	off   atomic.Bool
}

func newSwitchDrive(d drive.Drive) *switchDrive { return &switchDrive{inner: d} }

// SetOffline switches the drive off (true) or back on.
func (s *switchDrive) SetOffline(off bool) { s.off.Store(off) }

func (s *switchDrive) fail(op string) error {
	if s.off.Load() {
		return fmt.Errorf("%s %s: taken offline by the bench: %w", op, s.inner.String(), drive.ErrDriveFaulty)
	}
	return nil
}

func (s *switchDrive) String() string { return s.inner.String() }

func (s *switchDrive) ReadFormat(ctx context.Context) (drive.Format, error) {
	if err := s.fail("read format"); err != nil {
		return drive.Format{}, err
	}
	return s.inner.ReadFormat(ctx)
}

func (s *switchDrive) WriteFormat(ctx context.Context, f drive.Format) error {
	if err := s.fail("write format"); err != nil {
		return err
	}
	return s.inner.WriteFormat(ctx, f)
}

func (s *switchDrive) DiskInfo(ctx context.Context) (drive.DiskInfo, error) {
	if err := s.fail("disk info"); err != nil {
		return drive.DiskInfo{}, err
	}
	return s.inner.DiskInfo(ctx)
}

func (s *switchDrive) Get(ctx context.Context, t drive.Table, key string) ([]byte, error) {
	if err := s.fail("get"); err != nil {
		return nil, err
	}
	return s.inner.Get(ctx, t, key)
}

func (s *switchDrive) Apply(ctx context.Context, b *drive.Batch) error {
	if err := s.fail("apply"); err != nil {
		return err
	}
	return s.inner.Apply(ctx, b)
}

func (s *switchDrive) Scan(ctx context.Context, t drive.Table, q drive.ScanQuery) ([]drive.Entry, error) {
	if err := s.fail("scan"); err != nil {
		return nil, err
	}
	return s.inner.Scan(ctx, t, q)
}

func (s *switchDrive) CreateShard(ctx context.Context, ref drive.ShardRef) (drive.FileWriter, error) {
	if err := s.fail("create shard"); err != nil {
		return nil, err
	}
	return s.inner.CreateShard(ctx, ref)
}

func (s *switchDrive) OpenShard(ctx context.Context, ref drive.ShardRef, offset int64) (io.ReadCloser, error) {
	if err := s.fail("open shard"); err != nil {
		return nil, err
	}
	return s.inner.OpenShard(ctx, ref, offset)
}

func (s *switchDrive) DeleteShards(ctx context.Context, refs []drive.ShardRef) error {
	if err := s.fail("delete shards"); err != nil {
		return err
	}
	return s.inner.DeleteShards(ctx, refs)
}

func (s *switchDrive) WalkShards(ctx context.Context, fn func(drive.ShardFile) error) error {
	if err := s.fail("walk shards"); err != nil {
		return err
	}
	return s.inner.WalkShards(ctx, fn)
}

// Close closes the wrapped drive whatever the switch says: the bench
// always gets its drives back.
func (s *switchDrive) Close() error { return s.inner.Close() }

var _ drive.Drive = (*switchDrive)(nil)
