package drive

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/shardstore/shardstore/internal/meta"
)

// ScanDigest summarises the entries of a scan of TableObjects: two
// drives whose scans of one query have equal digests hold the same keys
// and common prefixes, and for each key a record of the same current
// version (meta.AppendStamp: size, time, ETag, data id, flags). The
// records themselves differ between drives (shard index, inline shard),
// so the digest covers only what tells one version from another.
type ScanDigest struct {
	// Count is the number of entries; Last the key of the last one.
	Count int
	Last  string
	// Sum is xxh3-128 over every entry's key, kind and stamp, in order.
	Sum [16]byte
	// Mixed is set when some record is not simple (meta.PeekCurrent)
	// or not readable: its stamp is not enough, and a reader must
	// compare such a page record by record.
	Mixed bool
}

// DigestEntries is the ScanDigest of entries a scan returned with their
// values, computed as a drive computes it for ScanQuery.Digest.
func DigestEntries(entries []Entry) ScanDigest {
	var g scanDigester
	for _, e := range entries {
		digestEntry(&g, e.Key, e.CommonPrefix, e.Value)
	}
	return g.digest()
}

// ParseScanDigest reads the digest a scan with ScanQuery.Digest returned.
func ParseScanDigest(entries []Entry) (ScanDigest, error) {
	if len(entries) != 1 || len(entries[0].Value) < 16+2 {
		return ScanDigest{}, fmt.Errorf("scan digest: %d entries: %w", len(entries), ErrInvalidArgument)
	}
	v := entries[0].Value
	d := ScanDigest{Last: entries[0].Key, Sum: [16]byte(v[:16]), Mixed: v[16] != 0}
	n, k := binary.Uvarint(v[17:])
	if k <= 0 || 17+k != len(v) || n > 1<<31 {
		return ScanDigest{}, fmt.Errorf("scan digest: bad count: %w", ErrInvalidArgument)
	}
	d.Count = int(n)
	return d, nil
}

// entry encodes d as the one Entry a digest scan returns.
func (d ScanDigest) entry() Entry {
	v := make([]byte, 0, 16+1+binary.MaxVarintLen64)
	v = append(v, d.Sum[:]...)
	mixed := byte(0)
	if d.Mixed {
		mixed = 1
	}
	v = append(v, mixed)
	v = binary.AppendUvarint(v, uint64(d.Count))
	return Entry{Key: d.Last, Value: v}
}

// scanDigester folds entries into a ScanDigest. Each entry is written
// to the hash as one length-prefixed key (digestEntry), a kind byte and
// the record's stamp, so no two different sequences of entries hash the
// same bytes.
type scanDigester struct {
	h    *xxh3.Hasher128
	buf  []byte
	last []byte // the last entry's key
	d    ScanDigest
}

// digestEntry folds one entry (key without the table byte, its value,
// or a common prefix) into g: the scan of a drive and DigestEntries of
// a scan's result hash the same bytes.
func digestEntry[K string | []byte](g *scanDigester, key K, commonPrefix bool, value []byte) {
	g.buf = binary.AppendUvarint(g.buf[:0], uint64(len(key)))
	g.buf = append(g.buf, key...)
	g.last = append(g.last[:0], key...)
	g.add(commonPrefix, value)
}

// add completes the entry whose key digestEntry put in g.buf.
func (g *scanDigester) add(commonPrefix bool, value []byte) {
	if g.h == nil {
		g.h = xxh3.New128()
	}
	if commonPrefix {
		g.buf = append(g.buf, 1)
	} else {
		g.buf = append(g.buf, 0)
		var ok bool
		if g.buf, ok = meta.AppendStamp(g.buf, value); !ok {
			g.d.Mixed = true
		}
	}
	g.h.Write(g.buf)
	g.d.Count++
}

func (g *scanDigester) digest() ScanDigest {
	if g.h != nil {
		g.d.Sum = g.h.Sum128().Bytes()
	}
	g.d.Last = string(g.last)
	return g.d
}
