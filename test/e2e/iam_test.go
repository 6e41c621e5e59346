package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// adminJSON runs `shardstore admin ARGS... --json` as root and decodes
// its output into v (nil: ignore it).
func (s *server) adminJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, append(append([]string{"admin"}, args...), "--json")...)
	cmd.Env = append(os.Environ(), "SHARDSTORE_ENDPOINT="+s.endpoint,
		"SHARDSTORE_ROOT_USER="+rootUser, "SHARDSTORE_ROOT_PASSWORD="+rootPass)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			t.Fatalf("admin %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func (s *server) stsClient(ak, sk string) *sts.Client {
	return sts.New(sts.Options{Region: region, BaseEndpoint: aws.String(s.endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, "")})
}

func sessionClient(s *server, c *sts.AssumeRoleOutput) *s3.Client {
	return s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(*c.Credentials.AccessKeyId,
			*c.Credentials.SecretAccessKey, *c.Credentials.SessionToken)})
}

// TestAssumeRoleSDK: temporary credentials from STS AssumeRole with
// aws-sdk-go-v2 at default settings carry the user's permissions,
// narrowed by a session policy, and stop at their expiry.
func TestAssumeRoleSDK(t *testing.T) {
	s := startServer(t)
	c := ctx(t)
	root := s.root()
	if _, err := root.CreateBucket(c, &s3.CreateBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv"),
		Body: strings.NewReader("a,b\n")}); err != nil {
		t.Fatal(err)
	}
	var user struct{ Name, SecretKey string }
	s.adminJSON(t, &user, "user", "add", "analyst")
	s.adminJSON(t, nil, "policy", "attach", "readwrite", "--user", "analyst")

	sessionPolicy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::data","arn:aws:s3:::data/*"]}]}`
	out, err := s.stsClient("analyst", user.SecretKey).AssumeRole(c, &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::000000000000:role/reader"), RoleSessionName: aws.String("nightly"),
		DurationSeconds: aws.Int32(900), Policy: aws.String(sessionPolicy)})
	if err != nil {
		t.Fatalf("AssumeRole: %v", err)
	}
	if left := time.Until(*out.Credentials.Expiration); left < 14*time.Minute || left > 16*time.Minute {
		t.Fatalf("session expires in %v, asked for 15 minutes", left)
	}
	sess := sessionClient(s, out)
	got, err := sess.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")})
	if err != nil {
		t.Fatalf("GetObject with the session: %v", err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(body) != "a,b\n" {
		t.Fatalf("GetObject with the session read %q", body)
	}
	_, err = sess.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("x"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)

	// The session token is checked: without it the key is unknown, with
	// another one it is refused.
	noToken := s.client(*out.Credentials.AccessKeyId, *out.Credentials.SecretAccessKey)
	_, err = noToken.HeadBucket(c, &s3.HeadBucketInput{Bucket: aws.String("data")})
	wantCode(t, err, "", 403)
	bad := *out.Credentials
	bad.SessionToken = aws.String(*out.Credentials.SessionToken + "x")
	forged := sts.AssumeRoleOutput{Credentials: &bad}
	_, err = sessionClient(s, &forged).GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")})
	wantCode(t, err, "InvalidToken", 400)

	// A session never outlives the access key it was asked with: one
	// from a key that expires in a few seconds expires with it.
	var key struct{ AccessKey, SecretKey string }
	s.adminJSON(t, &key, "accesskey", "create", "--user", "analyst", "--expiry", "4")
	short, err := s.stsClient(key.AccessKey, key.SecretKey).AssumeRole(c, &sts.AssumeRoleInput{
		RoleArn: aws.String("arn:aws:iam::000000000000:role/reader"), RoleSessionName: aws.String("short")})
	if err != nil {
		t.Fatalf("AssumeRole with an access key: %v", err)
	}
	if time.Until(*short.Credentials.Expiration) > 5*time.Second {
		t.Fatalf("session of a key expiring in 4s expires at %v", *short.Credentials.Expiration)
	}
	shortClient := sessionClient(s, short)
	if _, err := shortClient.HeadBucket(c, &s3.HeadBucketInput{Bucket: aws.String("data")}); err != nil {
		t.Fatalf("fresh short session: %v", err)
	}
	time.Sleep(time.Until(*short.Credentials.Expiration) + 1500*time.Millisecond)
	_, err = shortClient.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("report.csv")})
	wantCode(t, err, "ExpiredToken", 400)
}

// TestIdentitiesSurviveLostDrives: users, their policies and access keys
// are on the drives with quorum: after a restart with a drive directory
// gone (one of four; two would cost the write quorum the readiness check
// waits for) they still authenticate and decide, and a key removed
// before the restart stays removed.
func TestIdentitiesSurviveLostDrives(t *testing.T) {
	dir := t.TempDir()
	s := startIn(t, dir)
	c := ctx(t)
	createBucket(t, s.root(), "keep")
	var user struct{ Name, SecretKey string }
	s.adminJSON(t, &user, "user", "add", "keeper")
	s.adminJSON(t, nil, "policy", "attach", "readwrite", "--user", "keeper")
	var gone struct{ AccessKey, SecretKey string }
	s.adminJSON(t, &gone, "accesskey", "create", "--user", "keeper")
	s.adminJSON(t, nil, "accesskey", "remove", gone.AccessKey)
	if clusterNodes > 0 {
		// Node 1 holds only drive 1: restarted without it, it refuses to
		// start (test/cluster TestNodeWithEveryDriveMissing). The drive
		// is pulled from the running cluster instead.
		if err := os.Rename(s.drives+"1", filepath.Join(dir, "unmounted1")); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(s.drives+"1", filepath.Join(dir, "unmounted1")); err != nil {
			t.Fatal(err)
		}
		s = startIn(t, dir)
	}
	keeper := s.client("keeper", user.SecretKey)
	if _, err := keeper.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("keep"), Key: aws.String("k"),
		Body: strings.NewReader("v")}); err != nil {
		t.Fatalf("the user after losing a drive: %v\n%s", err, s.stderr)
	}
	_, err := s.client(gone.AccessKey, gone.SecretKey).HeadBucket(c, &s3.HeadBucketInput{Bucket: aws.String("keep")})
	wantCode(t, err, "", 403)
}
