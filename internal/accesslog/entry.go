package accesslog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

// Destination is where a source bucket's records go: its logging
// configuration as it was when the request was made, and what the
// deliverer needs to check and name the log objects. The spool keeps it
// with every record, so a record is delivered as configured when it was
// made, and a batch needs nothing but itself.
type Destination struct {
	SourceBucket string `json:"src"`
	// SourceOwner is the source bucket's owner as the store records it
	// (an access key); the deliverer delivers only to a target of the
	// same owner.
	SourceOwner string `json:"srcOwner"`
	// SourceAccount and SourceRegion name the source in partitioned keys.
	SourceAccount string `json:"srcAccount,omitempty"`
	SourceRegion  string `json:"srcRegion,omitempty"`
	TargetBucket  string `json:"target"`
	TargetPrefix  string `json:"prefix,omitempty"`
	// Partitioned selects PartitionedPrefix keys; DeliveryDate dates
	// their partition by delivery time instead of event time.
	Partitioned  bool `json:"partitioned,omitempty"`
	DeliveryDate bool `json:"deliveryDate,omitempty"`
	// Grants is the deliverer's stored form of the TargetGrants, opaque
	// here.
	Grants string `json:"grants,omitempty"`
}

// Entry is what the spool stores for a request: the record and where
// it goes. A request is spooled once durably when its answer starts
// (Spool.Append) and again, Final, when it has been sent in full
// (Spool.Amend) with the bytes sent and the total time; the final entry
// replaces the first one.
type Entry struct {
	Dest   Destination `json:"d"`
	Record Record      `json:"r"`
	Final  bool        `json:"f,omitempty"`
}

// id names the request an entry belongs to: one request can produce
// records in several buckets' logs (a copy's source and destination).
func (e *Entry) id() string {
	return e.Record.RequestID + "\x00" + e.Record.Bucket + "\x00" + e.Record.Operation
}

// Frames. A segment file is a sequence of frames, each
// [payload length, 4 bytes LE][CRC-32C of the payload, 4 bytes LE][payload],
// the payload being one Entry in JSON. Reading stops at the first frame
// that is cut short or fails its checksum: the tail a crash left while
// appending, whose requests were never answered.
const (
	frameHeader = 8
	// maxFrame bounds one entry: headers are bounded by the S3 endpoint
	// (64 KiB by default), so a record is far smaller.
	maxFrame = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errFrameTooLarge refuses an entry larger than maxFrame.
var errFrameTooLarge = errors.New("accesslog: entry too large")

// appendFrame appends e's frame to b.
func appendFrame(b []byte, e *Entry) ([]byte, error) {
	payload, err := json.Marshal(e)
	if err != nil {
		return b, fmt.Errorf("accesslog: encode entry: %w", err)
	}
	if len(payload) > maxFrame {
		return b, errFrameTooLarge
	}
	var h [frameHeader]byte
	binary.LittleEndian.PutUint32(h[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(payload, castagnoli))
	b = append(b, h[:]...)
	return append(b, payload...), nil
}

// readFrames decodes the entries of a segment's bytes up to the first
// frame that is incomplete or corrupt; torn reports whether one was
// found before the end.
func readFrames(data []byte) (entries []Entry, torn bool) {
	for len(data) > 0 {
		if len(data) < frameHeader {
			return entries, true
		}
		n := binary.LittleEndian.Uint32(data[:4])
		sum := binary.LittleEndian.Uint32(data[4:8])
		if n > maxFrame || uint64(len(data)-frameHeader) < uint64(n) {
			return entries, true
		}
		payload := data[frameHeader : frameHeader+int(n)]
		if crc32.Checksum(payload, castagnoli) != sum {
			return entries, true
		}
		var e Entry
		if json.Unmarshal(payload, &e) != nil {
			return entries, true
		}
		entries = append(entries, e)
		data = data[frameHeader+int(n):]
	}
	return entries, false
}
