package kms

import (
	"context"
	"sync/atomic"
)

// Counting wraps a KMS and counts calls and failures per operation, for
// the metrics. Kind and DefaultKey are not counted (they do not reach the
// key server).
type Counting struct {
	k   KMS
	ops [numOps]opCounters
}

// OpStats is one operation's counts. A failure is a call that returned an
// error (for status: a Status that is not OK), whatever the error.
type OpStats struct {
	Calls    uint64 `json:"calls"`
	Failures uint64 `json:"failures"`
}

const (
	opGenerate = iota
	opDecrypt
	opRewrap
	opCreate
	opStatus
	numOps
)

// opNames are the keys of Stats, in the order of the op constants.
var opNames = [numOps]string{"generate", "decrypt", "rewrap", "create", "status"}

type opCounters struct {
	calls, failures atomic.Uint64
}

func (c *Counting) count(op int, failed bool) {
	c.ops[op].calls.Add(1)
	if failed {
		c.ops[op].failures.Add(1)
	}
}

var _ KMS = (*Counting)(nil)

// NewCounting wraps k.
func NewCounting(k KMS) *Counting { return &Counting{k: k} }

// Unwrap is the wrapped KMS.
func (c *Counting) Unwrap() KMS { return c.k }

// Stats returns the counts so far for generate, decrypt, rewrap, create
// and status (every key present, zero or not). An operation's two
// counters are read separately, so a snapshot may hold a call whose
// failure is not counted yet, but never more failures than calls.
func (c *Counting) Stats() map[string]OpStats {
	m := make(map[string]OpStats, numOps)
	for i, name := range opNames {
		// Failures first: count bumps calls before failures.
		f := c.ops[i].failures.Load()
		m[name] = OpStats{Calls: c.ops[i].calls.Load(), Failures: f}
	}
	return m
}

// Kind is the wrapped KMS's.
func (c *Counting) Kind() string { return c.k.Kind() }

// DefaultKey is the wrapped KMS's.
func (c *Counting) DefaultKey() string { return c.k.DefaultKey() }

// GenerateKey counts and forwards.
func (c *Counting) GenerateKey(ctx context.Context, keyID string, kc Context) (DataKey, error) {
	dk, err := c.k.GenerateKey(ctx, keyID, kc)
	c.count(opGenerate, err != nil)
	return dk, err
}

// Decrypt counts and forwards.
func (c *Counting) Decrypt(ctx context.Context, keyID string, ciphertext []byte, kc Context) ([]byte, error) {
	p, err := c.k.Decrypt(ctx, keyID, ciphertext, kc)
	c.count(opDecrypt, err != nil)
	return p, err
}

// Rewrap counts and forwards.
func (c *Counting) Rewrap(ctx context.Context, keyID string, ciphertext []byte, kc Context) ([]byte, error) {
	ct, err := c.k.Rewrap(ctx, keyID, ciphertext, kc)
	c.count(opRewrap, err != nil)
	return ct, err
}

// CreateKey counts and forwards.
func (c *Counting) CreateKey(ctx context.Context, keyID string) error {
	err := c.k.CreateKey(ctx, keyID)
	c.count(opCreate, err != nil)
	return err
}

// Status counts and forwards; a Status that is not OK is a failure.
func (c *Counting) Status(ctx context.Context) Status {
	st := c.k.Status(ctx)
	c.count(opStatus, !st.OK)
	return st
}
