package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A multi-node MinIO deployment of several server pools (-nodes 4
// -pools 2 -fill clusterpools): nodes MinIO processes on -host, on
// consecutive ports, each started with one argument per pool whose host
// part has ellipses over the ports, as an operator writes
// http://node{1...4}:9000/p1/d{1...2} http://node{1...4}:9000/p2/d{1...2}:
//
//	http://HOST:{P...P+3}/WORK/mnt/p1/d{1...2} http://HOST:{P...P+3}/WORK/mnt/p2/d{1...2}
//
// The nodes share one machine, so every node sees the same paths: each
// process runs in a mount namespace of its own (unshare -m) in which
// WORK/mnt/pP/dD is a bind mount of that node's drive directory. Drive
// numbering (the tarball's driveN): pool p (0-based), node n (0-based),
// path dD is drive p*perPool + (D-1)*nodes + n + 1, i.e. the slot
// shardstore's cluster.Parse gives it (the nodes interleaved, pool after
// pool), plus one.

// clusterPoolDrive is the drive number (1-based) of pool p, node n and
// path index d (all 0-based) of a deployment of perPool drives per pool.
func clusterPoolDrive(p, n, d, perPool int) int { return p*perPool + d*nodes + n + 1 }

// startClusterPools starts the nodes and returns node 1's address and
// MinIO's pool arguments.
func startClusterPools(bin, work string, env []string) (*cluster, string, []string, error) {
	if drives%(pools*nodes) != 0 {
		return nil, "", nil, fmt.Errorf("-drives %d is not -pools %d times -nodes %d times a count", drives, pools, nodes)
	}
	perPool := drives / pools
	perNode := perPool / nodes
	base, err := freePortRun(clusterHost, nodes)
	if err != nil {
		return nil, "", nil, err
	}
	mnt := filepath.Join(work, "mnt")
	var args []string
	for p := range pools {
		for d := range perNode {
			if err := os.MkdirAll(filepath.Join(mnt, fmt.Sprintf("p%d", p+1), fmt.Sprintf("d%d", d+1)), 0o755); err != nil {
				return nil, "", nil, err
			}
		}
		args = append(args, fmt.Sprintf("http://%s:{%d...%d}%s/p%d/d{1...%d}", clusterHost, base, base+nodes-1, mnt, p+1, perNode))
	}
	cl := &cluster{}
	for n := range nodes {
		var binds []string
		for p := range pools {
			for d := range perNode {
				src := filepath.Join(work, fmt.Sprintf("drive%d", clusterPoolDrive(p, n, d, perPool)))
				dst := filepath.Join(mnt, fmt.Sprintf("p%d", p+1), fmt.Sprintf("d%d", d+1))
				binds = append(binds, fmt.Sprintf("mount --bind %s %s", src, dst))
			}
		}
		addr := net.JoinHostPort(clusterHost, strconv.Itoa(base+n))
		script := strings.Join(binds, " && ") + " && exec \"$0\" \"$@\""
		s, err := spawnWrapped(append([]string{"unshare", "-m", "sh", "-c", script, bin}, append([]string{"server", "--address", addr, "--quiet"}, args...)...),
			filepath.Join(work, fmt.Sprintf("minio-node%d.log", n+1)), env)
		if err != nil {
			cl.stop()
			return nil, "", nil, err
		}
		cl.nodes = append(cl.nodes, s)
	}
	for n, s := range cl.nodes {
		if err := s.waitReady(net.JoinHostPort(clusterHost, strconv.Itoa(base+n)), filepath.Join(work, fmt.Sprintf("minio-node%d.log", n+1))); err != nil {
			cl.stop()
			return nil, "", nil, err
		}
	}
	return cl, net.JoinHostPort(clusterHost, strconv.Itoa(base)), args, nil
}

// freePortRun finds count consecutive free ports on host.
func freePortRun(host string, count int) (int, error) {
	for range 50 {
		base := 20000 + rand.IntN(30000)
		ok := true
		for i := range count {
			l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(base+i)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no %d consecutive free ports on %s", count, host)
}

// spawnWrapped starts argv (a MinIO server behind a wrapper) as
// spawnMinIO does.
func spawnWrapped(argv []string, logPath string, env []string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MINIO_CI_CD=on", "MINIO_ROOT_USER="+rootUser, "MINIO_ROOT_PASSWORD="+rootPass,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, exited: make(chan struct{})}
	go func() { s.err = cmd.Wait(); logf.Close(); close(s.exited) }()
	return s, nil
}

// fillClusterPools (-fill clusterpools): a versioned bucket holding, in
// every pool, a key with a version of part files (not inline), a key of
// two such versions in both pools (bigsplit-N.bin), and keys
// of three small (inline) versions each, written until one of them has
// versions in both pools (MinIO puts a new version of an existing key
// in a pool it picks by free space), plus a delete marker on one.
func (f *filler) fillClusterPools() error {
	const b = "pooled"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	if err := f.versioning(b, types.BucketVersioningStatusEnabled); err != nil {
		return fmt.Errorf("versioning: %w", err)
	}
	if _, err := f.inEveryPool(b, "big-%d.bin", func(key string) error {
		_, err := f.put(b, key, body(b+"/"+key, 300*kib))
		return err
	}); err != nil {
		return err
	}
	// A key of two versions with part files (not inline) in both
	// pools: moving its older version needs every node's shards, which
	// a node's share of a cluster cannot read: the adoption refuses it.
	for n := 0; ; n++ {
		if n == 40 {
			return fmt.Errorf("40 keys of 2 big versions written, none with versions in several pools")
		}
		key := fmt.Sprintf("bigsplit-%d.bin", n)
		held := map[int]bool{}
		for v := range 2 {
			if _, err := f.put(b, key, body(fmt.Sprintf("%s/%s#%d", b, key, v+1), 300*kib)); err != nil {
				return err
			}
			for p, dirs := range f.poolDirs {
				for _, d := range dirs {
					if _, err := os.Stat(filepath.Join(d, b, key, "xl.meta")); err == nil {
						held[p] = true
					}
				}
			}
		}
		if len(held) > 1 {
			break
		}
	}
	split := 0
	for n := 0; split < 2; n++ {
		if n == 40 {
			return fmt.Errorf("40 keys of 3 versions written, %d with versions in several pools", split)
		}
		key := fmt.Sprintf("small-%d.txt", n)
		held := map[int]bool{}
		for v := range 3 {
			if _, err := f.put(b, key, body(fmt.Sprintf("%s/%s#%d", b, key, v+1), 100+50*v)); err != nil {
				return err
			}
			held[f.poolOf(b, key)] = true
			for p, dirs := range f.poolDirs {
				for _, d := range dirs {
					if _, err := os.Stat(filepath.Join(d, b, key, "xl.meta")); err == nil {
						held[p] = true
					}
				}
			}
		}
		if n == 0 {
			if err := f.del(b, key); err != nil {
				return err
			}
		}
		if len(held) > 1 {
			split++
		}
	}
	return nil
}
