package peerauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// Naming the receiver's run, so a restarted node does not depend on
// clocks to tell new requests from replays.
//
// A node that restarted forgets which nonces it accepted, so it refuses
// a request dated before its start (less StartSlack): such a request may
// have been sent to its previous run and replayed. Judged by dates
// alone, that also refused the genuine requests of a node whose clock is
// behind this one's by D, for D after every restart (finding S1 in
// docs/consistency.md: a node restarted with its clock 3 minutes ahead
// served nothing for 3 minutes). So each node's requests also name:
//
//   - the sender (HeaderFrom: its host as the others address it, set by
//     Key.SetSelf); a receiver that accepts such a request learns the
//     sender's current epoch (the epoch of its nonces, random per run);
//   - the receiver's run (HeaderToEpoch: the epoch the sender learned
//     from the receiver's own requests). A request naming the
//     receiver's current epoch was made after the receiver started,
//     whatever the clocks say, since the epoch did not exist before;
//     the start check is skipped for it (the time window of MaxSkew and
//     the window of sequence numbers still apply).
//
// Both are signed together with the request's own signature
// (HeaderExtSignature), so they cannot be added to, or moved onto, a
// request captured earlier; stripping them leaves an ordinary request,
// judged by its date as before. A restarted node learns nothing and
// needs nothing: its own first requests to the others (hello, drive
// and lock calls, votes) name it, and their next requests name its new
// run. Nodes of an older release send neither header and ignore them.

// SetSelf records this node's host as the other nodes address it (the
// host its requests are signed for there), which its requests then name
// in HeaderFrom. Copies of k share it.
func (k Key) SetSelf(host string) {
	if k.st != nil {
		h := strings.ToLower(host)
		k.st.self.Store(&h)
	}
}

// signExt adds the sender and the receiver's run to r, signed with sig.
func (k Key) signExt(r *http.Request, sig string) {
	if k.st == nil {
		return
	}
	var from, to string
	if p := k.st.self.Load(); p != nil {
		from = *p
	}
	if v, ok := k.st.peers.Load(host(r)); ok {
		to = v.(string)
	}
	if from == "" && to == "" {
		return
	}
	if from != "" {
		r.Header.Set(HeaderFrom, from)
	}
	if to != "" {
		r.Header.Set(HeaderToEpoch, to)
	}
	r.Header.Set(HeaderExtSignature, k.extMAC(sig, from, to))
}

// verifyExt checks the extension headers of r (whose own signature sig
// was checked): from is the sender it names ("" none), fresh whether it
// names this node's current run. Extension headers without a valid
// signature refuse the request.
func (k Key) verifyExt(r *http.Request, sig string) (from string, fresh bool, err error) {
	from, to := r.Header.Get(HeaderFrom), r.Header.Get(HeaderToEpoch)
	ext := r.Header.Get(HeaderExtSignature)
	if from == "" && to == "" && ext == "" {
		return "", false, nil
	}
	if !hmac.Equal([]byte(ext), []byte(k.extMAC(sig, from, to))) {
		return "", false, fmt.Errorf("%w: bad signature of %s/%s", ErrUnauthorized, HeaderFrom, HeaderToEpoch)
	}
	return strings.ToLower(from), to != "" && to == k.st.epoch, nil
}

// learn records epoch as the current run of from: the newest request
// accepted decides (a request of a previous run still in flight may set
// it back until the next one; the receiver then judges by date).
func (k Key) learn(from, epoch string) {
	if from == "" {
		return
	}
	if old, ok := k.st.peers.Load(from); ok && old.(string) == epoch {
		return
	}
	k.st.peers.Store(from, epoch)
}

func (k Key) extMAC(sig, from, to string) string {
	m := hmac.New(sha256.New, k.k)
	for _, s := range []string{"ext v1", sig, from, to} {
		m.Write([]byte(s))
		m.Write([]byte{'\n'})
	}
	return hex.EncodeToString(m.Sum(nil))
}
