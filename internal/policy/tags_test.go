package policy

import (
	"errors"
	"testing"
)

// TestObjectTagConditions: the tag condition keys of AWS's "Tagging and
// access control policies" examples parse and evaluate as documented,
// with the request's values under lower-cased keys as the S3 layer
// supplies them (s3:existingobjecttag/<key>, s3:requestobjecttag/<key>,
// s3:requestobjecttagkeys).
func TestObjectTagConditions(t *testing.T) {
	p := mustParse(t, `{
	  "Version": "2012-10-17",
	  "Statement": [
	    {"Sid": "ReadEnvironmentProduction", "Effect": "Allow", "Principal": "*",
	     "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*",
	     "Condition": {"StringEquals": {"s3:ExistingObjectTag/Environment": "Production"}}},
	    {"Sid": "PutWithAllowedTagKeys", "Effect": "Allow", "Principal": {"AWS": "alice"},
	     "Action": ["s3:PutObject", "s3:PutObjectTagging"], "Resource": "arn:aws:s3:::examplebucket/*",
	     "Condition": {"ForAllValues:StringLike": {"s3:RequestObjectTagKeys": ["Owner", "CreationDate"]}}},
	    {"Sid": "TagProjectX", "Effect": "Allow", "Principal": {"AWS": "bob"},
	     "Action": "s3:PutObjectTagging", "Resource": "arn:aws:s3:::examplebucket/*",
	     "Condition": {"StringEquals": {"s3:RequestObjectTag/Project": "X"},
	                   "ForAnyValue:StringEquals": {"s3:RequestObjectTagKeys": "Project"}}}
	  ]}`)
	tagged := func(kv ...string) map[string][]string {
		m := map[string][]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = append(m[kv[i]], kv[i+1])
		}
		return m
	}
	runCases(t, p, []evalCase{
		{"production object", anon("s3:GetObject", obj("a"), tagged("s3:existingobjecttag/environment", "Production")), Allowed},
		{"test object", anon("s3:GetObject", obj("a"), tagged("s3:existingobjecttag/environment", "Test")), NotApplicable},
		{"untagged object", anon("s3:GetObject", obj("a"), nil), NotApplicable},
		{"allowed tag keys", user("alice", "s3:PutObject", obj("a"), tagged("s3:requestobjecttagkeys", "Owner", "s3:requestobjecttagkeys", "CreationDate")), Allowed},
		{"no tags at all", user("alice", "s3:PutObject", obj("a"), nil), Allowed},
		{"a key not allowed", user("alice", "s3:PutObjectTagging", obj("a"), tagged("s3:requestobjecttagkeys", "Owner", "s3:requestobjecttagkeys", "Secret")), NotApplicable},
		{"tag keys are case-sensitive values", user("alice", "s3:PutObject", obj("a"), tagged("s3:requestobjecttagkeys", "owner")), NotApplicable},
		{"project X", user("bob", "s3:PutObjectTagging", obj("a"), tagged("s3:requestobjecttag/project", "X", "s3:requestobjecttagkeys", "Project")), Allowed},
		{"project Y", user("bob", "s3:PutObjectTagging", obj("a"), tagged("s3:requestobjecttag/project", "Y", "s3:requestobjecttagkeys", "Project")), NotApplicable},
		{"no project tag", user("bob", "s3:PutObjectTagging", obj("a"), nil), NotApplicable},
	})
	// A tag key is needed after the slash.
	for _, key := range []string{"s3:ExistingObjectTag/", "s3:RequestObjectTag/", "s3:ExistingObjectTag"} {
		_, err := Parse([]byte(`{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
		  "Action": "s3:GetObject", "Resource": "arn:aws:s3:::examplebucket/*",
		  "Condition": {"StringEquals": {"`+key+`": "x"}}}]}`), ParseOptions{Bucket: bucket})
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a MalformedPolicy error", key, err)
		}
	}
}
