package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/shardstore/shardstore/internal/oidcidp"
	"github.com/shardstore/shardstore/internal/oidcidp/oidctest"
)

// webIdentityRole is webIdentity with a RoleArn of the caller's choice.
func webIdentityRole(t *testing.T, s *server, token, roleARN string) (*s3.Client, string) {
	t.Helper()
	c := sts.New(sts.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), HTTPClient: s.http})
	out, err := c.AssumeRoleWithWebIdentity(ctx(t), &sts.AssumeRoleWithWebIdentityInput{
		RoleArn: aws.String(roleARN), RoleSessionName: aws.String("e2e-session"), WebIdentityToken: aws.String(token)})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return nil, ae.ErrorCode()
		}
		t.Fatalf("AssumeRoleWithWebIdentity: %v", err)
	}
	cr := out.Credentials
	return s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(s.endpoint), UsePathStyle: true, HTTPClient: s.http,
		Credentials: credentials.NewStaticCredentialsProvider(*cr.AccessKeyId, *cr.SecretAccessKey, *cr.SessionToken)}), ""
}

// TestOIDCSeveralProviders: two real oidc-provider processes configured
// as three providers of one server, in MinIO's numbered spelling and
// ours: the unnamed one (first provider, client shardstore, policy
// claim), SECOND (second provider, client other-app, groups claim), SVC
// (first provider, the service client, policy claim) and ROLE (second
// provider, the service client, ROLE_POLICY writers, reached by its role
// ARN). Each token is answered by its own provider with its own
// policies (aws-sdk-go-v2's AssumeRoleWithWebIdentity; minio-go's
// AssumeRoleWithClientGrants for the client-credentials token); alice's
// hostile preferred_username ("al*") in ${jwt:preferred_username}
// matches only itself; an unknown role ARN is InvalidParameterValue; no
// token reaches the log.
func TestOIDCSeveralProviders(t *testing.T) {
	op1, op2 := oidctest.Start(t), oidctest.Start(t)
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL", op1.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID", oidctest.ClientID)
	t.Setenv("SHARDSTORE_IDENTITY_OPENID_CONFIG_URL_SECOND", op2.ConfigURL())
	t.Setenv("SHARDSTORE_IDENTITY_OPENID_CLIENT_ID_SECOND", oidctest.OtherClient)
	t.Setenv("SHARDSTORE_IDENTITY_OPENID_CLAIM_NAME_SECOND", "groups")
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL_SVC", op1.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID_SVC", oidctest.ServiceClient)
	t.Setenv("MINIO_IDENTITY_OPENID_CONFIG_URL_ROLE", op2.ConfigURL())
	t.Setenv("MINIO_IDENTITY_OPENID_CLIENT_ID_ROLE", oidctest.ServiceClient)
	t.Setenv("MINIO_IDENTITY_OPENID_ROLE_POLICY_ROLE", "writers")
	s := startServer(t, "--log-requests", "--log-level", "debug")
	c := ctx(t)
	root := s.root()
	if _, err := root.CreateBucket(c, &s3.CreateBucketInput{Bucket: aws.String("web")}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String("a.txt"), Body: strings.NewReader("a")}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"readers": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::web/home/${jwt:preferred_username}/*"}]}`,
		"writers": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject","s3:GetObject"],"Resource":"arn:aws:s3:::web/*"}]}`,
	} {
		f := filepath.Join(dir, name+".json")
		if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		s.adminJSON(t, nil, "policy", "create", name, f)
	}
	login := func(op *oidctest.Provider, user, client, secret string) string {
		t.Helper()
		tok, err := op.Login(user, client, secret)
		if err != nil {
			t.Fatalf("%s at %s: %v", user, op.Issuer, err)
		}
		return tok
	}
	grant := func(op *oidctest.Provider) string {
		t.Helper()
		tok, err := op.ClientCredentials(oidctest.ServiceClient, oidctest.ServiceSecret)
		if err != nil {
			t.Fatalf("client credentials at %s: %v", op.Issuer, err)
		}
		return tok
	}
	put := func(cl *s3.Client, key string) error {
		_, err := cl.PutObject(c, &s3.PutObjectInput{Bucket: aws.String("web"), Key: aws.String(key), Body: strings.NewReader("x")})
		return err
	}
	get := func(cl *s3.Client) error {
		_, err := cl.GetObject(c, &s3.GetObjectInput{Bucket: aws.String("web"), Key: aws.String("a.txt")})
		return err
	}
	tokens := []string{}
	session := func(token, arn string) *s3.Client {
		t.Helper()
		tokens = append(tokens, token)
		cl, code := webIdentityRole(t, s, token, arn)
		if code != "" {
			t.Fatalf("AssumeRoleWithWebIdentity: %s", code)
		}
		return cl
	}
	anyRole := "arn:aws:iam::000000000000:role/web"

	// The first provider: alice's policy claim, readonly.
	alice1 := session(login(op1, "alice", oidctest.ClientID, oidctest.ClientSecret), anyRole)
	if err := get(alice1); err != nil {
		t.Fatalf("alice of the first provider reads: %v", err)
	}
	wantCode(t, put(alice1, "x.txt"), "AccessDenied", 403)
	// The second: bob's groups claim, writers.
	bob2 := session(login(op2, "bob", oidctest.OtherClient, oidctest.OtherSecret), anyRole)
	if err := put(bob2, "bob.txt"); err != nil {
		t.Fatalf("bob of the second provider (writers) writes: %v", err)
	}
	// The second, alice: readers, under her own preferred_username only.
	alice2 := session(login(op2, "alice", oidctest.OtherClient, oidctest.OtherSecret), "")
	if err := put(alice2, "home/al*/notes.txt"); err != nil {
		t.Fatalf("alice writes under ${jwt:preferred_username}: %v", err)
	}
	for _, key := range []string{"home/alice/notes.txt", "home/al/notes.txt", "home/albert/x", "home/x.txt"} {
		wantCode(t, put(alice2, key), "AccessDenied", 403)
	}
	wantCode(t, get(alice2), "AccessDenied", 403)

	// The service client by its role ARN at the second provider: writers.
	role := oidcidp.RoleARN(oidctest.ServiceClient)
	svcRole := session(grant(op2), role)
	if err := put(svcRole, "svc.txt"); err != nil {
		t.Fatalf("the role's session writes: %v", err)
	}
	// The service client through minio-go's AssumeRoleWithClientGrants
	// at the first provider (its token's policy claim: readonly).
	svcToken := grant(op1)
	tokens = append(tokens, svcToken)
	mc, err := miniocreds.NewSTSClientGrants(s.endpoint, func() (*miniocreds.ClientGrantsToken, error) {
		return &miniocreds.ClientGrantsToken{Token: svcToken, Expiry: 3600}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := mc.GetWithContext(nil)
	if err != nil {
		t.Fatalf("minio-go client grants: %v", err)
	}
	svc := s.sessionS3(v)
	if err := get(svc); err != nil {
		t.Fatalf("client-grants session reads: %v", err)
	}
	wantCode(t, put(svc, "svc2.txt"), "AccessDenied", 403)

	for why, tc := range map[string]struct{ token, arn, code string }{
		"alice of the first client at the second":  {login(op2, "alice", oidctest.ClientID, oidctest.ClientSecret), anyRole, "InvalidIdentityToken"},
		"the second's service token without role":  {grant(op2), anyRole, "InvalidIdentityToken"},
		"the first's service token with the role":  {grant(op1), role, "InvalidIdentityToken"},
		"an unknown role ARN":                      {grant(op2), oidcidp.RoleARN("nobody"), "InvalidParameterValue"},
		"bob of the other client at the first one": {login(op1, "bob", oidctest.OtherClient, oidctest.OtherSecret), "", "InvalidIdentityToken"},
	} {
		tokens = append(tokens, tc.token)
		if _, code := webIdentityRole(t, s, tc.token, tc.arn); code != tc.code {
			t.Errorf("%s: %q, want %s", why, code, tc.code)
		}
	}
	log := s.stderr.String()
	if !strings.Contains(log, "OpenID Connect SECOND") || !strings.Contains(log, role) {
		t.Errorf("the providers are not announced in the log")
	}
	for _, tok := range tokens {
		if strings.Contains(log, tok) {
			t.Fatal("an identity token is in the server log")
		}
	}
}
