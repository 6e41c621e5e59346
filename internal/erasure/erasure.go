// Package erasure is Reed-Solomon block coding for the engine: it splits
// a block into M data shards in place (no copy), computes K parity
// shards, and rebuilds lost shards. It also owns the shard geometry: how
// big each block's shard is and where it sits in a shard file.
package erasure

import (
	"fmt"
	"sync"

	"github.com/klauspost/reedsolomon"
)

// DefaultBlockSize is the unit objects are coded in.
const DefaultBlockSize = 1 << 20

// Coder codes blocks for one (M, K, block size). It is safe for
// concurrent use; build one per geometry and reuse it (see Cache).
type Coder struct {
	data, parity, blockSize int
	enc                     reedsolomon.Encoder
	pool                    sync.Pool // *Block buffers of a full block
}

// New builds a coder for data+parity shards over blocks of blockSize.
func New(data, parity, blockSize int) (*Coder, error) {
	if data < 1 || parity < 0 || data+parity > 256 || blockSize < data {
		return nil, fmt.Errorf("erasure: invalid geometry %d+%d with %d-byte blocks", data, parity, blockSize)
	}
	c := &Coder{data: data, parity: parity, blockSize: blockSize}
	if parity > 0 {
		enc, err := reedsolomon.New(data, parity)
		if err != nil {
			return nil, fmt.Errorf("erasure: %d+%d: %w", data, parity, err)
		}
		c.enc = enc
	}
	return c, nil
}

// DataShards is M.
func (c *Coder) DataShards() int { return c.data }

// ParityShards is K.
func (c *Coder) ParityShards() int { return c.parity }

// BlockSize is the full block length.
func (c *Coder) BlockSize() int { return c.blockSize }

// ShardSize is the per-shard length of a block holding n bytes.
func (c *Coder) ShardSize(n int) int { return (n + c.data - 1) / c.data }

// ShardFileSize is the length of one shard's data (without checksums) for
// an object of size bytes.
func (c *Coder) ShardFileSize(size int64) int64 {
	full := size / int64(c.blockSize)
	last := int(size % int64(c.blockSize))
	return full*int64(c.ShardSize(c.blockSize)) + int64(c.ShardSize(last))
}

// Blocks is the number of blocks an object of size bytes has.
func (c *Coder) Blocks(size int64) int64 {
	return (size + int64(c.blockSize) - 1) / int64(c.blockSize)
}

// Block is a reusable buffer for one block and its shards. Data is read
// into Buf[:n]; Encode then pads and computes parity in place, so data
// shards alias the bytes that were read.
type Block struct {
	Buf    []byte
	Shards [][]byte
}

// GetBlock returns a pooled buffer big enough for a full block and its
// parity. Return it with PutBlock.
func (c *Coder) GetBlock() *Block {
	if b, ok := c.pool.Get().(*Block); ok {
		return b
	}
	ss := c.ShardSize(c.blockSize)
	return &Block{
		Buf:    make([]byte, ss*(c.data+c.parity)),
		Shards: make([][]byte, c.data+c.parity),
	}
}

// PutBlock returns a buffer to the pool.
func (c *Coder) PutBlock(b *Block) { c.pool.Put(b) }

// Encode treats b.Buf[:n] as one block of n bytes: it zero-pads the last
// data shard, slices b.Shards over the buffer and computes parity.
func (c *Coder) Encode(b *Block, n int) error {
	if n < 0 || n > c.blockSize {
		return fmt.Errorf("erasure: block of %d bytes, max %d", n, c.blockSize)
	}
	ss := c.ShardSize(n)
	clear(b.Buf[n : ss*c.data])
	for i := range b.Shards {
		b.Shards[i] = b.Buf[i*ss : (i+1)*ss : (i+1)*ss]
	}
	if c.parity == 0 || ss == 0 {
		return nil
	}
	if err := c.enc.Encode(b.Shards); err != nil {
		return fmt.Errorf("erasure: encode: %w", err)
	}
	return nil
}

// ReconstructData rebuilds missing data shards (nil or zero-length
// entries) from the others; parity shards are left missing.
func (c *Coder) ReconstructData(shards [][]byte) error {
	if c.parity == 0 {
		for i := 0; i < c.data; i++ {
			if len(shards[i]) == 0 {
				return fmt.Errorf("erasure: shard %d missing and no parity", i)
			}
		}
		return nil
	}
	if err := c.enc.ReconstructData(shards); err != nil {
		return fmt.Errorf("erasure: reconstruct: %w", err)
	}
	return nil
}

// Reconstruct rebuilds every missing shard, parity included (healing).
func (c *Coder) Reconstruct(shards [][]byte) error {
	if c.parity == 0 {
		return c.ReconstructData(shards)
	}
	if err := c.enc.Reconstruct(shards); err != nil {
		return fmt.Errorf("erasure: reconstruct: %w", err)
	}
	return nil
}

// Cache holds one Coder per geometry, built on first use. The engine
// keeps one Cache; there is no package-level state.
type Cache struct {
	mu     sync.Mutex
	coders map[[3]int]*Coder
}

// Get returns the coder for (data, parity, blockSize).
func (c *Cache) Get(data, parity, blockSize int) (*Coder, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [3]int{data, parity, blockSize}
	if co, ok := c.coders[key]; ok {
		return co, nil
	}
	co, err := New(data, parity, blockSize)
	if err != nil {
		return nil, err
	}
	if c.coders == nil {
		c.coders = make(map[[3]int]*Coder)
	}
	c.coders[key] = co
	return co, nil
}
