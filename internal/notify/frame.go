package notify

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"time"
)

// A queue segment is a sequence of frames: [len u32][crc32c u32][payload],
// little endian, the CRC over the payload. The payload is a Delivery:
// its time (unix nanoseconds, 8 bytes) and then EventName, Key, Payload
// and Record, each a uvarint length and the bytes.

const (
	frameHeader = 8
	// maxFrame bounds one record: a bigger length is a torn or corrupt
	// frame, never an allocation.
	maxFrame = 4 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errFrameTooLarge: a record larger than maxFrame is not queued.
var errFrameTooLarge = errors.New("notify: record too large to queue")

// frameSize bounds the length of d's frame payload.
func frameSize(d *Delivery) int {
	return 8 + 4*binary.MaxVarintLen64 + len(d.EventName) + len(d.Key) + len(d.Payload) + len(d.Record)
}

// appendFrame appends d's frame to b.
func appendFrame(b []byte, d *Delivery) ([]byte, error) {
	if frameSize(d) > maxFrame {
		return b, errFrameTooLarge
	}
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = binary.LittleEndian.AppendUint64(b, uint64(d.Time.UnixNano()))
	for _, f := range [][]byte{[]byte(d.EventName), []byte(d.Key), d.Payload, d.Record} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	payload := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b, nil
}

// frameLen reads a frame header: the payload's length and CRC, ok false
// when the length cannot be a frame's.
func frameLen(h []byte) (n int, sum uint32, ok bool) {
	l := binary.LittleEndian.Uint32(h[:4])
	if l < 8 || l > maxFrame {
		return 0, 0, false
	}
	return int(l), binary.LittleEndian.Uint32(h[4:8]), true
}

// decodePayload reads a frame's payload (CRC already checked).
func decodePayload(p []byte) (Delivery, bool) {
	if len(p) < 8 {
		return Delivery{}, false
	}
	var d Delivery
	d.Time = time.Unix(0, int64(binary.LittleEndian.Uint64(p[:8]))).UTC()
	p = p[8:]
	var fields [4][]byte
	for i := range fields {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return Delivery{}, false
		}
		fields[i] = p[k : k+int(n)]
		p = p[k+int(n):]
	}
	if len(p) != 0 {
		return Delivery{}, false
	}
	d.EventName, d.Key = string(fields[0]), string(fields[1])
	d.Payload = append([]byte(nil), fields[2]...)
	if len(fields[3]) > 0 {
		d.Record = append([]byte(nil), fields[3]...)
	}
	return d, true
}

// scanFrames returns the byte length of the valid frames at the start
// of data, and how many there are: it stops at the first frame that is
// cut short or fails its CRC (the tail a crash left).
func scanFrames(data []byte) (valid int64, count int) {
	off := 0
	for len(data)-off >= frameHeader {
		n, sum, ok := frameLen(data[off:])
		if !ok || len(data)-off-frameHeader < n {
			break
		}
		payload := data[off+frameHeader : off+frameHeader+n]
		if crc32.Checksum(payload, castagnoli) != sum {
			break
		}
		if _, ok := decodePayload(payload); !ok {
			break
		}
		off += frameHeader + n
		count++
	}
	return int64(off), count
}
