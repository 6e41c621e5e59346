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

func (s *switchDrive) MakeVol(ctx context.Context, vol string) error {
	if err := s.fail("make volume"); err != nil {
		return err
	}
	return s.inner.MakeVol(ctx, vol)
}

func (s *switchDrive) StatVol(ctx context.Context, vol string) (drive.VolInfo, error) {
	if err := s.fail("stat volume"); err != nil {
		return drive.VolInfo{}, err
	}
	return s.inner.StatVol(ctx, vol)
}

func (s *switchDrive) ListVols(ctx context.Context) ([]drive.VolInfo, error) {
	if err := s.fail("list volumes"); err != nil {
		return nil, err
	}
	return s.inner.ListVols(ctx)
}

func (s *switchDrive) DeleteVol(ctx context.Context, vol string, force bool) error {
	if err := s.fail("delete volume"); err != nil {
		return err
	}
	return s.inner.DeleteVol(ctx, vol, force)
}

func (s *switchDrive) ReadFile(ctx context.Context, vol, path string) ([]byte, error) {
	if err := s.fail("read file"); err != nil {
		return nil, err
	}
	return s.inner.ReadFile(ctx, vol, path)
}

func (s *switchDrive) WriteFile(ctx context.Context, vol, path string, data []byte) error {
	if err := s.fail("write file"); err != nil {
		return err
	}
	return s.inner.WriteFile(ctx, vol, path, data)
}

func (s *switchDrive) CreateFile(ctx context.Context, vol, path string) (drive.FileWriter, error) {
	if err := s.fail("create file"); err != nil {
		return nil, err
	}
	return s.inner.CreateFile(ctx, vol, path)
}

func (s *switchDrive) OpenFile(ctx context.Context, vol, path string, offset int64) (io.ReadCloser, error) {
	if err := s.fail("open file"); err != nil {
		return nil, err
	}
	return s.inner.OpenFile(ctx, vol, path, offset)
}

func (s *switchDrive) Delete(ctx context.Context, vol, path string, recursive bool) error {
	if err := s.fail("delete"); err != nil {
		return err
	}
	return s.inner.Delete(ctx, vol, path, recursive)
}

func (s *switchDrive) Rename(ctx context.Context, srcVol, srcPath, dstVol, dstPath string) error {
	if err := s.fail("rename"); err != nil {
		return err
	}
	return s.inner.Rename(ctx, srcVol, srcPath, dstVol, dstPath)
}

func (s *switchDrive) ListDir(ctx context.Context, vol, dir string) ([]string, error) {
	if err := s.fail("list directory"); err != nil {
		return nil, err
	}
	return s.inner.ListDir(ctx, vol, dir)
}

func (s *switchDrive) CleanTmp(ctx context.Context) error {
	if err := s.fail("clean tmp"); err != nil {
		return err
	}
	return s.inner.CleanTmp(ctx)
}

var _ drive.Drive = (*switchDrive)(nil)
