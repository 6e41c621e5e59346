package release

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Protocol is the internal protocol version this release speaks. Calls
// without a stamp come from a release before stamping: protocol 1.
// Bump it when a node-to-node call changes in a way an older node cannot
// answer, and keep answering Protocol-1 for one release.
const Protocol = 2

// Unstamped is the protocol of a call that carries no stamp.
const Unstamped = 1

// Header names of a stamp.
const (
	HeaderRelease  = "X-Shardstore-Release"
	HeaderProtocol = "X-Shardstore-Protocol"
	HeaderFeatures = "X-Shardstore-Features"
)

// Feature names an on-disk or protocol feature a release may lack.
type Feature = string

// The features this release supports. A release before stamping reports
// none of them.
const (
	// EncryptedRecords: version records with the trailing encryption
	// fields (cipher, sealed keys; commit 5e12901). A release before them
	// reads such a record as a plaintext object and would serve
	// ciphertext, so SSE writes wait for this gate.
	EncryptedRecords Feature = "encrypted-records"
	// StampedCalls: every node-to-node call carries a stamp. Once active,
	// an unstamped call (a release before this one rejoining) is refused:
	// it is how a cluster keeps out a node that knows no gates at all.
	StampedCalls Feature = "stamped-calls"
	// Pools: a cluster's pool list recorded in the consensus group and
	// grown by a rolling expansion (new nodes joining the group). A
	// release without it refuses a node with another drive list and
	// cannot read a pool on nodes it does not know, so a cluster expands
	// only once every node has it.
	Pools Feature = "pools"
	// PoolRemoval: a recorded pool list that had pools taken out (a
	// shrink after a decommission, a canceled expansion) and names them
	// as removed. A release without it ignores that record and would
	// take a node started with its list from before the removal for an
	// expansion that appends the removed pool again, so a list is
	// shortened only once every node has it.
	PoolRemoval Feature = "pool-removal"
)

// Supported lists the features of this release, sorted.
func Supported() []Feature {
	return []Feature{EncryptedRecords, PoolRemoval, Pools, StampedCalls}
}

// maxLen bounds a stamp header's value, and maxFeatures its feature list.
const (
	maxLen      = 512
	maxFeatures = 64
)

// Stamp is what a node says of itself on every call.
type Stamp struct {
	// Release is the sender's release (version and commit); "" for an
	// unstamped call.
	Release  string    `json:"release"`
	Protocol int       `json:"protocol"`
	Features []Feature `json:"features"`
}

// Current is this process's stamp for release rel.
func Current(rel string) Stamp {
	return Stamp{Release: rel, Protocol: Protocol, Features: Supported()}
}

// Set writes s into h.
func (s Stamp) Set(h http.Header) {
	h.Set(HeaderRelease, s.Release)
	h.Set(HeaderProtocol, strconv.Itoa(s.Protocol))
	h.Set(HeaderFeatures, strings.Join(s.Features, ","))
}

// Has reports whether s lists feature f.
func (s Stamp) Has(f Feature) bool { return slices.Contains(s.Features, f) }

// ErrBadStamp is returned, wrapped, for a stamp that cannot be read.
var ErrBadStamp = errors.New("malformed release stamp")

// FromHeader reads the stamp of a call or answer. No protocol header is
// an unstamped call (protocol 1, no features); anything else must parse.
func FromHeader(h http.Header) (Stamp, error) {
	p := h.Get(HeaderProtocol)
	if p == "" {
		return Stamp{Protocol: Unstamped}, nil
	}
	rel, feats := h.Get(HeaderRelease), h.Get(HeaderFeatures)
	if len(p) > 6 || len(rel) > maxLen || len(feats) > maxLen {
		return Stamp{}, fmt.Errorf("%w: a header is too long", ErrBadStamp)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || p[0] == '+' || p[0] == '0' {
		return Stamp{}, fmt.Errorf("%w: protocol %q is not a positive number", ErrBadStamp, p)
	}
	if !printable(rel) {
		return Stamp{}, fmt.Errorf("%w: the release holds control characters", ErrBadStamp)
	}
	s := Stamp{Release: rel, Protocol: n}
	if feats == "" {
		return s, nil
	}
	for _, f := range strings.Split(feats, ",") {
		if !validFeature(f) {
			return Stamp{}, fmt.Errorf("%w: feature %q", ErrBadStamp, f)
		}
		if !slices.Contains(s.Features, f) {
			s.Features = append(s.Features, f)
		}
	}
	if len(s.Features) > maxFeatures {
		return Stamp{}, fmt.Errorf("%w: more than %d features", ErrBadStamp, maxFeatures)
	}
	slices.Sort(s.Features)
	return s, nil
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// validFeature: lower-case letters, digits and '-', 1 to 64 of them.
func validFeature(f string) bool {
	if f == "" || len(f) > 64 {
		return false
	}
	for _, r := range f {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// ErrIncompatible is returned, wrapped, for a peer this node must not
// serve or call: a protocol too old or too new, or one that lacks an
// active feature.
var ErrIncompatible = errors.New("incompatible release")

// Compatible says whether a node of this release works with a peer that
// stamped peer, given the features active in the cluster.
func Compatible(peer Stamp, active []Feature) error {
	switch {
	case peer.Protocol < Protocol-1:
		return fmt.Errorf("%w: %s speaks internal protocol %d, this node %d (it answers %d to %d): upgrade that node one release at a time",
			ErrIncompatible, describe(peer), peer.Protocol, Protocol, Protocol-1, Protocol+1)
	case peer.Protocol > Protocol+1:
		return fmt.Errorf("%w: %s speaks internal protocol %d, this node %d (it answers %d to %d): upgrade this node first, one release at a time",
			ErrIncompatible, describe(peer), peer.Protocol, Protocol, Protocol-1, Protocol+1)
	}
	var missing []string
	for _, f := range active {
		if !peer.Has(f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s lacks feature %s, active in this cluster since every node had it; a node of an older release cannot rejoin: start it with this release",
			ErrIncompatible, describe(peer), strings.Join(missing, ", "))
	}
	return nil
}

func describe(s Stamp) string {
	if s.Release == "" {
		return "the calling node (a release from before release stamps)"
	}
	return "release " + s.Release
}
