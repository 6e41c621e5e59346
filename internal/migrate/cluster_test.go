package migrate

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardstore/shardstore/internal/cluster"
	"github.com/shardstore/shardstore/internal/peerauth"
)

// clusterEndpoints are the endpoints of a 2-node deployment on loopback
// ports p0 and p1 whose drive i (MinIO's position) is paths[order[i]],
// on node i%2.
func clusterEndpoints(paths []string, ports [2]string, order []int) []string {
	var out []string
	for i := range order {
		out = append(out, fmt.Sprintf("http://127.0.0.1:%s%s", ports[i%2], paths[order[i]]))
	}
	return out
}

func twoPorts(t *testing.T) [2]string {
	t.Helper()
	var ports [2]string
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, ports[i], _ = net.SplitHostPort(l.Addr().String())
		l.Close()
	}
	return ports
}

// TestJoinCluster: a node finds its drives among the endpoints and
// checks them before anything is written; a node whose drive is missing,
// whose drives the endpoints put in another order than MinIO's, or
// whose endpoints name another drive count, refuses saying why.
func TestJoinCluster(t *testing.T) {
	paths := writeMinIOFormats(t, 1, 4, "SIPMOD+PARITY", nil)
	ports := twoPorts(t)
	key := peerauth.Derive("migrate-user", "migrate-secret")
	inOrder := clusterEndpoints(paths, ports, []int{0, 1, 2, 3})
	a := &adopter{opts: Options{Drives: inOrder, Address: "127.0.0.1:" + ports[0], PeerKey: key}}
	c, err := a.joinCluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.self != 0 || fmt.Sprint(c.localPaths()) != fmt.Sprint([]string{paths[0], paths[2]}) || fmt.Sprint(c.local) != "[true false true false]" {
		t.Fatalf("node %d, local %v %v", c.self, c.localPaths(), c.local)
	}
	a = &adopter{opts: Options{Drives: inOrder, Address: "127.0.0.1:" + ports[1], PeerKey: key}}
	if c, err := a.joinCluster(context.Background()); err != nil || fmt.Sprint(c.localPaths()) != fmt.Sprint([]string{paths[1], paths[3]}) {
		t.Fatalf("node 2: %v", err)
	}

	missing := writeMinIOFormats(t, 1, 4, "SIPMOD+PARITY", nil)
	os.RemoveAll(missing[2])
	noFormat := writeMinIOFormats(t, 1, 4, "SIPMOD+PARITY", nil)
	os.Remove(filepath.Join(noFormat[0], minioSys, "format.json"))
	for name, c := range map[string]struct {
		drives []string
		addr   string
		key    peerauth.Key
		want   string
	}{
		"drive missing":     {clusterEndpoints(missing, ports, []int{0, 1, 2, 3}), ports[0], key, "drive " + missing[2] + " of this node"},
		"no MinIO format":   {clusterEndpoints(noFormat, ports, []int{0, 1, 2, 3}), ports[0], key, "no MinIO format"},
		"another order":     {clusterEndpoints(paths, ports, []int{2, 1, 0, 3}), ports[0], key, "give the endpoints in the order the MinIO servers had them"},
		"fewer drives":      {clusterEndpoints(paths, ports, []int{0, 1}), ports[0], key, "the MinIO deployment has 4 drives"},
		"no key":            {inOrder, ports[0], peerauth.Key{}, "root credentials"},
		"not this machine":  {inOrder, "127.0.0.1:1", key, "--address"},
		"https":             {[]string{"https://127.0.0.1:" + ports[0] + paths[0], "https://127.0.0.1:" + ports[1] + paths[1]}, ports[0], key, "over TLS is not supported yet"},
		"bad endpoint":      {[]string{"http://127.0.0.1" + paths[0], "http://127.0.0.2:9000" + paths[1]}, ports[0], key, "port"},
		"one node":          {[]string{"http://127.0.0.1:" + ports[0] + paths[0], "http://127.0.0.1:" + ports[0] + paths[1]}, ports[0], key, "all drives are on one node"},
		"another node's ep": {[]string{"http://127.0.0.1:" + ports[0] + paths[0], "http://127.0.0.1:" + ports[1] + paths[1]}, ports[0], key, "the MinIO deployment has 4 drives"},
	} {
		a := &adopter{opts: Options{Drives: c.drives, Address: "127.0.0.1:" + strings.TrimPrefix(c.addr, "127.0.0.1:"), PeerKey: c.key}}
		_, err := a.joinCluster(context.Background())
		if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", name, err, c.want)
		}
	}
}

// writeTreeDrive makes a MinIO drive's files for the tree tests.
func writeTreeDrive(t *testing.T, root string) {
	t.Helper()
	files := map[string]string{
		"bucket/key/xl.meta": "xl.meta bytes",
		"bucket/key/5c0ff6a1-7f4b-4a37-8a0e-0a3d0f5b7c11/part.1":                               strings.Repeat("s", 1000),
		"bucket/deep/a/b/xl.meta":                                                              "deep",
		minioSys + "/format.json":                                                              `{"format":"xl"}`,
		minioSys + "/buckets/bucket/.metadata.bin/xl.meta":                                     "bucket meta",
		minioSys + "/buckets/bucket/.metadata.bin/0a3d0f5b-7c11-4a37-8a0e-5c0ff6a17f4b/part.1": "bucket meta part",
		minioSys + "/multipart/" + strings.Repeat("a", 64) + "/up/0a3d0f5b-7c11/part.1":        strings.Repeat("u", 300),
		minioSys + "/multipart/" + strings.Repeat("a", 64) + "/up/0a3d0f5b-7c11/part.1.meta":   "part meta",
		minioSys + "/tmp/leftover":                                                             "not sent",
		minioSys + "/config/iam/users/alice/identity.json":                                     "not sent",
		minioSys + "/config.json":                                                              "not sent",
		".shardstore.sys/index/x":                                                              "not sent",
		"bucket/not-a-part.1x":                                                                 "sent whole",
	}
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "bucket"), old, old); err != nil {
		t.Fatal(err)
	}
}

// TestTreeRoundTrip: a node's tree, fetched with a signed call and
// unpacked, holds every MinIO file of the drive with its content, the
// shard files as sparse files of their size, directories dated as on
// the drive; shardstore's own files and MinIO's temporary ones are not
// sent. Unsigned calls, calls signed for another node or with another
// key, and drives not of this node are refused.
func TestTreeRoundTrip(t *testing.T) {
	drive := t.TempDir()
	writeTreeDrive(t, drive)
	var c *clusterRun
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.handle(w, r) }))
	defer srv.Close()
	top, err := cluster.Parse([]string{srv.URL + drive, "http://127.0.0.2:9000/other"})
	if err != nil {
		t.Fatal(err)
	}
	c = &clusterRun{a: &adopter{opts: Options{PeerKey: peerauth.Derive("u-key", "s-secret")}}, top: top, self: 0,
		slotPath: []string{drive, ""}, local: []bool{true, false}, heard: map[int]bool{}, tempStage: true}
	client := &clusterRun{a: &adopter{opts: Options{PeerKey: peerauth.Derive("u-key", "s-secret")}}, hc: srv.Client()}
	packFile := filepath.Join(t.TempDir(), "drive2.pack")
	f, err := os.Create(packFile)
	if err != nil {
		t.Fatal(err)
	}
	u := srv.URL + clusterPrefix + "tree?path=" + drive
	if _, _, err := client.fetchTree(context.Background(), u, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pd, pf, err := openPack(packFile)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	// Read as the adoption reads it: through the adopter, by the path
	// standing for the staged drive.
	dst := filepath.Join(t.TempDir(), "drive2")
	reader := &adopter{packs: map[string]*packedDrive{dst: pd}}
	for p, want := range map[string]string{
		"bucket/key/xl.meta":      "xl.meta bytes",
		"bucket/deep/a/b/xl.meta": "deep",
		minioSys + "/buckets/bucket/.metadata.bin/0a3d0f5b-7c11-4a37-8a0e-5c0ff6a17f4b/part.1": "bucket meta part",
		minioSys + "/multipart/" + strings.Repeat("a", 64) + "/up/0a3d0f5b-7c11/part.1.meta":   "part meta",
		"bucket/not-a-part.1x": "sent whole",
	} {
		got, err := reader.readFile(filepath.Join(dst, filepath.FromSlash(p)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q (%v), want %q", p, got, err, want)
		}
	}
	// Shard files by their size only.
	for p, want := range map[string]int64{
		"bucket/key/5c0ff6a1-7f4b-4a37-8a0e-0a3d0f5b7c11/part.1":                        1000,
		minioSys + "/multipart/" + strings.Repeat("a", 64) + "/up/0a3d0f5b-7c11/part.1": 300,
	} {
		fi, err := reader.stat(filepath.Join(dst, filepath.FromSlash(p)))
		if err != nil || fi.Size() != want || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v (%v), want a file of %d bytes", p, fi, err, want)
		}
		if _, err := reader.readFile(filepath.Join(dst, filepath.FromSlash(p))); err == nil {
			t.Errorf("%s: content read from a size-only entry", p)
		}
	}
	for _, p := range []string{minioSys + "/tmp", minioSys + "/config", minioSys + "/config.json", ".shardstore.sys"} {
		if _, err := reader.stat(filepath.Join(dst, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s staged: %v", p, err)
		}
	}
	if fi, err := reader.stat(filepath.Join(dst, "bucket")); err != nil || !fi.IsDir() || !fi.ModTime().Equal(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Errorf("bucket directory dated %v (%v)", fi.ModTime(), err)
	}
	var walked []string
	if err := reader.walkDir(filepath.Join(dst, "bucket"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			walked = append(walked, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantWalk := []string{filepath.Join(dst, "bucket/deep/a/b/xl.meta"), filepath.Join(dst, "bucket/key/5c0ff6a1-7f4b-4a37-8a0e-0a3d0f5b7c11/part.1"),
		filepath.Join(dst, "bucket/key/xl.meta"), filepath.Join(dst, "bucket/not-a-part.1x")}
	if strings.Join(walked, " ") != strings.Join(wantWalk, " ") {
		t.Errorf("walk: %q, want %q", walked, wantWalk)
	}
	if err := reader.walkDir(filepath.Join(dst, "nothing"), func(p string, d fs.DirEntry, err error) error { return err }); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("walk of a missing directory: %v", err)
	}

	call := func(method, u string, sign func(*http.Request)) int {
		req, _ := http.NewRequest(method, u, nil)
		if sign != nil {
			sign(req)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	signed := func(r *http.Request) { client.a.opts.PeerKey.Sign(r, "") }
	other := peerauth.Derive("u-key", "another-secret")
	for name, c := range map[string]struct {
		method, u string
		sign      func(*http.Request)
		want      int
	}{
		"unsigned":         {"GET", u, nil, http.StatusForbidden},
		"another key":      {"GET", u, func(r *http.Request) { other.Sign(r, "") }, http.StatusForbidden},
		"for another node": {"GET", u, func(r *http.Request) { r.Host = "127.0.0.2:9000"; signed(r) }, http.StatusMisdirectedRequest},
		"not its drive":    {"GET", srv.URL + clusterPrefix + "tree?path=/etc", signed, http.StatusNotFound},
		"other's drive":    {"GET", srv.URL + clusterPrefix + "tree?path=/other", signed, http.StatusNotFound},
		"unknown call":     {"GET", srv.URL + clusterPrefix + "nothing", signed, http.StatusNotFound},
		"not migration":    {"GET", srv.URL + "/bucket/key", signed, http.StatusNotFound},
		"tree by POST":     {"POST", u, signed, http.StatusNotFound},
		"staged by itself": {"POST", srv.URL + clusterPrefix + "staged?node=1", signed, http.StatusBadRequest},
		"staged node 0":    {"POST", srv.URL + clusterPrefix + "staged?node=0", signed, http.StatusBadRequest},
		"staged node 3":    {"POST", srv.URL + clusterPrefix + "staged?node=3", signed, http.StatusBadRequest},
		"staged node x":    {"POST", srv.URL + clusterPrefix + "staged?node=x", signed, http.StatusBadRequest},
		"staged by a dry":  {"POST", srv.URL + clusterPrefix + "staged?node=2&dry=1", signed, http.StatusNoContent},
		"staged by node 2": {"POST", srv.URL + clusterPrefix + "staged?node=2", signed, http.StatusNoContent},
	} {
		if got := call(c.method, c.u, c.sign); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}
	if !c.heard[1] {
		t.Error("node 2's notice not recorded")
	}
}

// tarOf builds a tree stream of entries; end appends treeEnd.
func tarOf(t testing.TB, end bool, hdrs ...*tar.Header) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range hdrs {
		if h.Format == 0 {
			h.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && h.Size > 0 {
			tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
		}
	}
	if end {
		tw.WriteHeader(&tar.Header{Name: treeEnd, Typeflag: tar.TypeReg, Format: tar.FormatPAX})
	}
	tw.Close()
	return b.Bytes()
}

// TestPackTreeHostile: what a tree may not do is refused, as a
// permanent error or one to retry; links and other kinds are left out.
func TestPackTreeHostile(t *testing.T) {
	reg := func(name string, size int64) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644}
	}
	sized := func(name, size string) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, PAXRecords: map[string]string{paxSize: size}}
	}
	good := tarOf(t, true, &tar.Header{Name: "b/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("b/k/xl.meta", 5), sized("b/k/d/part.1", "4096"))
	for name, c := range map[string]struct {
		stream    []byte
		permanent bool // not a matter of retrying
	}{
		"no end":             {tarOf(t, false, reg("b/xl.meta", 3)), false},
		"cut in a file":      {good[:700], false},
		"empty":              {nil, false},
		"not a tar":          {[]byte("<html>502 Bad Gateway</html>"), false},
		"parent":             {tarOf(t, true, reg("../escape", 1)), true},
		"deep parent":        {tarOf(t, true, reg("b/../../escape", 1)), true},
		"dot dot inside":     {tarOf(t, true, reg("b/../c", 1)), true},
		"absolute":           {tarOf(t, true, reg("/tmp/escape", 1)), true},
		"negative size":      {tarOf(t, true, sized("b/part.1", "-1")), true},
		"size not a number":  {tarOf(t, true, sized("b/part.1", "12abc")), true},
		"size empty":         {tarOf(t, true, sized("b/part.1", "")), true},
		"size too large":     {tarOf(t, true, sized("b/part.1", "1099511627777")), true},
		"file over its dir":  {tarOf(t, true, reg("b", 1), reg("b/c", 1)), true},
		"dir over a file":    {tarOf(t, true, reg("b", 1), &tar.Header{Name: "b/", Typeflag: tar.TypeDir, Mode: 0o755}), true},
		"file twice":         {tarOf(t, true, reg("b", 1), reg("b", 1)), true},
		"empty name, parent": {tarOf(t, true, reg("..", 1)), true},
	} {
		var out bytes.Buffer
		_, _, err := packTree(bytes.NewReader(c.stream), &out)
		var perm permanentError
		if err == nil || errors.As(err, &perm) != c.permanent {
			t.Errorf("%s: %v, want an error (permanent: %v)", name, err, c.permanent)
		}
	}
	// A file larger than any MinIO metadata: refused from its header,
	// before its bytes.
	var huge bytes.Buffer
	tw := tar.NewWriter(&huge)
	tw.WriteHeader(&tar.Header{Name: "big", Typeflag: tar.TypeReg, Size: maxStagedFile + 1, Mode: 0o644, Format: tar.FormatPAX})
	tw.Flush()
	var perm permanentError
	if _, _, err := packTree(bytes.NewReader(huge.Bytes()), io.Discard); !errors.As(err, &perm) {
		t.Errorf("a file of %d bytes: %v", maxStagedFile+1, err)
	}
	if !isSparse(&tar.Header{Typeflag: tar.TypeReg, PAXRecords: map[string]string{"GNU.sparse.realsize": "1099511627776"}}) ||
		!isSparse(&tar.Header{Typeflag: tar.TypeGNUSparse}) || isSparse(&tar.Header{Typeflag: tar.TypeReg, PAXRecords: map[string]string{paxSize: "1"}}) {
		t.Error("isSparse")
	}
	var out bytes.Buffer
	if n, b, err := packTree(bytes.NewReader(good), &out); err != nil || n != 3 || b != 5 {
		t.Fatalf("good tree: %d entries, %d bytes, %v", n, b, err)
	}
	pd, err := readPack(bytes.NewReader(out.Bytes()), int64(out.Len()), "good")
	if err != nil {
		t.Fatal(err)
	}
	// b/k and b/k/d were not in the stream: added, as a file tree would.
	if fi, err := pd.Stat("b/k/d"); err != nil || !fi.IsDir() {
		t.Errorf("b/k/d: %v %v", fi, err)
	}
	if fi, err := pd.Stat("b/k/d/part.1"); err != nil || fi.Size() != 4096 {
		t.Errorf("b/k/d/part.1: %v %v", fi, err)
	}
	// Links and other kinds are not staged.
	out.Reset()
	if _, _, err := packTree(bytes.NewReader(tarOf(t, true, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc"},
		&tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"})), &out); err != nil {
		t.Fatal(err)
	}
	pd, err = readPack(bytes.NewReader(out.Bytes()), int64(out.Len()), "links")
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := pd.ReadDir("."); len(ents) != 0 {
		t.Fatalf("links staged: %v", ents)
	}
}

// FuzzPackTree: any stream a peer sends is packed or refused without a
// panic, and a pack written whole reads back.
func FuzzPackTree(f *testing.F) {
	f.Add(tarOf(f, true, &tar.Header{Name: "b/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "b/k/xl.meta", Typeflag: tar.TypeReg, Size: 3, Mode: 0o644},
		&tar.Header{Name: "b/k/d/part.1", Typeflag: tar.TypeReg, Mode: 0o644, PAXRecords: map[string]string{paxSize: "10"}}))
	f.Add(tarOf(f, true, &tar.Header{Name: "../x", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, stream []byte) {
		var out bytes.Buffer
		if _, _, err := packTree(bytes.NewReader(stream), &out); err != nil {
			return
		}
		if _, err := readPack(bytes.NewReader(out.Bytes()), int64(out.Len()), "fuzz"); err != nil {
			t.Fatalf("a pack written whole does not read back: %v", err)
		}
	})
}

// TestSizeOnly: which files a tree sends by their size only.
func TestSizeOnly(t *testing.T) {
	for rel, want := range map[string]bool{
		"b/k/uuid/part.1":                  true,
		"b/k/uuid/part.10000":              true,
		"b/k/uuid/part.1.meta":             false,
		"b/k/xl.meta":                      false,
		"b/part.":                          false,
		"b/part.x":                         false,
		minioSys + "/buckets/b/x/u/part.1": false,
		minioSys + "/pool.bin/u/part.1":    false,
		minioSys + "/multipart/s/u/part.1": true,
		"part.1":                           true,
	} {
		if got := sizeOnly(rel); got != want {
			t.Errorf("sizeOnly(%q) = %v, want %v", rel, got, want)
		}
	}
	for rel, want := range map[string]bool{
		".shardstore.sys":              true,
		"lost+found":                   true,
		minioSys + "/format.json":      false,
		minioSys + "/buckets":          false,
		minioSys + "/buckets/b/x":      false,
		minioSys + "/pool.bin/xl.meta": false,
		minioSys + "/multipart/s":      false,
		minioSys + "/config":           true,
		minioSys + "/config/iam/x":     true,
		minioSys + "/tmp":              true,
		minioSys + "/tmp-old/x":        true,
		minioSys + "/format.json.bkp":  true,
		"bucket":                       false,
		"bucket/.minio.sys/config":     false,
		".minio.sysx/config":           false,
	} {
		if got := skipTree(rel); got != want {
			t.Errorf("skipTree(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestSlotPools(t *testing.T) {
	for _, c := range []struct {
		pools   []int
		drives  int
		wantOf  []int
		wantOff []int
	}{
		{nil, 3, []int{0, 0, 0}, []int{0}},
		{[]int{4}, 4, []int{0, 0, 0, 0}, []int{0}},
		{[]int{2, 3}, 5, []int{0, 0, 1, 1, 1}, []int{0, 2}},
		{[]int{1, 1, 2}, 4, []int{0, 1, 2, 2}, []int{0, 1, 2}},
		// Counts that do not add up (never from cluster.Parse): no slot
		// out of range, none given a pool past the counts.
		{[]int{2, 5}, 4, []int{0, 0, 1, 1}, []int{0, 2}},
		{[]int{1}, 3, []int{0, 0, 0}, []int{0}},
	} {
		top := cluster.Topology{Pools: c.pools, Drives: make([]cluster.Drive, c.drives)}
		of, off := slotPools(top)
		if !slices.Equal(of, c.wantOf) || !slices.Equal(off, c.wantOff) {
			t.Errorf("pools %v over %d drives: %v %v, want %v %v", c.pools, c.drives, of, off, c.wantOf, c.wantOff)
		}
	}
}
