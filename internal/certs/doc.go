// Package certs reads a certificates directory and gives the server and
// its clients their TLS settings.
//
// The directory is laid out as MinIO's, so an operator moving over points
// --certs-dir at the one they have:
//
//	DIR/public.crt          the server's certificate (and any intermediates after it)
//	DIR/private.key         its key: RSA, ECDSA or Ed25519; PKCS#1, PKCS#8 or SEC1;
//	                        encrypted keys need SHARDSTORE_CERT_PASSWD (or MINIO_CERT_PASSWD)
//	DIR/NAME/public.crt     more certificates, one per subdirectory, chosen by the
//	DIR/NAME/private.key    name a client asks for (SNI); the directory's name is free
//	DIR/CAs/*               certificates this process trusts as a client (other
//	                        nodes, and later key servers and event targets), beside
//	                        the system's roots
//
// A Store holds what was read. The server's tls.Config asks the Store for
// the certificate of each new connection, so Reload (on SIGHUP, or when
// Watch sees a file change) takes effect for new connections without a
// restart; a replacement that does not load (a key that does not match,
// a half-written file) is refused with an error and the old material
// keeps serving. Certificates that have expired or are not valid yet are
// loaded with a warning: refusing to start would take down a server whose
// clients may still accept them (or that serves an internal name).
//
// A broken replacement is logged once, and only when it is still broken
// at the next poll (a file is usually caught half-written).
//
// # What was decided, and why
//
// The TLS settings are the same on both ends (ServerConfig,
// ClientConfig):
//
//   - TLS 1.2 and 1.3 only; for 1.2 only ECDHE with AES-GCM or
//     ChaCha20-Poly1305 (forward secrecy, AEAD; 1.3's suites are all
//     AEAD). Go picks AES-GCM where the CPU has AES-NI.
//   - HTTP/1.1 only, by ALPN. S3 clients use HTTP/1.1 and open
//     connections in parallel; HTTP/2 would multiplex large shard and
//     object streams over one connection's flow-control window for no
//     gain (the reason driverpc is HTTP/1.1 too), and adds a second
//     protocol implementation to the attack surface.
//   - The certificate is chosen per handshake from the material loaded
//     last (GetCertificate), so a reload never drops a connection.
//   - Expired certificates are loaded with a warning rather than refused
//     (see above).
//
// # Between nodes
//
// With https:// endpoints every node has a certificates directory: its
// listener serves TLS for S3, the console and the internal calls alike,
// and every connection it opens to another node (driverpc's shard streams
// and calls, dlock batches, raft's upgraded streams, consensus forwards,
// hello and change notices) goes through DialTLS over the routed dialer
// (cluster.Routes): a handshake verified against the system's roots plus
// CAs/, for the host name or IP address the endpoint names (a rerouted
// dial still checks that name). There are no client certificates to
// issue: the peerauth HMAC stays on top of TLS as the nodes' proof of
// membership, and TLS keeps the traffic secret and whole, shard bodies
// included (which the HMAC does not cover). Plain http:// clusters keep
// working, for a network the operator trusts.
//
// NewCA makes a throwaway authority for `cluster demo --tls` and the
// tests.
package certs
