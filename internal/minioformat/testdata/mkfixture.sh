#!/bin/sh
# Regenerates the MinIO drive fixture of internal/minioformat from a MinIO
# server binary you already have (this script never builds MinIO):
#
#   internal/minioformat/testdata/mkfixture.sh /path/to/minio [source description]
#
# It runs MinIO on 16 fresh drive directories on 127.0.0.1 (MINIO_CI_CD=on,
# so they may sit on the root filesystem), fills it through S3, records
# MinIO's answers into minio-16drives.json, stops it, and packs the drives
# into minio-16drives.tar.zst next to this script. See README.md.
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 /path/to/minio [source description]" >&2
	exit 2
fi
bin=$1
source=${2:-}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
if [ ! -x "$bin" ]; then
	echo "$bin: not an executable MinIO binary" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
exec go run ./internal/minioformat/testdata/mkfixture -minio "$bin" -out "$here" -source "$source"
