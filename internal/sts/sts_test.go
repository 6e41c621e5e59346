package sts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/shardstore/shardstore/internal/auth"
	"github.com/shardstore/shardstore/internal/engine"
	"github.com/shardstore/shardstore/internal/iam"
)

func TestAssumedRoleARN(t *testing.T) {
	for role, want := range map[string]string{
		"arn:aws:iam::123456789012:role/reader":        "arn:aws:sts::123456789012:assumed-role/reader/s1",
		"arn:aws:iam::123456789012:role/path/to/admin": "arn:aws:sts::123456789012:assumed-role/admin/s1",
		"arn:aws:iam:::role/x":                         "arn:aws:sts::000000000000:assumed-role/x/s1",
		"not-an-arn-but-long-enough":                   "arn:aws:sts::000000000000:assumed-role/not-an-arn-but-long-enough/s1",
	} {
		if got := assumedRoleARN(role, "s1"); got != want {
			t.Errorf("%s: %s, want %s", role, got, want)
		}
	}
}

// memConfig is an in-memory engine config document store.
type memConfig struct {
	data []byte
	seq  uint64
}

func (m *memConfig) ReadConfig(context.Context, string) ([]byte, uint64, error) {
	if m.seq == 0 {
		return nil, 0, engine.ErrNoConfig
	}
	return m.data, m.seq, nil
}

func (m *memConfig) WriteConfig(_ context.Context, _ string, _ uint64, data []byte) (uint64, error) {
	m.data, m.seq = data, m.seq+1
	return m.seq, nil
}

func TestHandler(t *testing.T) {
	root := auth.Identity{AccessKey: "rootkey", SecretKey: "rootsecret", Root: true}
	ids, err := iam.Open(context.Background(), iam.Options{Backend: &memConfig{}, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	v := &auth.Verifier{Users: auth.NewUsers(root), Identities: ids}
	h := &Handler{Verifier: v, Issuer: ids}
	post := func(ak, sk, service, form string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("POST", "http://localhost/", strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sum := sha256.Sum256([]byte(form))
		err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk}, r,
			hex.EncodeToString(sum[:]), service, "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !auth.IsSTSRequest(r) && service == "sts" {
			t.Fatal("a request signed for sts is not recognised")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	const base = "Action=AssumeRole&Version=2011-06-15&RoleArn=arn:aws:iam::123456789012:role/reader&RoleSessionName=s1"
	w := post("rootkey", "rootsecret", "sts", base+"&DurationSeconds=900")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<SessionToken>SS1.") ||
		!strings.Contains(w.Body.String(), "arn:aws:sts::123456789012:assumed-role/reader/s1") {
		t.Fatalf("AssumeRole: %d %s", w.Code, w.Body)
	}
	for name, tc := range map[string]struct {
		ak, sk, service, form string
		status                int
		code                  string
	}{
		"overflowing duration": {"rootkey", "rootsecret", "sts", base + "&DurationSeconds=36028797018967568", 400, "ValidationError"},
		"short duration":       {"rootkey", "rootsecret", "sts", base + "&DurationSeconds=60", 400, "ValidationError"},
		"unknown key":          {"nobody", "whatever1", "sts", base, 403, "InvalidClientTokenId"},
		"wrong secret":         {"rootkey", "wrongsecret", "sts", base, 403, "SignatureDoesNotMatch"},
		"signed for s3":        {"rootkey", "rootsecret", "s3", base, 400, "IncompleteSignature"},
		"no role":              {"rootkey", "rootsecret", "sts", "Action=AssumeRole&Version=2011-06-15&RoleSessionName=s1", 400, "ValidationError"},
		"unknown action":       {"rootkey", "rootsecret", "sts", "Action=GetCallerIdentity&Version=2011-06-15", 400, "InvalidAction"},
	} {
		w := post(tc.ak, tc.sk, tc.service, tc.form)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), "<Code>"+tc.code+"</Code>") {
			t.Errorf("%s: %d %s, want %d %s", name, w.Code, w.Body, tc.status, tc.code)
		}
	}
}
