package migrate

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The adopter reads MinIO's drives only through these methods: a path
// under a drive staged as a pack (another node's, cluster.go; the
// drive's path is then stage/driveN, which is not a directory) is read
// from the pack's index, any other path from the file system as it
// stands. The writes (records, links, --finish) go to this node's own
// drives only, never through here.

// packOf returns the pack holding p and p's name in it.
func (a *adopter) packOf(p string) (*packedDrive, string, bool) {
	if len(a.packs) == 0 {
		return nil, "", false
	}
	for root, pd := range a.packs {
		if p == root {
			return pd, ".", true
		}
		if rest, ok := strings.CutPrefix(p, root+string(filepath.Separator)); ok {
			return pd, filepath.ToSlash(rest), true
		}
	}
	return nil, "", false
}

// pathError gives an error from a pack the full path, as os would.
func pathError(err error, full string) error {
	if pe, ok := err.(*fs.PathError); ok {
		return &fs.PathError{Op: pe.Op, Path: full, Err: pe.Err}
	}
	return err
}

func (a *adopter) readFile(p string) ([]byte, error) {
	if pd, rel, ok := a.packOf(p); ok {
		b, err := pd.ReadFile(rel)
		return b, pathError(err, p)
	}
	return os.ReadFile(p)
}

func (a *adopter) readDir(p string) ([]fs.DirEntry, error) {
	if pd, rel, ok := a.packOf(p); ok {
		ents, err := pd.ReadDir(rel)
		return ents, pathError(err, p)
	}
	return os.ReadDir(p)
}

func (a *adopter) stat(p string) (fs.FileInfo, error) {
	if pd, rel, ok := a.packOf(p); ok {
		fi, err := pd.Stat(rel)
		return fi, pathError(err, p)
	}
	return os.Stat(p)
}

func (a *adopter) open(p string) (fs.File, error) {
	if pd, rel, ok := a.packOf(p); ok {
		f, err := pd.Open(rel)
		return f, pathError(err, p)
	}
	return os.Open(p)
}

// walkDir is filepath.WalkDir over either kind of drive: fn gets full
// paths either way.
func (a *adopter) walkDir(root string, fn fs.WalkDirFunc) error {
	pd, rel, ok := a.packOf(root)
	if !ok {
		return filepath.WalkDir(root, fn)
	}
	return fs.WalkDir(pd, rel, func(p string, d fs.DirEntry, err error) error {
		full := root
		switch {
		case p == rel:
		case rel == ".":
			full = filepath.Join(root, filepath.FromSlash(p))
		default:
			full = filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, rel+"/")))
		}
		if err != nil {
			err = pathError(err, full)
		}
		return fn(full, d, err)
	})
}
