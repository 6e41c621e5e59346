package meta

import "testing"

// listingRecord is a record like a 1-byte S3 PUT's: inline, one part.
func listingRecord() []byte {
	o := &Object{Size: 1, ModTime: 1764000000123456789, ETag: "0cc175b9c0f1b6a831c399e269772661",
		ContentType: "application/octet-stream", Owner: "shardstoreadmin", DataID: "6b1f4c0e9d2a4e7fb3c58d9a0e1f2a3b",
		Inline: true, ChecksumAlgo: "CRC64NVME", ChecksumVal: "ZpqT4q1z3nE=", ChecksumType: "FULL_OBJECT",
		Erasure: Erasure{DataShards: 12, ParityShards: 4, BlockSize: 1 << 20, Index: 3, Distribution: []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1, 2}, Bitrot: 1},
		Parts:   []Part{{Number: 1, Size: 1}}}
	return (&Record{Versions: []*Object{o}}).Marshal()
}

func BenchmarkAppendStamp(b *testing.B) {
	raw := listingRecord()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendStamp(buf[:0], raw)
	}
}

func BenchmarkUnmarshalRecord(b *testing.B) {
	raw := listingRecord()
	b.ReportAllocs()
	for b.Loop() {
		UnmarshalRecord(raw)
	}
}
