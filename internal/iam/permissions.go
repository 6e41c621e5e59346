package iam

import (
	"github.com/shardstore/shardstore/internal/access"
)

// permissions are an identity's auth.Permissions: its user's and
// groups' policies narrowed by an access key's or session's own policy,
// evaluated as package access evaluates an IAM principal's.
type permissions = access.IdentityPolicies

// builtinPolicies come with the server, under the names MinIO users know.
var builtinPolicies = map[string]string{
	"readwrite": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`,
	"readonly": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow",
		"Action":["s3:GetBucketLocation","s3:GetObject","s3:ListBucket","s3:ListAllMyBuckets"],"Resource":["arn:aws:s3:::*"]}]}`,
	"writeonly": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::*"]}]}`,
	"consoleAdmin": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["admin:*"]},
		{"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::*"]}]}`,
}
