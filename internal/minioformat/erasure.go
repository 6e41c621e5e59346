package minioformat

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/reedsolomon"
)

// DecodePart writes the stored bytes of o.Parts[part] to w from the
// drives' shard streams of that part. shards[k] is the stream of shard
// k+1 (a part file, or the version's inline data on the drive whose
// erasure index is k+1), nil where it is missing; len(shards) must be
// M+N. Data shards are read first; a missing, short or corrupt one is
// rebuilt from the others with Reed-Solomon (klauspost/reedsolomon's
// default code, which MinIO uses too). It fails when fewer than M shards
// of a block can be read. The bytes written are the stored ones:
// compressed or encrypted versions need their own decoding after this.
func DecodePart(w io.Writer, o *Object, part int, shards []io.Reader) error {
	if part < 0 || part >= len(o.Parts) {
		return fmt.Errorf("minioformat: part %d of %d", part, len(o.Parts))
	}
	if err := o.Validate(); err != nil {
		return err
	}
	m, n := o.DataBlocks, o.ParityBlocks
	if len(shards) != m+n {
		return fmt.Errorf("minioformat: %d shard streams for %d+%d", len(shards), m, n)
	}
	size := o.Parts[part].Size
	chunk := o.ShardSize()
	dataLen := o.ShardDataSize(size)
	readers := make([]*ShardReader, m+n)
	next := make([]int64, m+n) // chunk each reader is at
	for k, s := range shards {
		if s != nil {
			r, err := NewShardReader(s, chunk, dataLen)
			if err != nil {
				return err
			}
			readers[k] = r
		}
	}
	var enc reedsolomon.Encoder
	bufs := make([][]byte, m+n)
	blockShards := make([][]byte, m+n)
	out := make([]byte, 0, o.BlockSize)
	var lastErr error
	for block, left := int64(0), size; left > 0; block++ {
		blen := min(o.BlockSize, left)
		cs := (blen + int64(m) - 1) / int64(m)
		have, missingData := 0, false
		for k := range blockShards {
			blockShards[k] = nil
			if k >= m && !missingData {
				break // every data shard read: parity is not needed
			}
			if have == m || readers[k] == nil {
				missingData = missingData || k < m
				continue
			}
			c, err := readAt(readers[k], &next[k], block, bufs[k])
			if err == nil && int64(len(c)) != cs {
				err = corruptf("chunk of %d bytes, want %d", len(c), cs)
			}
			if err != nil {
				lastErr = fmt.Errorf("shard %d, block %d: %w", k+1, block, err)
				readers[k] = nil
				missingData = missingData || k < m
				continue
			}
			bufs[k] = c[:cap(c)]
			blockShards[k] = c
			have++
		}
		if have < m {
			if lastErr == nil {
				lastErr = errors.New("the others are missing")
			}
			return fmt.Errorf("minioformat: %d of %d shards readable for block %d: %w", have, m, block, lastErr)
		}
		if missingData {
			if enc == nil {
				var err error
				if enc, err = reedsolomon.New(m, n); err != nil {
					return err
				}
			}
			for k := range blockShards {
				if blockShards[k] == nil && bufs[k] != nil {
					blockShards[k] = bufs[k][:0]
				}
			}
			if err := enc.ReconstructData(blockShards); err != nil {
				return fmt.Errorf("minioformat: block %d: %w", block, err)
			}
		}
		out = out[:0]
		for k := 0; k < m && int64(len(out)) < blen; k++ {
			out = append(out, blockShards[k]...)
		}
		if _, err := w.Write(out[:blen]); err != nil {
			return err
		}
		left -= blen
	}
	return nil
}

// readAt brings r to chunk block (skipping unverified chunks another
// reader already supplied) and returns that chunk verified.
func readAt(r *ShardReader, at *int64, block int64, buf []byte) ([]byte, error) {
	for *at < block {
		if err := r.Skip(); err != nil {
			return nil, err
		}
		*at++
	}
	c, err := r.Next(buf)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	*at++
	return c, nil
}
