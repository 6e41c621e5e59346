package policy

import (
	"errors"
	"strings"
	"testing"
)

// wrapStmt is a bucket policy of examplebucket with the given statements.
func wrapStmt(stmts ...string) string {
	return `{"Version": "2012-10-17", "Statement": [` + strings.Join(stmts, ",") + `]}`
}

// refused asserts that doc is refused as MalformedPolicy with a message
// containing msg.
func refused(t *testing.T, name, doc, msg string, opts ParseOptions) {
	t.Helper()
	p, err := Parse([]byte(doc), opts)
	var pe *Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, msg) || p != nil {
		t.Errorf("%s: policy %v, error %v, want a MalformedPolicy error containing %q", name, p != nil, err, msg)
	}
}

// TestNotPrincipalWithAllow: IAM's reference ("NotPrincipal must be used
// with "Effect":"Deny". Using it with "Effect":"Allow" is not
// supported.") and ceph s3-tests' test_bucket_policy_allow_notprincipal
// (400 MalformedPolicy or InvalidArgument): PutBucketPolicy refuses it.
// A document an earlier release stored keeps its meaning (Stored):
// everyone but the principals named.
func TestNotPrincipalWithAllow(t *testing.T) {
	allow := wrapStmt(`{"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::s3tenant1:root"}, "Action": "s3:ListBucket",
	  "Resource": ["arn:aws:s3:::examplebucket", "arn:aws:s3:::examplebucket/*"]}`)
	refused(t, "allow", allow, "NotPrincipal", ParseOptions{Bucket: bucket})
	// In a list of statements, one such statement refuses the document.
	refused(t, "allow among others", wrapStmt(
		`{"Effect": "Deny", "NotPrincipal": {"AWS": "alice"}, "Action": "s3:*", "Resource": "arn:aws:s3:::examplebucket/*"}`,
		`{"Effect": "Allow", "NotPrincipal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*"}`),
		"NotPrincipal", ParseOptions{Bucket: bucket})

	deny := mustParse(t, wrapStmt(`{"Effect": "Deny", "NotPrincipal": {"AWS": ["alice", "arn:aws:iam::1:root"]}, "Action": "s3:*",
	  "Resource": "arn:aws:s3:::examplebucket/*"}`))
	runCases(t, deny, []evalCase{
		{"deny: bob", user("bob", "s3:GetObject", obj("k"), nil), Denied},
		{"deny: anonymous", anon("s3:GetObject", obj("k"), nil), Denied},
		{"deny: alice is spared", user("alice", "s3:GetObject", obj("k"), nil), NotApplicable},
		{"deny: root is spared", Request{Action: "s3:GetObject", Resource: obj("k"), Root: true, AccessKey: "root"}, NotApplicable},
		{"deny: a service", Request{Action: "s3:PutObject", Resource: obj("k"), Service: LoggingService}, Denied},
	})

	stored, err := Parse([]byte(allow), ParseOptions{Bucket: bucket, Stored: true})
	if err != nil {
		t.Fatalf("a stored NotPrincipal/Allow document: %v", err)
	}
	runCases(t, stored, []evalCase{
		{"stored: bob", user("bob", "s3:ListBucket", bucketARN, nil), Allowed},
		{"stored: anonymous", anon("s3:ListBucket", bucketARN, nil), Allowed},
		{"stored: root is named", Request{Action: "s3:ListBucket", Resource: bucketARN, Root: true}, NotApplicable},
	})
	if !stored.IsPublic() {
		t.Error("an Allow to everyone but one account is public")
	}
}

// TestServicePrincipals: S3 accepts a Service principal of a service that
// exists and refuses one that does not ("Invalid principal in policy");
// a service request is named by "*" and by its own Service principal
// only, never by an "AWS" or "CanonicalUser" value spelling its name.
func TestServicePrincipals(t *testing.T) {
	stmt := func(principal string) string {
		return wrapStmt(`{"Effect": "Allow", "Principal": ` + principal + `, "Action": "s3:PutObject", "Resource": "arn:aws:s3:::examplebucket/logs/*"}`)
	}
	for _, ok := range []string{
		`{"Service": "logging.s3.amazonaws.com"}`,
		`{"Service": ["logging.s3.amazonaws.com", "cloudtrail.amazonaws.com"]}`,
		`{"Service": "delivery.logs.amazonaws.com", "AWS": "alice"}`,
		`{"Service": "logs.us-east-1.amazonaws.com"}`,
		`{"Service": "logs.us-gov-west-1.amazonaws.com"}`,
		`{"Service": "logs.ap-southeast-3.amazonaws.com"}`,
	} {
		if _, err := Parse([]byte(stmt(ok)), ParseOptions{Bucket: bucket}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"Service": "logging.s3.amazonaws.comkaboom"}`,
		`{"Service": "amazonaws.com"}`,
		`{"Service": "LOGGING.S3.AMAZONAWS.COM"}`,
		`{"Service": "logging.s3.amazonaws.com "}`,
		`{"Service": "*"}`,
		`{"Service": ""}`,
		`{"Service": []}`,
		`{"Service": 42}`,
		`{"Service": {"x": 1}}`,
		`{"Service": ["logging.s3.amazonaws.com", "nosuch.amazonaws.com"]}`,
		`{"Service": "logs..amazonaws.com"}`,
		`{"Service": "logs.us-east-x.amazonaws.com"}`,
		`{"Service": "logs.US-EAST-1.amazonaws.com"}`,
		`{"Service": "logs.us--1.amazonaws.com"}`,
		`{"Service": "logs.us-east-1.amazonaws.com.evil"}`,
		`{"Service": "logs.` + strings.Repeat("a-", 40) + `1.amazonaws.com"}`,
		`{"Service": "logs.us-east-1\u0000.amazonaws.com"}`,
		`{"Federated": "cognito-identity.amazonaws.com"}`,
	} {
		refused(t, bad, stmt(bad), "principal", ParseOptions{Bucket: bucket})
	}

	logging := Request{Action: "s3:PutObject", Resource: obj("logs/x"), Service: LoggingService,
		Conditions: map[string][]string{"aws:sourcearn": {"arn:aws:s3:::src"}}}
	otherService := logging
	otherService.Service = "cloudtrail.amazonaws.com"
	// A user whose access key spells the service's name is a user.
	impostor := user(LoggingService, "s3:PutObject", obj("logs/x"), nil)
	for _, c := range []struct {
		principal                     string
		logging, other, impostorAllow Decision
	}{
		{`{"Service": "logging.s3.amazonaws.com"}`, Allowed, NotApplicable, NotApplicable},
		{`"*"`, Allowed, Allowed, Allowed},
		{`{"AWS": "*"}`, Allowed, Allowed, Allowed},
		{`{"AWS": "logging.s3.amazonaws.com"}`, NotApplicable, NotApplicable, Allowed},
		{`{"CanonicalUser": "logging.s3.amazonaws.com"}`, NotApplicable, NotApplicable, NotApplicable},
		{`{"Service": "cloudtrail.amazonaws.com"}`, NotApplicable, Allowed, NotApplicable},
	} {
		p := mustParse(t, stmt(c.principal))
		runCases(t, p, []evalCase{
			{c.principal + ": logging", logging, c.logging},
			{c.principal + ": another service", otherService, c.other},
			{c.principal + ": a user named like the service", impostor, c.impostorAllow},
		})
	}
	if mustParse(t, stmt(`{"Service": "logging.s3.amazonaws.com"}`)).IsPublic() {
		t.Error("a policy granting a service is not public")
	}

	// The server access logging policy of AWS's documentation, with its
	// source conditions.
	p := mustParse(t, wrapStmt(`{"Sid": "S3ServerAccessLogsPolicy", "Effect": "Allow",
	  "Principal": {"Service": "logging.s3.amazonaws.com"}, "Action": ["s3:PutObject"],
	  "Resource": "arn:aws:s3:::examplebucket/log/*",
	  "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:s3:::src"}, "StringEquals": {"aws:SourceAccount": "owner1"}}}`))
	from := func(arn, account string) Request {
		r := Request{Action: "s3:PutObject", Resource: obj("log/2026-01-01"), Service: LoggingService, Conditions: map[string][]string{}}
		if arn != "" {
			r.Conditions["aws:sourcearn"] = []string{arn}
		}
		if account != "" {
			r.Conditions["aws:sourceaccount"] = []string{"canonical-of-" + account, account}
		}
		return r
	}
	runCases(t, p, []evalCase{
		{"the source bucket", from("arn:aws:s3:::src", "owner1"), Allowed},
		{"another source bucket", from("arn:aws:s3:::other", "owner1"), NotApplicable},
		{"another owner", from("arn:aws:s3:::src", "owner2"), NotApplicable},
		{"no source", from("", ""), NotApplicable},
	})
}

// TestIfExists: an ...IfExists operator holds when the request lacks the
// key and tests the value as its base operator when it has it, for every
// operator family; Null has no IfExists form.
func TestIfExists(t *testing.T) {
	for _, c := range []struct {
		op, key, policyValue, present string
		presentWant                   Decision
	}{
		{"StringEqualsIfExists", "s3:x-amz-server-side-encryption", "AES256", "aws:kms", NotApplicable},
		{"StringEqualsIfExists", "s3:x-amz-server-side-encryption", "AES256", "AES256", Allowed},
		{"StringNotEqualsIfExists", "s3:x-amz-acl", "public-read", "public-read", NotApplicable},
		{"StringNotEqualsIfExists", "s3:x-amz-acl", "public-read", "private", Allowed},
		{"StringEqualsIgnoreCaseIfExists", "aws:useragent", "BOTO3", "boto3", Allowed},
		{"StringLikeIfExists", "aws:referer", "http://www.example.com/*", "http://www.example.com/index.html", Allowed},
		{"StringLikeIfExists", "aws:referer", "http://www.example.com/*", "http://example.com", NotApplicable},
		{"StringNotLikeIfExists", "aws:referer", "http://evil.*", "http://evil.example", NotApplicable},
		{"NumericLessThanIfExists", "s3:max-keys", "10", "5", Allowed},
		{"NumericLessThanIfExists", "s3:max-keys", "10", "10", NotApplicable},
		{"NumericGreaterThanEqualsIfExists", "s3:max-keys", "10", "10", Allowed},
		{"NumericNotEqualsIfExists", "s3:max-keys", "10", "10", NotApplicable},
		{"DateGreaterThanIfExists", "aws:currenttime", "2020-01-01T00:00:00Z", "2026-01-01T00:00:00Z", Allowed},
		{"DateLessThanIfExists", "aws:currenttime", "2020-01-01T00:00:00Z", "2026-01-01T00:00:00Z", NotApplicable},
		{"BoolIfExists", "aws:securetransport", "true", "false", NotApplicable},
		{"BoolIfExists", "aws:securetransport", "true", "true", Allowed},
		{"BinaryEqualsIfExists", "aws:useragent", "Ym90bzM=", "boto3", Allowed},
		{"IpAddressIfExists", "aws:sourceip", "10.0.0.0/8", "192.0.2.1", NotApplicable},
		{"NotIpAddressIfExists", "aws:sourceip", "10.0.0.0/8", "192.0.2.1", Allowed},
		{"ArnLikeIfExists", "aws:sourcearn", "arn:aws:s3:::src*", "arn:aws:s3:::src-1", Allowed},
		{"ArnNotEqualsIfExists", "aws:sourcearn", "arn:aws:s3:::src", "arn:aws:s3:::src", NotApplicable},
		{"ForAllValues:StringEqualsIfExists", "s3:requestobjecttagkeys", "a", "b", NotApplicable},
		{"ForAnyValue:StringEqualsIfExists", "s3:requestobjecttagkeys", "a", "a", Allowed},
	} {
		p := mustParse(t, wrapStmt(`{"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::examplebucket",
		  "Condition": {"`+c.op+`": {"`+c.key+`": "`+c.policyValue+`"}}}`))
		runCases(t, p, []evalCase{
			{c.op + " absent", anon("s3:ListBucket", bucketARN, map[string][]string{}), Allowed},
			{c.op + " empty", anon("s3:ListBucket", bucketARN, map[string][]string{c.key: {}}), Allowed},
			{c.op + " " + c.present, anon("s3:ListBucket", bucketARN, map[string][]string{c.key: {c.present}}), c.presentWant},
		})
	}
	// The same operators without IfExists: an absent key fails the
	// positive ones and holds for the negated ones.
	for op, want := range map[string]Decision{"StringEquals": NotApplicable, "StringNotEquals": Allowed,
		"NumericLessThan": NotApplicable, "NotIpAddress": Allowed, "ArnNotLike": Allowed, "BoolIfExists": Allowed} {
		value := map[string]string{"NumericLessThan": "10", "NotIpAddress": "10.0.0.0/8", "BoolIfExists": "true"}[op]
		if value == "" {
			value = "x"
		}
		p := mustParse(t, wrapStmt(`{"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::examplebucket",
		  "Condition": {"`+op+`": {"aws:referer": "`+value+`"}}}`))
		runCases(t, p, []evalCase{{op + " absent", anon("s3:ListBucket", bucketARN, nil), want}})
	}
	for _, bad := range []string{"NullIfExists", "IfExists", "StringEqualsIfExist", "StringEqualsifexistsIfExists", "ForAllValues:IfExists"} {
		refused(t, bad, wrapStmt(`{"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::examplebucket",
		  "Condition": {"`+bad+`": {"aws:referer": "x"}}}`), "Invalid Condition type", ParseOptions{Bucket: bucket})
	}
}

// TestActionsApplyToResources: S3 refuses a statement naming an action
// that none of its resources can be the subject of ("Action does not
// apply to any resource(s) in statement") and accepts the multipart
// actions on the objects they act on.
func TestActionsApplyToResources(t *testing.T) {
	const b, o = `"arn:aws:s3:::examplebucket"`, `"arn:aws:s3:::examplebucket/*"`
	for _, c := range []struct {
		actions, resources string
		ok                 bool
	}{
		{`["s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]`, o, true},
		{`["s3:AbortMultipartUpload", "s3:ListMultipartUploadParts", "s3:PutObject"]`, `"arn:aws:s3:::examplebucket/uploads/*"`, true},
		{`"s3:ListBucketMultipartUploads"`, b, true},
		{`["s3:ListBucketMultipartUploads", "s3:AbortMultipartUpload"]`, `[` + b + `, ` + o + `]`, true},
		{`"s3:*MultipartUpload*"`, o, true},
		{`"s3:*"`, b, true},
		{`"*"`, o, true},
		{`"s3:AbortMultipartUpload"`, b, false},
		{`"s3:ListMultipartUploadParts"`, b, false},
		{`"s3:ListBucketMultipartUploads"`, o, false},
		{`["s3:ListBucketMultipartUploads", "s3:AbortMultipartUpload"]`, o, false},
		{`["s3:ListBucketMultipartUploads", "s3:AbortMultipartUpload"]`, b, false},
		{`"s3:PutObject"`, b, false},
		{`"s3:ListBucket"`, `"arn:aws:s3:::examplebucket/x"`, false},
	} {
		doc := wrapStmt(`{"Effect": "Allow", "Principal": "*", "Action": ` + c.actions + `, "Resource": ` + c.resources + `}`)
		_, err := Parse([]byte(doc), ParseOptions{Bucket: bucket})
		if c.ok && err != nil {
			t.Errorf("%s on %s: %v", c.actions, c.resources, err)
		}
		if !c.ok {
			refused(t, c.actions+" on "+c.resources, doc, "Action does not apply to any resource(s) in statement", ParseOptions{Bucket: bucket})
		}
	}
	p := mustParse(t, wrapStmt(`{"Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": ["s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
	  "Resource": "arn:aws:s3:::examplebucket/uploads/*"}`, `{"Effect": "Deny", "Principal": "*", "Action": "s3:AbortMultipartUpload",
	  "Resource": "arn:aws:s3:::examplebucket/uploads/keep/*"}`))
	runCases(t, p, []evalCase{
		{"abort", user("bob", "s3:AbortMultipartUpload", obj("uploads/a"), nil), Allowed},
		{"list parts", user("bob", "s3:ListMultipartUploadParts", obj("uploads/a"), nil), Allowed},
		{"outside the prefix", user("bob", "s3:AbortMultipartUpload", obj("other"), nil), NotApplicable},
		{"another user", user("carol", "s3:AbortMultipartUpload", obj("uploads/a"), nil), NotApplicable},
		{"denied", user("bob", "s3:AbortMultipartUpload", obj("uploads/keep/a"), nil), Denied},
	})
}

// TestSSECustomerAlgorithmKey: the SSE-C condition key of ceph s3-tests'
// test_encryption_sse_c_enforced_with_bucket_policy and
// test_encryption_sse_c_deny_algo_with_bucket_policy.
func TestSSECustomerAlgorithmKey(t *testing.T) {
	const key = "s3:x-amz-server-side-encryption-customer-algorithm"
	enforced := mustParse(t, wrapStmt(`{"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::examplebucket/*",
	  "Condition": {"Null": {"s3:x-amz-server-side-encryption-customer-algorithm": "true"}}}`))
	algo := mustParse(t, wrapStmt(`{"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::examplebucket/*",
	  "Condition": {"StringNotEquals": {"S3:X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256"}}}`))
	with := func(v string) map[string][]string { return map[string][]string{key: {v}} }
	runCases(t, enforced, []evalCase{
		{"null: no SSE-C", user("alice", "s3:PutObject", obj("k"), nil), Denied},
		{"null: SSE-C", user("alice", "s3:PutObject", obj("k"), with("AES256")), NotApplicable},
		{"null: another action", user("alice", "s3:GetObject", obj("k"), nil), NotApplicable},
	})
	runCases(t, algo, []evalCase{
		{"algo: AES192", user("alice", "s3:PutObject", obj("k"), with("AES192")), Denied},
		{"algo: AES256", user("alice", "s3:PutObject", obj("k"), with("AES256")), NotApplicable},
		{"algo: none", user("alice", "s3:PutObject", obj("k"), nil), Denied},
	})
}
