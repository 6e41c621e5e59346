package policy

import (
	"errors"
	"strings"
	"testing"
)

const bucket = "examplebucket"

func mustParse(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := Parse([]byte(doc), ParseOptions{Bucket: bucket})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, doc)
	}
	return p
}

func obj(key string) string { return "arn:aws:s3:::" + bucket + "/" + key }

const bucketARN = "arn:aws:s3:::" + bucket

type evalCase struct {
	name string
	req  Request
	want Decision
}

func runCases(t *testing.T, p *Policy, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		if got := p.Evaluate(&c.req); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func anon(action, resource string, cond map[string][]string) Request {
	return Request{Action: action, Resource: resource, Anonymous: true, Conditions: cond}
}

func user(name, action, resource string, cond map[string][]string) Request {
	if cond == nil {
		cond = map[string][]string{}
	}
	cond["aws:username"] = []string{name}
	return Request{Action: action, Resource: resource, AccessKey: name, Conditions: cond}
}

// The examples below follow AWS's "Bucket policy examples" page.

func TestPublicReadPolicy(t *testing.T) {
	p := mustParse(t, `{
	  "Version": "2012-10-17",
	  "Statement": [{
	    "Sid": "PublicRead", "Effect": "Allow", "Principal": "*",
	    "Action": ["s3:GetObject", "s3:GetObjectVersion"],
	    "Resource": ["arn:aws:s3:::examplebucket/*"]
	  }]}`)
	runCases(t, p, []evalCase{
		{"anonymous get", anon("s3:GetObject", obj("a/b.jpg"), nil), Allowed},
		{"action case-insensitive", anon("S3:getobject", obj("x"), nil), Allowed},
		{"anonymous put", anon("s3:PutObject", obj("a"), nil), NotApplicable},
		{"anonymous list", anon("s3:ListBucket", bucketARN, nil), NotApplicable},
		{"other bucket", anon("s3:GetObject", "arn:aws:s3:::otherbucket/a", nil), NotApplicable},
		{"user get", user("alice", "s3:GetObject", obj("a"), nil), Allowed},
	})
	if !p.IsPublic() {
		t.Fatal("public-read policy not reported public")
	}
}

func TestSourceIPPolicy(t *testing.T) {
	p := mustParse(t, `{
	  "Version": "2012-10-17",
	  "Id": "S3PolicyId1",
	  "Statement": [
	    {"Sid": "IPAllow", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
	     "Resource": ["arn:aws:s3:::examplebucket", "arn:aws:s3:::examplebucket/*"],
	     "Condition": {"NotIpAddress": {"aws:SourceIp": ["192.0.2.0/24", "2001:DB8:1234:5678::/64"]}}},
	    {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*",
	     "Condition": {"IpAddress": {"aws:SourceIp": "192.0.2.0/24"}}}
	  ]}`)
	ip := func(a string) map[string][]string { return map[string][]string{"aws:sourceip": {a}} }
	runCases(t, p, []evalCase{
		{"inside v4", anon("s3:GetObject", obj("k"), ip("192.0.2.7")), Allowed},
		{"inside v6", user("bob", "s3:PutObject", obj("k"), ip("2001:db8:1234:5678::1")), NotApplicable},
		{"outside", user("bob", "s3:GetObject", obj("k"), ip("203.0.113.9")), Denied},
		{"v4-mapped v6 inside", anon("s3:GetObject", obj("k"), ip("::ffff:192.0.2.8")), Allowed},
		{"no source ip: negated operator holds", anon("s3:GetObject", obj("k"), nil), Denied},
	})
	if p.IsPublic() {
		t.Fatal("an IP-restricted policy is not public")
	}
}

func TestHomeDirectoryPolicy(t *testing.T) {
	p := mustParse(t, `{
	  "Version": "2012-10-17",
	  "Statement": [
	    {"Sid": "List", "Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::111122223333:user/alice", "arn:aws:iam::111122223333:user/team/bob"]},
	     "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::examplebucket",
	     "Condition": {"StringLike": {"s3:prefix": ["", "home/", "home/${aws:username}/*"]}}},
	    {"Sid": "Home", "Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::111122223333:user/alice", "arn:aws:iam::111122223333:user/team/bob"]},
	     "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
	     "Resource": "arn:aws:s3:::examplebucket/home/${aws:username}/*"}
	  ]}`)
	prefix := func(p string) map[string][]string { return map[string][]string{"s3:prefix": {p}} }
	runCases(t, p, []evalCase{
		{"alice lists her home", user("alice", "s3:ListBucket", bucketARN, prefix("home/alice/docs")), Allowed},
		{"alice lists home/", user("alice", "s3:ListBucket", bucketARN, prefix("home/")), Allowed},
		{"alice lists bob's home", user("alice", "s3:ListBucket", bucketARN, prefix("home/bob/")), NotApplicable},
		{"alice writes her home", user("alice", "s3:PutObject", obj("home/alice/a.txt"), nil), Allowed},
		{"alice writes bob's home", user("alice", "s3:PutObject", obj("home/bob/a.txt"), nil), NotApplicable},
		{"bob (under a path) reads his", user("bob", "s3:GetObject", obj("home/bob/x"), nil), Allowed},
		{"carol is not named", user("carol", "s3:GetObject", obj("home/carol/x"), nil), NotApplicable},
		{"anonymous", anon("s3:GetObject", obj("home/alice/x"), nil), NotApplicable},
	})
	if p.IsPublic() {
		t.Fatal("named principals are not public")
	}
}

func TestDenyWinsAndConditions(t *testing.T) {
	p := mustParse(t, `{
	  "Version": "2012-10-17",
	  "Statement": [
	    {"Effect": "Allow", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::examplebucket/*"},
	    {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::examplebucket/*",
	     "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
	    {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::examplebucket/*",
	     "Condition": {"StringNotEquals": {"s3:x-amz-acl": "bucket-owner-full-control"}}},
	    {"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": "arn:aws:s3:::examplebucket/locked/*"},
	    {"Effect": "Deny", "NotPrincipal": {"AWS": "arn:aws:iam::111122223333:user/admin"}, "Action": "s3:GetObject",
	     "Resource": "arn:aws:s3:::examplebucket/admin/*"},
	    {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/late/*",
	     "Condition": {"DateGreaterThan": {"aws:CurrentTime": "2026-01-01T00:00:00Z"}}}
	  ]}`)
	tls := func(v string, extra ...string) map[string][]string {
		m := map[string][]string{"aws:securetransport": {v}, "aws:currenttime": {"2026-06-01T00:00:00Z"}}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = []string{extra[i+1]}
		}
		return m
	}
	runCases(t, p, []evalCase{
		{"get over TLS", user("bob", "s3:GetObject", obj("k"), tls("true")), Allowed},
		{"get over plain HTTP", user("bob", "s3:GetObject", obj("k"), tls("false")), Denied},
		{"put with the required acl", user("bob", "s3:PutObject", obj("k"), tls("true", "s3:x-amz-acl", "bucket-owner-full-control")), Allowed},
		{"put without acl", user("bob", "s3:PutObject", obj("k"), tls("true")), Denied},
		{"delete locked", user("bob", "s3:DeleteObject", obj("locked/x"), tls("true")), Denied},
		{"delete elsewhere", user("bob", "s3:DeleteObject", obj("free/x"), tls("true")), Allowed},
		{"admin reads admin/", user("admin", "s3:GetObject", obj("admin/x"), tls("true")), Allowed},
		{"bob reads admin/", user("bob", "s3:GetObject", obj("admin/x"), tls("true")), Denied},
		{"after the date", user("bob", "s3:GetObject", obj("late/x"), tls("true")), Denied},
	})
}

func TestConditionOperators(t *testing.T) {
	p := mustParse(t, `{
	  "Version": "2012-10-17",
	  "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::examplebucket",
	     "Condition": {
	       "NumericLessThanEquals": {"s3:max-keys": "10"},
	       "StringEqualsIgnoreCase": {"s3:delimiter": "/"},
	       "StringLikeIfExists": {"aws:UserAgent": "aws-cli/*"},
	       "Null": {"aws:Referer": "true"},
	       "ForAnyValue:StringEquals": {"aws:TagKeys": ["team", "env"]}
	     }}]}`)
	base := func(kv ...string) map[string][]string {
		m := map[string][]string{"s3:max-keys": {"5"}, "s3:delimiter": {"/"}, "aws:tagkeys": {"owner", "team"}}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = []string{kv[i+1]}
		}
		return m
	}
	runCases(t, p, []evalCase{
		{"all hold", anon("s3:ListBucket", bucketARN, base()), Allowed},
		{"max-keys too large", anon("s3:ListBucket", bucketARN, base("s3:max-keys", "11")), NotApplicable},
		{"max-keys absent", anon("s3:ListBucket", bucketARN, base("s3:max-keys", "")), NotApplicable},
		{"user agent matches", anon("s3:ListBucket", bucketARN, base("aws:useragent", "aws-cli/2.1")), Allowed},
		{"user agent differs", anon("s3:ListBucket", bucketARN, base("aws:useragent", "curl/8")), NotApplicable},
		{"referer present", anon("s3:ListBucket", bucketARN, base("aws:referer", "x")), NotApplicable},
		{"no tag key in the set", anon("s3:ListBucket", bucketARN, base("aws:tagkeys", "owner")), NotApplicable},
	})
}

func TestWildcardsAndVariables(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"a*", "abc", true}, {"a*c", "abbbc", true}, {"a*c", "abcd", false}, {"a?c", "abc", true},
		{"a?c", "ac", false}, {"*", "", true}, {"*/x/*", "a/b/x/c", true}, {"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false}, {"${*}x", "*x", true}, {"${*}x", "yx", false}, {"q${?}", "q?", true},
	} {
		if got := compilePattern(c.pattern, true).match(c.s, nil); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	// A variable with no value matches nothing; in a 2008 policy it is text.
	p := compilePattern("home/${aws:username}/*", true)
	if p.match("home//x", map[string][]string{}) || !p.match("home/al*ce/x", map[string][]string{"aws:username": {"al*ce"}}) ||
		p.match("home/alxce/x", map[string][]string{"aws:username": {"al*ce"}}) {
		t.Fatal("variable substitution")
	}
	old := mustParse(t, `{"Version": "2008-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
	  "Resource": "arn:aws:s3:::examplebucket/${aws:username}/*"}]}`)
	if old.Evaluate(&Request{Action: "s3:GetObject", Resource: obj("${aws:username}/k"), Anonymous: true}) != Allowed {
		t.Fatal("2008-10-17 policies take ${...} literally")
	}
}

func TestParseRefusals(t *testing.T) {
	wrap := func(stmt string) string { return `{"Version": "2012-10-17", "Statement": [` + stmt + `]}` }
	ok := `"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"`
	cases := []struct{ name, doc, msg string }{
		{"not json", `{"Version": `, "invalid Json"},
		{"not an object", `["x"]`, "first byte must be '{'"},
		{"empty", ``, "first byte must be '{'"},
		{"trailing data", wrap(`{`+ok+`}`) + `{}`, "invalid Json"},
		{"bad version", `{"Version": "2020-01-01", "Statement": [{` + ok + `}]}`, "valid version"},
		{"no statement", `{"Version": "2012-10-17"}`, "Statement"},
		{"unknown top field", `{"Version": "2012-10-17", "Statment": []}`, "Unknown field"},
		{"unknown action", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObjekt", "Resource": "arn:aws:s3:::examplebucket/*"}`), "invalid action"},
		{"other service", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "ec2:RunInstances", "Resource": "arn:aws:s3:::examplebucket/*"}`), "invalid action"},
		{"wildcard matching nothing", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:Frob*", "Resource": "arn:aws:s3:::examplebucket/*"}`), "invalid action"},
		{"other bucket", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::otherbucket/*"}`), "invalid resource"},
		{"resource star", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}`), "invalid resource"},
		{"action not for resource", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket"}`), "does not apply"},
		{"bucket action on objects", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::examplebucket/*"}`), "does not apply"},
		{"no principal", wrap(`{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"}`), "Principal"},
		{"unknown service principal", wrap(`{"Effect": "Allow", "Principal": {"Service": "nosuchservice.amazonaws.com"}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"}`), "principal"},
		{"principal string", wrap(`{"Effect": "Allow", "Principal": "alice", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"}`), "principal"},
		{"bad effect", wrap(`{"Effect": "Permit", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"}`), "effect"},
		{"unknown operator", wrap(`{` + ok + `, "Condition": {"StringEqualz": {"s3:prefix": "a"}}}`), "Invalid Condition type"},
		{"unknown key", wrap(`{` + ok + `, "Condition": {"StringEquals": {"s3:frobnicate": "a"}}}`), "invalid condition key"},
		{"bad ip", wrap(`{` + ok + `, "Condition": {"IpAddress": {"aws:SourceIp": "300.1.1.1"}}}`), "Invalid Condition value"},
		{"bad number", wrap(`{` + ok + `, "Condition": {"NumericLessThan": {"s3:max-keys": "ten"}}}`), "Invalid Condition value"},
		{"bad date", wrap(`{` + ok + `, "Condition": {"DateLessThan": {"aws:CurrentTime": "tomorrow"}}}`), "Invalid Condition value"},
		{"duplicate sid", wrap(`{"Sid": "a", ` + ok + `}, {"Sid": "a", ` + ok + `}`), "unique"},
		{"both action kinds", wrap(`{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "NotAction": "s3:PutObject", "Resource": "arn:aws:s3:::examplebucket/*"}`), "not both"},
		{"too large", wrap(`{"Sid": "` + strings.Repeat("x", MaxBucketPolicySize) + `", ` + ok + `}`), "maximum allowed document size"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc), ParseOptions{Bucket: bucket})
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.msg)
		}
	}
}

func TestNotActionNotResource(t *testing.T) {
	p := mustParse(t, `{"Version": "2012-10-17", "Statement": [
	  {"Effect": "Deny", "Principal": "*", "NotAction": ["s3:GetObject", "s3:ListBucket"],
	   "NotResource": "arn:aws:s3:::examplebucket/public/*"}]}`)
	runCases(t, p, []evalCase{
		{"get anywhere", anon("s3:GetObject", obj("private/x"), nil), NotApplicable},
		{"put in private", anon("s3:PutObject", obj("private/x"), nil), Denied},
		{"put in public", anon("s3:PutObject", obj("public/x"), nil), NotApplicable},
	})
}

func FuzzParse(f *testing.F) {
	f.Add(`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"}]}`)
	f.Add(`{"Statement": {"Effect": "Deny", "Principal": {"AWS": ["arn:aws:iam::1:user/a"]}, "Action": "s3:*", "Resource": ["arn:aws:s3:::examplebucket", "arn:aws:s3:::examplebucket/*"], "Condition": {"ForAnyValue:StringLike": {"s3:prefix": ["${aws:username}/*"]}, "IpAddressIfExists": {"aws:SourceIp": "10.0.0.0/8"}}}}`)
	f.Add(`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:List*", "Resource": "arn:aws:s3:::examplebucket", "Condition": {"Null": {"s3:prefix": "false"}, "DateLessThan": {"aws:CurrentTime": "2030-01-01"}}}]}`)
	f.Add(`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": ["logging.s3.amazonaws.com", "logs.eu-west-1.amazonaws.com"]}, "Action": "s3:PutObject", "Resource": "arn:aws:s3:::examplebucket/log/*", "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:s3:::src"}, "StringEqualsIfExists": {"aws:SourceAccount": "1"}}}]}`)
	f.Add(`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "NotPrincipal": {"AWS": "a"}, "Action": ["s3:AbortMultipartUpload", "s3:ListBucketMultipartUploads"], "Resource": ["arn:aws:s3:::examplebucket", "arn:aws:s3:::examplebucket/*"], "Condition": {"ForAllValues:StringLikeIfExists": {"s3:RequestObjectTagKeys": "k*"}}}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		stored, serr := Parse([]byte(doc), ParseOptions{Bucket: bucket, Stored: true})
		p, err := Parse([]byte(doc), ParseOptions{Bucket: bucket})
		if err == nil && serr != nil {
			t.Fatalf("a document PutBucketPolicy accepts does not load when stored: %v", serr)
		}
		if err != nil {
			if p != nil {
				t.Fatal("policy returned with an error")
			}
			p = stored
			if p == nil {
				return
			}
		}
		for _, r := range []Request{
			anon("s3:GetObject", obj("a/b"), map[string][]string{"aws:sourceip": {"10.1.2.3"}, "s3:prefix": {"x/"}}),
			user("u", "s3:ListBucket", bucketARN, nil),
			{Action: "s3:PutObject", Resource: obj("log/x"), Service: LoggingService, Conditions: map[string][]string{"aws:sourcearn": {"arn:aws:s3:::src"}}},
		} {
			_ = p.Evaluate(&r)
		}
		_ = p.IsPublic()
	})
}
