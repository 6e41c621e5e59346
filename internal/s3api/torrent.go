package s3api

import (
	"fmt"

	"github.com/shardstore/shardstore/internal/engine"
)

// GetObjectTorrent (GET ?torrent on an object). AWS stopped serving
// BitTorrent in 2022 and shardstore never did, so no torrent is ever
// made; but the request is still about an object, and a client asking
// for a key that is not there is told so as S3 tells it: the bucket and
// the object (or its versionId) are resolved and access decided as for a
// HEAD (s3:GetObjectTorrent, s3:GetObjectVersionTorrent for a version),
// so a missing key is 404 NoSuchKey (a delete marker with its headers),
// a caller who may not read it AccessDenied, and only an object that
// exists and may be read is answered 501 NotImplemented.
func handleGetObjectTorrent(q *request) error {
	bi, err := q.s.cfg.Store.BucketInfo(q.ctx, q.bucket)
	if err != nil {
		return fmt.Errorf("bucket %q: %w", q.bucket, err)
	}
	version, err := q.requestVersion()
	if err != nil {
		return err
	}
	if _, err := q.statForRead(bi, engine.GetOptions{VersionID: version}); err != nil {
		return err
	}
	return errNotImplemented("?torrent")
}
