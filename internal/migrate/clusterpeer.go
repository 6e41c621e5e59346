package migrate

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardstore/shardstore/internal/durable"
	"github.com/shardstore/shardstore/internal/peerauth"
)

// The calls between the nodes' migrations, under clusterPrefix on each
// node's address, signed with the cluster key (peerauth: derived from
// the root credentials, signed for the node called, never replayed):
//
//	GET  tree?path=DRIVE        a tar of the drive's MinIO files (treeEntries)
//	POST staged?node=N&dry=0|1  node N has staged every drive of this node
//
// A node's run serves until every other node said it staged this node's
// drives; it tells every other node once it staged theirs, retrying
// until each answered. Both are remembered in the staging directory
// (heard/, told/), so a run killed and run again neither waits for a
// node that already moved on nor makes one wait.

// paxSize is the PAX record that stands for a shard file's content: the
// staged copy records that size only (the adoption reads only the sizes
// of the other nodes' part files).
const paxSize = "SHARDSTORE.size"

// maxShardFile bounds the size a tree may give a shard file (MinIO's
// largest part, 5 GiB, makes shard files far smaller).
const maxShardFile = 1 << 40

// treeEnd is the last entry of a tree: a stream without it was cut.
const treeEnd = ".shardstore-tree-end"

// partFile matches MinIO's shard files (part.N).
var partFile = regexp.MustCompile(`^part\.[0-9]+$`)

// sizeOnly reports whether a file of a drive (rel, slash-separated) is
// sent by its size only: shard files, except those of MinIO's own
// system objects (bucket metadata, pool.bin), which the adoption decodes.
func sizeOnly(rel string) bool {
	if !partFile.MatchString(filepath.Base(rel)) {
		return false
	}
	return !strings.HasPrefix(rel, minioSys+"/") || strings.HasPrefix(rel, minioSys+"/multipart/")
}

// skipTree reports whether an entry of a drive (rel, slash-separated)
// is not sent: shardstore's own files, and of MinIO's system directory
// everything but what the adoption reads (format.json, the buckets'
// metadata, pool.bin and the unfinished uploads): not its
// configuration, IAM included, nor its temporary files and trash.
func skipTree(rel string) bool {
	switch rel {
	case ".shardstore.sys", "lost+found":
		return true
	}
	sys, ok := strings.CutPrefix(rel, minioSys+"/")
	if !ok {
		return false
	}
	top, _, _ := strings.Cut(sys, "/")
	switch top {
	case "format.json", "buckets", "pool.bin", "multipart":
		return false
	}
	return true
}

func (c *clusterRun) handle(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.URL.Path, clusterPrefix)
	if !ok {
		http.Error(w, "not a migration call", http.StatusNotFound)
		return
	}
	if !peerauth.ForHost(r, c.top.Host(c.self)) {
		http.Error(w, "signed for another node", http.StatusMisdirectedRequest)
		return
	}
	if _, err := c.a.opts.PeerKey.Verify(r, time.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	switch {
	case op == "tree" && r.Method == http.MethodGet:
		path := q.Get("path")
		for g, p := range c.slotPath {
			if c.local[g] && p == path {
				c.serveTree(w, r, g, path)
				return
			}
		}
		http.Error(w, "not a drive of this node: "+path, http.StatusNotFound)
	case op == "staged" && r.Method == http.MethodPost:
		n, err := strconv.Atoi(q.Get("node"))
		if err != nil || n < 1 || n > len(c.top.Nodes) || n-1 == c.self {
			http.Error(w, "bad node", http.StatusBadRequest)
			return
		}
		if q.Get("dry") == "1" && !c.a.opts.DryRun {
			w.WriteHeader(http.StatusNoContent) // a dry run's copy serves no real run
			return
		}
		if err := c.hear(n - 1); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unknown migration call", http.StatusNotFound)
	}
}

// hear records that node n staged this node's drives.
func (c *clusterRun) hear(n int) error {
	if !c.tempStage {
		if err := touch(filepath.Join(c.stage, "heard", fmt.Sprintf("node%d", n+1)), !c.a.opts.NoSync); err != nil {
			return fmt.Errorf("migrate: record a notice: %w", err)
		}
	}
	c.mu.Lock()
	c.heard[n] = true
	c.mu.Unlock()
	return nil
}

// touch makes an empty file durably.
func touch(path string, sync bool) error {
	return writeFileSync(path, nil, sync)
}

// serveTree writes a tar of the drive's MinIO files: directories, every
// file's content but shard files' (their size, paxSize), each with its
// modification time, then treeEnd.
func (c *clusterRun) serveTree(w http.ResponseWriter, r *http.Request, g int, root string) {
	w.Header().Set("Content-Type", "application/x-tar")
	if err := c.sendTree(r.Context(), w, g, root); err != nil {
		// The stream is cut without treeEnd: the caller retries.
		fmt.Fprintf(c.a.opts.Out, "serving %s to another node: %v\n", root, err)
		panic(http.ErrAbortHandler)
	}
}

// writeTree writes serveTree's tar of the drive at root to w.
func writeTree(w io.Writer, root string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if skipTree(rel) {
			if de.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := de.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		hdr := &tar.Header{Name: rel, Mode: 0o644, ModTime: fi.ModTime(), Format: tar.FormatPAX}
		switch {
		case fi.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
			return tw.WriteHeader(hdr)
		case !fi.Mode().IsRegular():
			return nil
		case sizeOnly(rel):
			hdr.Typeflag = tar.TypeReg
			hdr.PAXRecords = map[string]string{paxSize: strconv.FormatInt(fi.Size(), 10)}
			return tw.WriteHeader(hdr)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = io.CopyN(tw, f, fi.Size())
		return err
	})
	if err == nil {
		err = tw.WriteHeader(&tar.Header{Name: treeEnd, Typeflag: tar.TypeReg, Format: tar.FormatPAX})
	}
	if err == nil {
		err = tw.Close()
	}
	return err
}

// stageAll copies every other node's drives into the staging directory,
// each as one pack (driveN.pack, stagepack.go; the ones a crashed run
// packed whole are kept), waiting for nodes whose migration is not
// running yet, and opens the packs for the adoption (a.packs).
func (c *clusterRun) stageAll(ctx context.Context) error {
	var todo []int
	for g := range c.slotPath {
		if c.local[g] {
			continue
		}
		dst := filepath.Join(c.stage, fmt.Sprintf("drive%d", g+1))
		c.slotPath[g] = dst
		if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
			continue // staged as a file tree by an earlier version: read as it is
		}
		if err := c.openStaged(g); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(c.a.opts.Out, "staged copy of %s unreadable, fetched again: %v\n", c.top.Endpoint(g), err)
		}
		todo = append(todo, g)
	}
	if len(todo) == 0 {
		return nil
	}
	start := time.Now()
	fmt.Fprintf(c.a.opts.Out, "copying the MinIO metadata of %d drives of the other nodes into %s\n", len(todo), c.stage)
	work := make(chan int)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var files, bytes int64
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				if errs[w] != nil {
					continue
				}
				n, b, err := c.stageDrive(ctx, g)
				if err == nil {
					err = c.openStaged(g)
				}
				errs[w] = err
				mu.Lock()
				files, bytes = files+n, bytes+b
				mu.Unlock()
			}
		}()
	}
	for _, g := range todo {
		work <- g
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(c.a.opts.Out, "copied %d entries (%d bytes of metadata) of the other nodes' drives in %s\n", files, bytes, time.Since(start).Round(time.Millisecond))
	return nil
}

// packPath is the pack of the staged drive at slot g.
func (c *clusterRun) packPath(g int) string { return c.slotPath[g] + ".pack" }

// openStaged reads slot g's pack into its index, for the adoption to
// read the drive from (a.packs); fs.ErrNotExist when it is not staged.
func (c *clusterRun) openStaged(g int) error {
	pd, f, err := openPack(c.packPath(g))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.a.packs == nil {
		c.a.packs = map[string]*packedDrive{}
	}
	c.a.packs[c.slotPath[g]] = pd
	c.packFiles = append(c.packFiles, f)
	return nil
}

// closePacks closes the staged drives' packs.
func (c *clusterRun) closePacks() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.packFiles {
		f.Close()
	}
	c.packFiles = nil
}

// stageDrive fetches slot g's tree into its pack, retrying until the
// node answers: written to driveN.pack.partial, synced, renamed into
// place (a pack present is whole).
func (c *clusterRun) stageDrive(ctx context.Context, g int) (int64, int64, error) {
	dst := c.packPath(g)
	tmp := dst + ".partial"
	node := c.top.Drives[g].Node
	u := c.top.Nodes[node] + clusterPrefix + "tree?" + url.Values{"path": {c.top.Drives[g].Path}}.Encode()
	last := time.Time{}
	for {
		n, b, err := c.fetchPack(ctx, u, tmp)
		if err == nil {
			err = os.Rename(tmp, dst)
			if err == nil && !c.tempStage && !c.a.opts.NoSync {
				err = durable.SyncDir(c.stage)
			}
			c.a.step() // a kill test may stop here, between two drives
			return n, b, err
		}
		var perm permanentError
		if errors.As(err, &perm) {
			return 0, 0, fmt.Errorf("migrate: %s: %w", c.top.Endpoint(g), err)
		}
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			fmt.Fprintf(c.a.opts.Out, "waiting for the migration on %s (drive %s): %v\n", c.top.Nodes[node], c.top.Drives[g].Path, err)
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// fetchPack fetches a tree into the pack file tmp (made anew), synced
// unless the staging is a dry run's or syncs are off.
func (c *clusterRun) fetchPack(ctx context.Context, u, tmp string) (int64, int64, error) {
	f, err := os.Create(tmp)
	if err != nil {
		return 0, 0, permanentError{err}
	}
	n, b, err := c.fetchTree(ctx, u, f)
	if err == nil && !c.tempStage && !c.a.opts.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, b, err
}

// permanentError is an answer that retrying will not change.
type permanentError struct{ error }

// call sends a signed request to a node's migration.
func (c *clusterRun) call(ctx context.Context, method, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, permanentError{err}
	}
	c.a.opts.PeerKey.Sign(req, "")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		err := fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound {
			// Another key, or the node has other drives: not a matter
			// of waiting.
			return nil, permanentError{err}
		}
		return nil, err
	}
	return resp, nil
}

// fetchTree packs a node's tree into the file w; it fails unless the
// stream ends with treeEnd.
func (c *clusterRun) fetchTree(ctx context.Context, u string, w io.Writer) (files, bytes int64, err error) {
	resp, err := c.call(ctx, http.MethodGet, u)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	return packTree(resp.Body, w)
}

// packTree writes a tree (serveTree's tar) as a pack (stagepack.go) to
// w: directories, files with their content, and files standing for
// shard files by the size paxSize gives, each with its modification
// time; a directory missing before its entries is added. A stream
// without treeEnd is an error (retried), as is an entry that names a
// path outside the drive, one named twice or under a file, or a size
// that is not one (not retried). Links and other kinds are left out.
func packTree(r io.Reader, w io.Writer) (files, bytes int64, err error) {
	pw, err := newPackWriter(w)
	if err != nil {
		return 0, 0, err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return files, bytes, fmt.Errorf("tree cut short: %w", err)
		}
		if h.Name == treeEnd {
			break
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !filepath.IsLocal(filepath.FromSlash(name)) || !fs.ValidPath(name) {
			return files, bytes, permanentError{fmt.Errorf("tree entry %q outside the drive", h.Name)}
		}
		files++
		if h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg {
			continue
		}
		// A directory the stream skipped (serveTree sends each before
		// its entries) is added, as a file tree would have made it.
		if err := packParents(pw, name, h.ModTime); err != nil {
			if errors.Is(err, errBadEntry) {
				err = permanentError{err}
			}
			return files, bytes, err
		}
		s, sized := h.PAXRecords[paxSize]
		switch {
		case h.Typeflag == tar.TypeDir:
			err = pw.dir(name, h.ModTime)
		case sized:
			size, perr := strconv.ParseInt(s, 10, 64)
			if perr != nil || size < 0 || size > maxShardFile {
				return files, bytes, permanentError{fmt.Errorf("tree entry %q: size %q", h.Name, s)}
			}
			err = pw.sized(name, h.ModTime, size)
		case h.Typeflag != tar.TypeReg || h.Size > maxStagedFile || isSparse(h):
			// A sparse entry would stand for more bytes than it sends.
			return files, bytes, permanentError{fmt.Errorf("tree entry %q: %d bytes, or sparse", h.Name, h.Size)}
		default:
			if err = pw.file(name, h.ModTime, h.Size, tr); err == nil {
				bytes += h.Size
			}
		}
		if errors.Is(err, errBadEntry) {
			return files, bytes, permanentError{err}
		}
		if err != nil {
			return files, bytes, fmt.Errorf("tree cut short or not written: %w", err) // retried
		}
	}
	if err := pw.close(); err != nil {
		return files, bytes, err
	}
	return files, bytes, nil
}

// maxStagedFile bounds a file a tree sends whole: MinIO's xl.meta (a
// key's versions, inline data included) and its small system objects
// are far smaller.
const maxStagedFile = 1 << 30

// isSparse reports whether a tar entry is a GNU sparse file, in any of
// its forms (its holes read as zeros the stream does not carry).
func isSparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// packParents adds the directories above name the pack lacks.
func packParents(pw *packWriter, name string, t time.Time) error {
	dir := path.Dir(name)
	if dir == "." || pw.seen.has(dir) {
		return nil
	}
	if err := packParents(pw, dir, t); err != nil {
		return err
	}
	return pw.dir(dir, t)
}

// notifyAll tells every other node that this one staged its drives,
// retrying until each answered (a real run remembers who answered in
// told/, so that a run again after a crash does not wait for nodes that
// finished meanwhile).
func (c *clusterRun) notifyAll(ctx context.Context) error {
	dry := "0"
	if c.a.opts.DryRun {
		dry = "1"
	}
	told := filepath.Join(c.stage, "told")
	if !c.tempStage {
		if err := os.MkdirAll(told, 0o755); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.top.Nodes))
	for _, n := range c.peerNodes() {
		mark := filepath.Join(told, fmt.Sprintf("node%d", n+1))
		if !c.tempStage {
			if _, err := os.Stat(mark); err == nil {
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := fmt.Sprintf("%s%sstaged?node=%d&dry=%s", c.top.Nodes[n], clusterPrefix, c.self+1, dry)
			for {
				resp, err := c.call(ctx, http.MethodPost, u)
				if err == nil {
					resp.Body.Close()
					if !c.tempStage {
						errs[n] = touch(mark, !c.a.opts.NoSync)
					}
					return
				}
				var perm permanentError
				if errors.As(err, &perm) {
					errs[n] = fmt.Errorf("migrate: tell %s: %w", c.top.Nodes[n], err)
					return
				}
				select {
				case <-ctx.Done():
					errs[n] = ctx.Err()
					return
				case <-time.After(500 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
