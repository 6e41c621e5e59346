// Package peerauth authenticates requests between the nodes of one
// cluster (remote drive calls, lock grants, consensus, peer
// notifications). Every node derives the same key from the root
// credentials, so an operator sets nothing new; S3 credentials of
// ordinary users never open the internal endpoints.
//
// A request carries its time, a nonce and an HMAC-SHA256 over method,
// destination host, path, query, time, nonce and (when the sender
// declares it) the body's SHA-256. The receiver refuses a request older
// or newer than MaxSkew, and one whose nonce it has already accepted:
//
//   - The nonce is the sender process's epoch (128 random bits drawn when
//     its Key is derived) and a sequence number counted per destination
//     host. The receiver keeps, per destination and epoch, the highest
//     number seen and which of the Window numbers below it were seen (a
//     sliding window, as IPsec's anti-replay check), so a replay is
//     refused at the cost of a few bits per request and 8 KiB per
//     sender. Requests overtake each other on parallel connections;
//     one that falls Window numbers behind is refused as too old.
//   - The destination is signed, so a request to one node cannot be
//     replayed to another; the node's router checks that the host named
//     is itself.
//   - A receiver forgets what it saw when it restarts; it then refuses
//     every request dated more than StartSlack before its own start (such
//     a request may have been sent to its previous run), unless the
//     request names the receiver's current run: each node's requests
//     name the sender (its host, Key.SetSelf) and the epoch of the
//     receiver's run as the sender learned it from the receiver's own
//     requests, signed with the request (ext.go). A restarted node's
//     first calls to the others teach them its new run, so a node whose
//     clock is ahead of the others' (within MaxSkew) is not refused for
//     as long as it is ahead after a restart, while a request captured
//     before the restart still is.
//
// # Where it is checked
//
// Every internal endpoint (/_shardstore/drive|lock|peer|raft/v1/) calls
// Key.Verify on each request; callers sign with Key.Sign. In front of
// them, the server's router (cmd/shardstore, cluster.go) sends a request
// under /_shardstore/ to the internal handlers only when it carries
// HeaderSignature, and only when ForHost says it was signed for this node
// (else 421 Misdirected Request, before any handler records its nonce).
// S3 credentials never open these paths, and an unsigned request for one
// is an ordinary S3 request (for an invalid bucket name).
//
// What it does not do: encrypt, or sign streamed bodies (shard data
// carries its own bitrot checksums, which detect damage, not forgery).
// Deployments that cross a network they do not fully trust run the nodes
// with TLS (https:// endpoints and a certificates directory), which
// gives both; the HMAC stays on top as the nodes' proof of membership.
package peerauth
