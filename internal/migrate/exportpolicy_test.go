package migrate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shardstore/shardstore/internal/policy"
)

// TestTranslatePolicy: what MinIO allows is never widened; what it
// denies is kept or the policy refused.
func TestTranslatePolicy(t *testing.T) {
	cases := []struct {
		name, doc string
		want      string // "" with err set: refused
		err       string
		note      string
	}{
		{name: "plain", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::b/*"]}]}`,
			want: `{"Statement":[{"Action":["s3:GetObject"],"Effect":"Allow","Resource":["arn:aws:s3:::b/*"]}],"Version":"2012-10-17"}`},
		{name: "unknown actions left out", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","admin:ConfigUpdate","kms:*"],"Resource":["arn:aws:s3:::*"]}]}`,
			want: `{"Statement":[{"Action":["s3:GetObject"],"Effect":"Allow","Resource":["arn:aws:s3:::*"]}],"Version":"2012-10-17"}`, note: "admin:ConfigUpdate, kms:*"},
		{name: "allow of nothing known dropped", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"kms:Status"},{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"}]}`,
			want: `{"Statement":[{"Action":["s3:ListBucket"],"Effect":"Allow","Resource":"arn:aws:s3:::b"}],"Version":"2012-10-17"}`, note: "dropped"},
		{name: "unreadable allow dropped", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"NoSuchOperator":{"aws:SourceIp":"1.2.3.4"}}},{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"}]}`,
			want: `{"Statement":[{"Action":["s3:ListBucket"],"Effect":"Allow","Resource":"arn:aws:s3:::b"}],"Version":"2012-10-17"}`, note: "(Allow) dropped"},
		{name: "unreadable deny refuses", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::*"},{"Effect":"Deny","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::*","Condition":{"NoSuchOperator":{"aws:SourceIp":"1.2.3.4"}}}]}`,
			err: "Deny"},
		{name: "deny of unknown actions only dropped", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::*"},{"Effect":"Deny","Action":"admin:ConfigUpdate"}]}`,
			want: `{"Statement":[{"Action":["s3:*"],"Effect":"Allow","Resource":"arn:aws:s3:::*"}],"Version":"2012-10-17"}`},
		{name: "deny with bad action list refuses", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":7,"Resource":"*"}]}`, err: "Deny"},
		{name: "notaction of unknown becomes everything", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","NotAction":["kms:*"],"Resource":"arn:aws:s3:::b/*"}]}`,
			want: `{"Statement":[{"Action":"*","Effect":"Deny","Resource":"arn:aws:s3:::b/*"}],"Version":"2012-10-17"}`},
		{name: "single statement object", doc: `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}}`,
			want: `{"Statement":[{"Action":["s3:GetObject"],"Effect":"Allow","Resource":"arn:aws:s3:::b/*"}],"Version":"2012-10-17"}`},
		{name: "nothing left", doc: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["admin:OBDInfo"]}]}`, err: "nothing"},
		{name: "no statement", doc: `{"Version":"2012-10-17"}`, err: "no Statement"},
		{name: "not json", doc: `{"Version":`, err: "JSON"},
		{name: "statement not a list", doc: `{"Statement":"x"}`, err: "statements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, notes, err := translatePolicy([]byte(c.doc))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %s, %v; want an error with %q", out, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v (notes %v)", err, notes)
			}
			if !samePolicy(out, []byte(c.want)) {
				t.Fatalf("got  %s\nwant %s", out, c.want)
			}
			if c.note != "" && !strings.Contains(strings.Join(notes, "\n"), c.note) {
				t.Fatalf("notes %q lack %q", notes, c.note)
			}
		})
	}
}

// TestSameDocument: the comparisons that make a re-run change nothing.
func TestSameDocument(t *testing.T) {
	exported := `<LifecycleConfiguration><Rule><ID>a</ID><Status>Enabled</Status><Filter><Prefix>tmp/</Prefix></Filter><Expiration><Days>30</Days></Expiration></Rule><Rule><ID>b</ID><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`
	answered := `<?xml version="1.0" encoding="UTF-8"?>
<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>a</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days></Expiration></Rule><Rule><ID>b</ID><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays></NoncurrentVersionExpiration></Rule></LifecycleConfiguration>`
	swapped := strings.Replace(strings.Replace(answered, "<Days>30", "<Days>X", 1), "<NoncurrentDays>7", "<NoncurrentDays>30", 1)
	swapped = strings.Replace(swapped, "<Days>X", "<Days>7", 1)
	for _, c := range []struct {
		sub, a, b string
		same      bool
	}{
		{"lifecycle", exported, answered, true},
		{"lifecycle", exported, swapped, false},
		{"lifecycle", exported, strings.Replace(answered, "tmp/", "tmp", 1), false},
		{"tagging", `<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value>2</Value></Tag></TagSet></Tagging>`,
			`<Tagging><TagSet><Tag><Key>b</Key><Value>2</Value></Tag><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>`, true},
		{"encryption", `<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>`,
			`<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault><BucketKeyEnabled>false</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>`, true},
		{"versioning", `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`, `<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>`, false},
		{"versioning", `<VersioningConfiguration><Status>Enabled</Status>`, `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`, false},
		{"policy", `{"b":1,"a":[1,2]}`, `{"a":[1,2],"b":1}`, true},
		{"policy", `{"a":[2,1]}`, `{"a":[1,2]}`, false},
	} {
		if got := sameDocument(c.sub, []byte(c.a), []byte(c.b)); got != c.same {
			t.Errorf("%s: same %v, want %v\n%s\n%s", c.sub, got, c.same, c.a, c.b)
		}
	}
}

func TestStripElements(t *testing.T) {
	doc := `<LifecycleConfiguration><Rule><ID>a</ID></Rule><ExpiryUpdatedAt>2026-11-28T04:36:03Z</ExpiryUpdatedAt></LifecycleConfiguration>`
	out, dropped := stripElements([]byte(doc), "ExpiryUpdatedAt")
	if !dropped || string(out) != `<LifecycleConfiguration><Rule><ID>a</ID></Rule></LifecycleConfiguration>` {
		t.Fatalf("%v %s", dropped, out)
	}
	// Only the root's children: a rule's own element of that name stays.
	nested := `<L><Rule><ExpiryUpdatedAt>x</ExpiryUpdatedAt></Rule></L>`
	if out, dropped := stripElements([]byte(nested), "ExpiryUpdatedAt"); dropped || string(out) != nested {
		t.Fatalf("%v %s", dropped, out)
	}
	if out, dropped := stripElements([]byte("<L><"), "X"); dropped || string(out) != "<L><" {
		t.Fatalf("%v %s", dropped, out)
	}
}

func TestHasChildren(t *testing.T) {
	for doc, want := range map[string]bool{
		`<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></NotificationConfiguration>`: false,
		`<BucketTargets></BucketTargets>`: false,
		``:                                false,
		`<NotificationConfiguration><QueueConfiguration><Queue>arn:minio:sqs::1:webhook</Queue></QueueConfiguration></NotificationConfiguration>`: true,
		`<unreadable`: true,
	} {
		if got := hasChildren([]byte(doc)); got != want {
			t.Errorf("%q: %v, want %v", doc, got, want)
		}
	}
}

// FuzzTranslatePolicy: whatever comes out is a policy shardstore
// accepts, and no input panics.
func FuzzTranslatePolicy(f *testing.F) {
	f.Add(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","kms:*"],"Resource":["arn:aws:s3:::b/*"]}]}`)
	f.Add(`{"Version":"2012-10-17","Statement":{"Effect":"Deny","NotAction":"admin:X","Resource":"*"}}`)
	f.Add(`{"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		out, _, err := translatePolicy([]byte(doc))
		if err != nil {
			return
		}
		if _, err := policy.Parse(out, policy.ParseOptions{Identity: true}); err != nil {
			t.Fatalf("translated %s into %s, which does not parse: %v", doc, out, err)
		}
		var v map[string]json.RawMessage
		if json.Unmarshal(out, &v) != nil {
			t.Fatal("not an object")
		}
	})
}
