#!/bin/sh
# Regenerates the multi-node MinIO fixture minio-4nodes of internal/minioformat
# from a MinIO server binary you already have (this script never builds MinIO):
#
#   internal/minioformat/testdata/mkfixture-4nodes.sh /path/to/minio HOST [source description]
#
# It runs 4 MinIO server processes on HOST (4 ports) with 16 fresh drive
# directories on one filesystem, MINIO_CI_CD=on, every process given the same
# 16 endpoints in MinIO's order (drive i+1 on node i%4+1: the order of MinIO's
# own expansion of http://node{1...4}:PORT/data{1...4}), fills it through S3
# (mkfixture -fill cluster), records MinIO's answers into minio-4nodes.json,
# stops every node and packs the drives into minio-4nodes.tar.zst next to
# this script. HOST must be an address of this machine: MinIO in a container
# (/.dockerenv) refuses endpoints that resolve to loopback, so 127.0.0.1 works
# only outside one. See README.md.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: $0 /path/to/minio HOST [source description]" >&2
	exit 2
fi
bin=$1
host=$2
source=${3:-}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
if [ ! -x "$bin" ]; then
	echo "$bin: not an executable MinIO binary" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
exec go run ./internal/minioformat/testdata/mkfixture -minio "$bin" -out "$here" -name minio-4nodes \
	-drives 16 -nodes 4 -host "$host" -fill cluster -source "$source"
