package migrate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A node's drive is walked and read once for all the other nodes: the
// first request for it writes its tree (writeTree's tar) into the
// staging directory (served-driveN.tar, written as .partial and renamed
// once whole), and every request, that one included, is sent that
// file. MinIO is stopped and the adoption only adds links beside its
// files (nothing of MinIO's changes before --finish), so the tree sent
// later is the one a later walk would give. The file goes with the
// staging directory; a run started again writes it again (a file left
// by a killed run is not trusted). Before, each drive was walked and
// its xl.meta files read once per other node (doc.go has the numbers).

// servedTree is one drive's tree file: path once done is closed, err
// when writing it failed (the next request writes it again).
type servedTree struct {
	done chan struct{}
	path string
	err  error
}

// sendTree sends slot g's tree (the local drive at root) to w.
func (c *clusterRun) sendTree(ctx context.Context, w io.Writer, g int, root string) error {
	if c.stage == "" {
		return writeTree(w, root)
	}
	c.mu.Lock()
	if c.trees == nil {
		c.trees = map[int]*servedTree{}
	}
	t := c.trees[g]
	write := t == nil
	if write {
		t = &servedTree{done: make(chan struct{})}
		c.trees[g] = t
	}
	c.mu.Unlock()
	if write {
		t.path, t.err = c.writeTreeFile(g, root)
		if t.err != nil {
			c.mu.Lock()
			delete(c.trees, g)
			c.mu.Unlock()
		}
		close(t.done)
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if t.err != nil {
		return t.err
	}
	f, err := os.Open(t.path)
	if err != nil {
		// Gone with the staging directory at the very end: walk.
		return writeTree(w, root)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// writeTreeFile writes slot g's tree into the staging directory.
func (c *clusterRun) writeTreeFile(g int, root string) (string, error) {
	dst := filepath.Join(c.stage, fmt.Sprintf("served-drive%d.tar", g+1))
	tmp := dst + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return "", fmt.Errorf("tree of %s: %w", root, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = writeTree(bw, root)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("tree of %s: %w", root, err)
	}
	return dst, nil
}
