package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A multi-node MinIO deployment (-nodes 4 -fill cluster): nodes MinIO
// processes on one machine, each listening on its own port of -host and
// started with the same drive arguments, MinIO's order: position i of
// the deployment is http://HOST:PORT(i%nodes)/WORK/drive(i+1), so that
// consecutive positions cycle through the nodes as they do in MinIO's
// expansion of http://node{1...4}:9000/d{1...4} (the node varies
// fastest). Node n's drives are therefore drive n, n+nodes, n+2*nodes...
// MinIO in a container refuses endpoints that resolve to loopback, hence
// -host.

// cluster is the running MinIO processes.
type cluster struct{ nodes []*server }

// startCluster starts the nodes on driveDirs and waits until each is
// ready; it returns node 1's address for the S3 client.
func startCluster(bin, work string, driveDirs []string, env []string) (*cluster, string, error) {
	ports := make([]string, nodes)
	for n := range ports {
		a, err := freeAddrOn(clusterHost)
		if err != nil {
			return nil, "", err
		}
		_, ports[n], _ = net.SplitHostPort(a)
	}
	var args []string
	for i, d := range driveDirs {
		args = append(args, "http://"+net.JoinHostPort(clusterHost, ports[i%nodes])+d)
	}
	cl := &cluster{}
	for n := range nodes {
		addr := net.JoinHostPort(clusterHost, ports[n])
		s, err := spawnMinIO(bin, addr, args, filepath.Join(work, fmt.Sprintf("minio-node%d.log", n+1)), env)
		if err != nil {
			cl.stop()
			return nil, "", err
		}
		cl.nodes = append(cl.nodes, s)
	}
	for n, s := range cl.nodes {
		if err := s.waitReady(net.JoinHostPort(clusterHost, ports[n]), filepath.Join(work, fmt.Sprintf("minio-node%d.log", n+1))); err != nil {
			cl.stop()
			return nil, "", err
		}
	}
	return cl, net.JoinHostPort(clusterHost, ports[0]), nil
}

// stop stops every node (SIGTERM, all at once, as an operator stopping
// the deployment would).
func (c *cluster) stop() error {
	errs := make([]error, len(c.nodes))
	done := make(chan int)
	for i, s := range c.nodes {
		go func() { errs[i] = s.stop(); done <- i }()
	}
	for range c.nodes {
		<-done
	}
	return errors.Join(errs...)
}

func freeAddrOn(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// spawnMinIO starts one MinIO process without waiting for it.
func spawnMinIO(bin, addr string, args []string, logPath string, env []string) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"server", "--address", addr, "--quiet"}, args...)...)
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

// waitReady waits until the node answers its cluster health check.
func (s *server) waitReady(addr, logPath string) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("MinIO %s exited at start: %v (log: %s)", addr, s.err, logPath)
		default:
		}
		resp, err := http.Get("http://" + addr + "/minio/health/cluster")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("MinIO %s not ready after 90s (log: %s)", addr, logPath)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// fillConfigured (-fill cluster): a versioned bucket with a policy, a
// lifecycle rule and tags, holding two objects, so that the bucket
// configuration (MinIO's .minio.sys/buckets/NAME/.metadata.bin, itself
// an erasure-coded object spread over the nodes) is adopted too.
func (f *filler) fillConfigured() error {
	const b = "configured"
	if err := f.mkBucket(b, false); err != nil {
		return err
	}
	if err := f.versioning(b, types.BucketVersioningStatusEnabled); err != nil {
		return err
	}
	for i, size := range []int{33, 40 * kib} {
		key := fmt.Sprintf("obj-%d.bin", i)
		if _, err := f.put(b, key, body(b+"/"+key, size)); err != nil {
			return err
		}
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Sid":"PublicRead","Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::configured/public/*"]}]}`
	if _, err := f.c.PutBucketPolicy(f.ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: &policy}); err != nil {
		return fmt.Errorf("bucket policy: %w", err)
	}
	if _, err := f.c.PutBucketLifecycleConfiguration(f.ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(b),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{{
			ID: aws.String("expire-tmp"), Status: types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(30)},
		}}},
	}); err != nil {
		return fmt.Errorf("lifecycle: %w", err)
	}
	if _, err := f.c.PutBucketTagging(f.ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("team"), Value: aws.String("storage")}}}}); err != nil {
		return fmt.Errorf("bucket tags: %w", err)
	}
	return nil
}
