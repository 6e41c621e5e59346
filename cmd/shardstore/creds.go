package main

import "fmt"

// rootCreds are the root credentials and where they came from.
type rootCreds struct {
	user, pass string
	// source names the environment variables used ("" for the
	// development defaults).
	source string
	// alias is true when MinIO's variable names supplied them.
	alias bool
}

// dev reports whether the built-in development credentials are used.
func (c rootCreds) dev() bool { return c.source == "" }

// Lengths S3 clients and MinIO require of root credentials: the AWS
// SDKs reject shorter access keys, and MinIO refuses shorter secrets.
const (
	minAccessKeyLen = 3
	minSecretKeyLen = 8
)

// rootCredentials reads the root credentials from SHARDSTORE_ROOT_USER
// and SHARDSTORE_ROOT_PASSWORD, or else from MINIO_ROOT_USER and
// MINIO_ROOT_PASSWORD (users migrating from MinIO keep their
// environment), or else falls back to the development defaults.
func rootCredentials(getenv func(string) string) (rootCreds, error) {
	for _, names := range [][2]string{
		{"SHARDSTORE_ROOT_USER", "SHARDSTORE_ROOT_PASSWORD"},
		{"MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD"},
	} {
		user, pass := getenv(names[0]), getenv(names[1])
		switch {
		case user == "" && pass == "":
			continue
		case user == "" || pass == "":
			return rootCreds{}, fmt.Errorf("set both %s and %s, or neither", names[0], names[1])
		case len(user) < minAccessKeyLen:
			return rootCreds{}, fmt.Errorf("%s must be at least %d characters long", names[0], minAccessKeyLen)
		case len(pass) < minSecretKeyLen:
			return rootCreds{}, fmt.Errorf("%s must be at least %d characters long (S3 clients and MinIO require it)", names[1], minSecretKeyLen)
		}
		return rootCreds{user: user, pass: pass, source: names[0] + "/" + names[1], alias: names[0] == "MINIO_ROOT_USER"}, nil
	}
	return rootCreds{user: defaultRootUser, pass: defaultRootPass}, nil
}
