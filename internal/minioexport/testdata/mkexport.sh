#!/bin/sh
# Regenerates the MinIO export fixtures of internal/minioexport from a MinIO
# server binary and an mc client binary you already have (this script never
# builds either):
#
#   internal/minioexport/testdata/mkexport.sh /path/to/minio /path/to/mc
#
# It runs MinIO on 4 fresh drive directories on 127.0.0.1 (MINIO_CI_CD=on, so
# they may sit on the root filesystem; MINIO_KMS_SECRET_KEY set so that SSE-S3
# bucket encryption can be configured), populates it with mc (users, groups,
# policies, service accounts, buckets with their configuration), and saves
# what `mc admin cluster iam export` and `mc admin cluster bucket export`
# write as iam.zip and buckets.zip next to this script. See README.md.
# Every secret here is a test value written only to the throwaway server.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 /path/to/minio /path/to/mc" >&2
	exit 2
fi
minio=$1
mc=$2
for b in "$minio" "$mc"; do
	if [ ! -x "$b" ]; then
		echo "$b: not an executable" >&2
		exit 2
	fi
done
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
port=${MKEXPORT_PORT:-19123}
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
mkdir -p "$work/d1" "$work/d2" "$work/d3" "$work/d4" "$work/mc"
MINIO_CI_CD=on MINIO_ROOT_USER=fixtureadmin MINIO_ROOT_PASSWORD=fixture-secret-key \
	MINIO_KMS_SECRET_KEY=fixture-key:c2hhcmRzdG9yZS1maXh0dXJlLWttcy1rZXktMzJieXQ= \
	"$minio" server --address 127.0.0.1:$port --console-address 127.0.0.1:$((port + 1)) \
	"$work/d1" "$work/d2" "$work/d3" "$work/d4" >"$work/minio.log" 2>&1 &
pid=$!
export MC_CONFIG_DIR="$work/mc" MC_HOST_src="http://fixtureadmin:fixture-secret-key@127.0.0.1:$port"
i=0
until timeout 5 "$mc" ready src >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 30 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "MinIO did not start:" >&2
		cat "$work/minio.log" >&2
		exit 1
	fi
	sleep 1
done
q() { "$mc" --quiet "$@" >/dev/null; }

# Policies: one per bucket, one with actions shardstore lacks (admin config,
# KMS) and a condition, one with a Deny.
cat >"$work/data-rw.json" <<'J'
{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["s3:ListBucket","s3:GetBucketLocation"],"Resource":["arn:aws:s3:::data"]},
 {"Effect":"Allow","Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":["arn:aws:s3:::data/*"]}]}
J
cat >"$work/ops.json" <<'J'
{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["admin:ServerInfo","admin:ConfigUpdate"]},
 {"Effect":"Allow","Action":["kms:Status"]},
 {"Effect":"Allow","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::shared/*"],
  "Condition":{"IpAddress":{"aws:SourceIp":["127.0.0.0/8"]}}}]}
J
cat >"$work/no-delete.json" <<'J'
{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["s3:*"],"Resource":["arn:aws:s3:::shared","arn:aws:s3:::shared/*"]},
 {"Effect":"Deny","Action":["s3:DeleteObject","s3:DeleteBucket"],"Resource":["arn:aws:s3:::*"]}]}
J
cat >"$work/session.json" <<'J'
{"Version":"2012-10-17","Statement":[
 {"Effect":"Allow","Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::data","arn:aws:s3:::data/*"]}]}
J
q admin policy create src data-rw "$work/data-rw.json"
q admin policy create src ops "$work/ops.json"
q admin policy create src no-delete "$work/no-delete.json"

# Users: alice and bob enabled, carol disabled; bob and carol in devs.
q admin user add src alice alice-secret-key-1
q admin user add src bob bob-secret-key-12
q admin user add src carol carol-secret-key-1
q admin group add src devs bob carol
q admin group add src auditors alice
q admin policy attach src data-rw --user alice
q admin policy attach src readonly --user carol
q admin policy attach src no-delete --group devs
q admin policy attach src ops --group auditors
q admin user disable src carol
q admin group disable src auditors

# Service accounts of alice: plain; with a session policy and name; with an
# expiry (MinIO refuses one more than a year away); disabled. One of the root user's.
q admin user svcacct add src alice --access-key alicesvcplain --secret-key svc-plain-secret-1 --name plain --description "alice's scripts"
q admin user svcacct add src alice --access-key alicesvcread --secret-key svc-read-secret-12 --policy "$work/session.json" --name reader
q admin user svcacct add src alice --access-key alicesvcexp --secret-key svc-exp-secret-12 --expiry 2027-06-01T00:00:00Z
q admin user svcacct add src alice --access-key alicesvcoff --secret-key svc-off-secret-123
q admin user svcacct disable src alicesvcoff
q admin user svcacct add src fixtureadmin --access-key rootsvc --secret-key root-svc-secret-1

# Buckets: data (versioned, lifecycle, tags, quota, SSE-S3), locked (object
# lock with a default retention), shared (anonymous download policy),
# paused (versioning suspended).
q mb src/data
q version enable src/data
q ilm rule add src/data --prefix tmp/ --expire-days 30
q ilm rule add src/data --noncurrent-expire-days 7
q tag set src/data "team=dev&env=test"
q quota set src/data --size 1GiB
q encrypt set sse-s3 src/data
q mb --with-lock src/locked
q retention set --default GOVERNANCE 1d src/locked
q mb src/shared
q anonymous set download src/shared
q mb src/paused
q version enable src/paused
q version suspend src/paused

cd "$work"
q admin cluster iam export src -o "$work/iam.zip"
q admin cluster bucket export src
mv "$work/src-bucket-metadata.zip" "$work/buckets.zip"
cp "$work/iam.zip" "$work/buckets.zip" "$here/"
"$minio" --version | head -1 >"$here/minio-version.txt"
echo "wrote $here/iam.zip and $here/buckets.zip"
