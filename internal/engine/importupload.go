package engine

import (
	"github.com/shardstore/shardstore/internal/drive"
	"github.com/shardstore/shardstore/internal/meta"
	"github.com/shardstore/shardstore/internal/minioformat"
)

// IsMinIOUploadID reports whether id is an upload id MinIO made
// (minioformat.ParseUploadID): uploads adopted from MinIO's drives keep
// their ids, so that clients in the middle of one carry on with it.
func IsMinIOUploadID(id string) bool {
	_, err := minioformat.ParseUploadID(id)
	return err == nil
}

// ImportUploadBatch adds to b one drive's records of an unfinished
// multipart upload another store made (internal/migrate adopts MinIO's):
// the upload record up (Bucket, Key, UploadID set, Erasure.Index this
// drive's shard) and the part records, each one part whose data id is
// its own and already holds this drive's shard file. Every write is a
// Put: applying the batch again changes nothing.
func ImportUploadBatch(b *drive.Batch, up *meta.Object, parts []*meta.Object) {
	b.Put(drive.TableUploads, drive.UploadKey(up.Bucket, up.Key, up.UploadID), up.Marshal())
	owner := []byte(uploadOwner(up.UploadID))
	for _, p := range parts {
		b.Put(drive.TableParts, drive.PartKey(up.Bucket, up.Key, up.UploadID, p.Parts[0].Number), p.Marshal())
		b.Put(drive.TableRefs, p.Parts[0].DataID, owner)
	}
}
