package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// -fill pools: a deployment of several server pools of other sizes
// (-pool-drives 4,8), where MinIO places each new key in a pool it picks
// by free space. Each kind of key is written under numbered names until
// every pool holds one (the filler looks at the drives), so each pool
// has versions, delete markers, part files and multipart objects.

// poolDrives are the pools' drive counts (-pool-drives), nil: -pools
// splits the drives evenly.
var poolDrives []int

// decommissionPool (-decommission N) decommissions pool N (1-based)
// through MinIO's admin API once the pools are filled, and waits until
// MinIO says it is complete, before the answers are recorded.
var decommissionPool int

// parsePoolDrives reads -pool-drives.
func parsePoolDrives(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-pool-drives %q: want drive counts such as 4,8", s)
		}
		poolDrives = append(poolDrives, n)
	}
	return nil
}

// poolArgs are MinIO's arguments for the pools of driveDirs under work
// (work/drive{1...4} work/drive{5...12}) and each pool's drives.
func poolArgs(work string, driveDirs []string) ([]string, [][]string, error) {
	sizes := poolDrives
	if sizes == nil {
		if drives%pools != 0 {
			return nil, nil, fmt.Errorf("-pools %d does not divide -drives %d", pools, drives)
		}
		for range pools {
			sizes = append(sizes, drives/pools)
		}
	}
	var args []string
	var dirs [][]string
	at := 0
	for _, n := range sizes {
		if at+n > len(driveDirs) {
			return nil, nil, fmt.Errorf("-pool-drives add up to more than -drives %d", drives)
		}
		args = append(args, filepath.Join(work, fmt.Sprintf("drive{%d...%d}", at+1, at+n)))
		dirs = append(dirs, driveDirs[at:at+n])
		at += n
	}
	if at != len(driveDirs) {
		return nil, nil, fmt.Errorf("-pool-drives add up to %d, not -drives %d", at, drives)
	}
	return args, dirs, nil
}

// poolOf is the pool whose drives hold an xl.meta of bucket/key (-1: none).
func (f *filler) poolOf(bucket, key string) int {
	for p, dirs := range f.poolDirs {
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, bucket, key, "xl.meta")); err == nil {
				return p
			}
		}
	}
	return -1
}

// inEveryPool writes key pattern (with %d) n = 0, 1, ... through write
// until every pool holds one, and returns the names written.
func (f *filler) inEveryPool(bucket, pattern string, write func(key string) error) ([]string, error) {
	held := map[int]bool{}
	var names []string
	for n := 0; len(held) < len(f.poolDirs); n++ {
		if n == 40 {
			return nil, fmt.Errorf("%s: 40 keys written, pools %v hold them, not every pool", pattern, held)
		}
		key := fmt.Sprintf(pattern, n)
		if err := write(key); err != nil {
			return nil, err
		}
		held[f.poolOf(bucket, key)] = true
		names = append(names, key)
	}
	return names, nil
}

func (f *filler) fillPools() error {
	const b, flat = "pooled", "flat"
	if err := f.mkBucket(flat, false); err != nil {
		return err
	}
	if _, err := f.inEveryPool(flat, "obj-%d.txt", func(key string) error {
		_, err := f.put(flat, key, body(flat+"/"+key, 1000+len(key)))
		return err
	}); err != nil {
		return err
	}
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	pre, err := f.inEveryPool(b, "pre-%d.txt", func(key string) error {
		_, err := f.put(b, key, body(b+"/"+key+"#null", 700))
		return err
	})
	if err != nil {
		return err
	}
	if err := f.versioning(b, types.BucketVersioningStatusEnabled); err != nil {
		return fmt.Errorf("versioning: %w", err)
	}
	steps := []struct {
		pattern string
		write   func(key string) error
	}{
		// versions inline and with part files around a delete marker
		{"doc-%d.txt", func(key string) error {
			if _, err := f.put(b, key, body(b+"/"+key+"#1", 20)); err != nil {
				return err
			}
			if _, err := f.put(b, key, body(b+"/"+key+"#2", 300*kib)); err != nil {
				return err
			}
			if err := f.del(b, key); err != nil {
				return err
			}
			_, err := f.put(b, key, body(b+"/"+key+"#3", 50))
			return err
		}},
		// the latest version a delete marker
		{"gone-%d.txt", func(key string) error {
			if _, err := f.put(b, key, body(b+"/"+key+"#1", 10*kib)); err != nil {
				return err
			}
			return f.del(b, key)
		}},
		// a multipart object of one part (number 2), then a plain version
		{"mp-%d.bin", func(key string) error {
			if err := f.onePartUpload(b, key, 100*kib); err != nil {
				return err
			}
			_, err := f.put(b, key, body(b+"/"+key+"#2", 40))
			return err
		}},
		// a multipart object of two parts, 5 MiB and 3 KiB
		{"mp2-%d.bin", func(key string) error { return f.twoPartUpload(b, key) }},
	}
	for _, s := range steps {
		if _, err := f.inEveryPool(b, s.pattern, s.write); err != nil {
			return err
		}
	}
	for _, key := range pre {
		if _, err := f.put(b, key, body(b+"/"+key+"#2", 900)); err != nil {
			return err
		}
	}
	return nil
}

func (f *filler) twoPartUpload(bucket, key string) error {
	data := body(bucket+"/"+key, 5*mib+3*kib)
	cr, err := f.c.CreateMultipartUpload(f.ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return fmt.Errorf("create multipart: %w", err)
	}
	var done []types.CompletedPart
	for i, r := range [][2]int{{0, 5 * mib}, {5 * mib, len(data)}} {
		chunk := data[r[0]:r[1]]
		up, err := f.c.UploadPart(f.ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(chunk), ContentLength: aws.Int64(int64(len(chunk)))})
		if err != nil {
			return fmt.Errorf("upload part %d: %w", i+1, err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
	}
	_, err = f.c.CompleteMultipartUpload(f.ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		return fmt.Errorf("complete multipart: %w", err)
	}
	return nil
}

// decommission starts the decommission of the pool given to MinIO as
// arg through its admin API (POST /minio/admin/v3/pools/decommission,
// signed like an S3 request) and polls its status until it is complete.
func decommission(ctx context.Context, addr, arg string) error {
	call := func(method, path string) ([]byte, error) {
		u := "http://" + addr + path + "?pool=" + url.QueryEscape(arg)
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(nil)
		hash := hex.EncodeToString(sum[:])
		req.Header.Set("X-Amz-Content-Sha256", hash)
		if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: rootUser, SecretAccessKey: rootPass}, req, hash, "s3", region, time.Now()); err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, body)
		}
		return body, nil
	}
	if _, err := call(http.MethodPost, "/minio/admin/v3/pools/decommission"); err != nil {
		return err
	}
	for range 600 {
		out, err := call(http.MethodGet, "/minio/admin/v3/pools/status")
		if err != nil {
			return err
		}
		var st struct {
			Decommission *struct {
				Complete bool `json:"complete"`
				Failed   bool `json:"failed"`
			} `json:"decommissionInfo"`
		}
		if err := json.Unmarshal(out, &st); err != nil {
			return fmt.Errorf("pool status %s: %w", out, err)
		}
		if st.Decommission != nil && st.Decommission.Failed {
			return fmt.Errorf("decommission failed: %s", out)
		}
		if st.Decommission != nil && st.Decommission.Complete {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("decommission of %s not complete after 2 minutes", arg)
}
