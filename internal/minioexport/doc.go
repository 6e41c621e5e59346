// Package minioexport reads the zip files MinIO's administration API
// writes for `mc admin cluster iam export` (ExportIAM) and
// `mc admin cluster bucket export` (ExportBucketMetadata), so that
// `shardstore migrate from-minio-export` (internal/migrate, fromexport.go)
// can recreate the identities and bucket configuration they hold. It
// only decodes: no I/O beyond the zip given, nothing is applied here.
//
// The formats, as MinIO writes them (learned from its public source and
// from real exports; see testdata/README.md):
//
//   - IAM: entries under "iam-assets/", each one JSON object keyed by name.
//     policies.json: policy name -> policy document. users.json: access
//     key -> {secretKey, status "enabled"|"disabled"} (secrets in clear).
//     groups.json: group -> {status, members}. svcaccts.json: access key
//     -> {parent, accessKey, secretKey, groups, claims, sessionPolicy
//     (a document or null), status "on"|"off", name, description,
//     expiration (1970-01-01 or absent: none)}. user_mappings.json,
//     group_mappings.json, stsuser_mappings.json: name -> {policy: a
//     comma-separated list of policy names}.
//   - Buckets: one entry per bucket and configuration, "BUCKET/FILE":
//     policy.json, lifecycle.xml, versioning.xml, object-lock.xml,
//     tagging.xml, bucket-encryption.xml, notification.xml,
//     replication.xml, quota.json, bucket-targets.json. Files MinIO adds
//     later are kept by name (Bucket.Other) so the caller can report them.
//
// Hostile input is bounded: at most MaxEntries entries, MaxEntrySize
// bytes per entry and MaxTotalSize bytes in all, counted as they are
// inflated (a zip's declared sizes are not trusted); entry names that
// are absolute, hold "..", backslashes or empty segments, bucket names
// S3 would not accept, duplicate entries and malformed JSON are errors.
package minioexport
